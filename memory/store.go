package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/internal/atomicfile"
	"github.com/agentmem/agentmem/semantic"
	"github.com/agentmem/agentmem/vdb"
)

// Files in a ShortMemory store directory.
const (
	// ManifestFile describes the store: format version, embedder, dimension,
	// backend and the last vector snapshot. It is replaced atomically.
	ManifestFile = "manifest.json"
	// SegmentsFile is the append-only JSONL log of segments (text and time)
	// and deletions: the store's source of truth.
	SegmentsFile = "segments.jsonl"
	// lockFile is held (flock) while the store is open, where supported.
	lockFile = "lock"

	manifestFormat = "agentmem.short"
	// FormatVersion is the store format this build writes and the newest it
	// reads.
	FormatVersion = 1
)

// Manifest is the content of a store directory's manifest.json.
type Manifest struct {
	Format   string `json:"format"`   // always "agentmem.short"
	Version  int    `json:"version"`  // FormatVersion when written by this build
	Embedder string `json:"embedder"` // the embedder's Name, e.g. "hash:512"
	Dim      int    `json:"dim"`
	Backend  string `json:"backend"` // e.g. "inmem"
	// Snapshot is the last vector snapshot, nil if none was written.
	Snapshot *Snapshot `json:"snapshot,omitempty"`
}

// Snapshot records a vector database snapshot in a store directory. Log
// records after LogOffset are replayed into it on open.
type Snapshot struct {
	File      string    `json:"file"`       // relative to the store directory
	LogOffset int64     `json:"log_offset"` // bytes of segments.jsonl it covers
	Vectors   int       `json:"vectors"`
	Time      time.Time `json:"time"`
}

// ReadManifest reads the manifest of the store directory dir. A missing
// manifest is an error wrapping os.ErrNotExist; a newer format one wrapping
// [ErrFormatVersion]; an undecodable one [ErrCorruptStore].
func ReadManifest(dir string) (Manifest, error) {
	path := filepath.Join(dir, ManifestFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return Manifest{}, fmt.Errorf("memory: %w", err)
	}
	// Check the version before anything else, so that a newer format
	// gets a version error rather than a confusing decode error.
	var head struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Manifest{}, fmt.Errorf("%w: %s: %v", ErrCorruptStore, path, err)
	}
	if head.Format != manifestFormat {
		return Manifest{}, fmt.Errorf("%w: %s: format %q, want %q", ErrCorruptStore, path, head.Format, manifestFormat)
	}
	if head.Version > FormatVersion {
		return Manifest{}, fmt.Errorf("%w: %s has format version %d, this build reads up to %d (upgrade agentmem)", ErrFormatVersion, path, head.Version, FormatVersion)
	}
	if head.Version < 1 {
		return Manifest{}, fmt.Errorf("%w: %s: bad format version %d", ErrCorruptStore, path, head.Version)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return Manifest{}, fmt.Errorf("%w: %s: %v", ErrCorruptStore, path, err)
	}
	if m.Embedder == "" || m.Dim <= 0 || m.Backend == "" {
		return Manifest{}, fmt.Errorf("%w: %s: embedder, dim and backend are required", ErrCorruptStore, path)
	}
	return m, nil
}

func writeManifest(dir string, m Manifest) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("memory: encode manifest: %w", err)
	}
	return atomicfile.WriteBytes(filepath.Join(dir, ManifestFile), append(data, '\n'))
}

// store is a ShortMemory's directory.
type store struct {
	dir    string
	log    *semantic.JSONLIndexMap[semantic.Entry[segment]]
	lock   *os.File
	logger *slog.Logger

	mu  sync.Mutex // guards man; serialises flushes
	man Manifest
}

func (st *store) checkpoint() int64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.man.Snapshot == nil {
		return 0
	}
	return st.man.Snapshot.LogOffset
}

var backendName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// OpenShort opens the ShortMemory kept in directory dir, creating it if
// needed:
//
//	dir/manifest.json   format version, embedder name, dim, backend, last snapshot
//	dir/segments.jsonl  every segment (text and time) and deletion, one JSON line each
//	dir/vectors.NAME    the vector database snapshot of backend NAME
//
// A store built with another embedder (name or dimension) is an error
// wrapping [ErrEmbedderMismatch] that names both; one of a newer format
// wraps [ErrFormatVersion]. A torn last line in the log (a crash in the
// middle of a write) is repaired with a warning.
//
// Opening loads the vector snapshot and re-embeds only the segments logged
// after it; without a usable snapshot (none yet, another backend, or a
// damaged file: logged as a warning) every segment is re-embedded. Only one
// process may have a store open at a time.
func OpenShort(ctx context.Context, dir string, emb embed.Embedder, opts ...Option) (*ShortMemory, error) {
	cfg, err := newConfig(append(opts, WithStore(dir)))
	if err != nil {
		return nil, err
	}
	return openShort(ctx, emb, cfg)
}

func openShort(ctx context.Context, emb embed.Embedder, cfg config) (_ *ShortMemory, err error) {
	if emb == nil {
		return nil, fmt.Errorf("%w: nil embedder", ErrInvalidOption)
	}
	if !backendName.MatchString(cfg.backend) {
		return nil, fmt.Errorf("%w: backend name %q (letters, digits, '.', '_', '-')", ErrInvalidOption, cfg.backend)
	}
	dir := cfg.store
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	st := &store{dir: dir, lock: lock, logger: cfg.logger}
	defer func() {
		if err != nil {
			st.unlock()
		}
	}()

	man, err := ReadManifest(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if fi, serr := os.Stat(filepath.Join(dir, SegmentsFile)); serr == nil && fi.Size() > 0 {
			return nil, fmt.Errorf("%w: %s has %s but no %s", ErrCorruptStore, dir, SegmentsFile, ManifestFile)
		}
		dim, err := embed.Dimension(ctx, emb)
		if err != nil {
			return nil, fmt.Errorf("memory: %w", err)
		}
		man = Manifest{Format: manifestFormat, Version: FormatVersion, Embedder: emb.Name(), Dim: dim, Backend: cfg.backend}
		if err := writeManifest(dir, man); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	default:
		if man.Embedder != emb.Name() {
			return nil, fmt.Errorf("%w: %s was built with %s (dim %d), not %s: open it with %s or use another directory",
				ErrEmbedderMismatch, dir, man.Embedder, man.Dim, emb.Name(), man.Embedder)
		}
		dim, err := embed.Dimension(ctx, emb)
		if err != nil {
			return nil, fmt.Errorf("memory: %w", err)
		}
		if dim != man.Dim {
			return nil, fmt.Errorf("%w: %s was built with %s at dim %d, the embedder now makes dim %d",
				ErrEmbedderMismatch, dir, man.Embedder, man.Dim, dim)
		}
	}
	st.man = man

	st.log, err = semantic.OpenJSONLIndexMap[semantic.Entry[segment]](filepath.Join(dir, SegmentsFile), semantic.WithLogger(cfg.logger))
	if err != nil {
		if errors.Is(err, semantic.ErrCorrupt) {
			return nil, fmt.Errorf("%w: %w", ErrCorruptStore, err)
		}
		return nil, fmt.Errorf("memory: %w", err)
	}
	defer func() {
		if err != nil {
			st.log.Close()
		}
	}()

	m, err := st.restore(ctx, emb, cfg)
	if err != nil {
		return nil, err
	}
	return &ShortMemory{cfg: cfg, dim: man.Dim, m: m, store: st}, nil
}

// restore builds the semantic map over the log: from the snapshot plus the
// records logged after it when possible, else by re-embedding everything.
func (st *store) restore(ctx context.Context, emb embed.Embedder, cfg config) (*semantic.SemanticMap[segment], error) {
	snap := st.man.Snapshot
	if snap != nil && st.man.Backend == cfg.backend {
		m, err := st.fromSnapshot(ctx, emb, cfg, snap)
		if err == nil {
			return m, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		st.logger.Warn("memory: vector snapshot unusable; re-embedding every segment",
			"store", st.dir, "file", snap.File, "err", err)
	}
	if st.man.Backend != cfg.backend || snap != nil {
		// The snapshot is stale or of another backend: forget it first, so
		// that a crash during the rebuild cannot bring it back.
		if st.man.Backend != cfg.backend {
			st.logger.Info("memory: store switches vector backend; re-embedding every segment",
				"store", st.dir, "from", st.man.Backend, "to", cfg.backend)
		}
		st.man.Backend, st.man.Snapshot = cfg.backend, nil
		if err := writeManifest(st.dir, st.man); err != nil {
			return nil, err
		}
		if snap != nil {
			os.Remove(filepath.Join(st.dir, snap.File))
		}
	}
	db, err := openDB(cfg, st.man.Dim)
	if err != nil {
		return nil, err
	}
	m, err := semantic.NewMap[segment](emb, db, st.log)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("memory: %w", err)
	}
	if err := m.Rebuild(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("memory: re-embed %s: %w", st.dir, err)
	}
	return m, nil
}

func (st *store) fromSnapshot(ctx context.Context, emb embed.Embedder, cfg config, snap *Snapshot) (*semantic.SemanticMap[segment], error) {
	db, err := openDB(cfg, st.man.Dim)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*semantic.SemanticMap[segment], error) {
		db.Close()
		return nil, err
	}
	if err := vdb.Load(ctx, db, filepath.Join(st.dir, snap.File)); err != nil {
		return fail(err)
	}
	ops, err := st.log.ReadSince(snap.LogOffset)
	if err != nil {
		return fail(err)
	}
	m, err := semantic.NewMap[segment](emb, db, st.log)
	if err != nil {
		return fail(err)
	}
	if err := m.Replay(ctx, ops); err != nil {
		return fail(err)
	}
	if db.Len() != st.log.Len() {
		return fail(fmt.Errorf("snapshot plus log hold %d vectors for %d segments", db.Len(), st.log.Len()))
	}
	return m, nil
}

// flush snapshots db when the log has grown since the last snapshot.
func (st *store) flush(ctx context.Context, db vdb.VectorDatabase) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	// Records logged while Save runs may or may not be in the snapshot;
	// replaying them on open is harmless, so the offset is taken first.
	off := st.log.Offset()
	if snap := st.man.Snapshot; (snap != nil && snap.LogOffset == off) || (snap == nil && off == 0) {
		return nil
	}
	file := "vectors." + st.man.Backend
	if err := vdb.Save(ctx, db, filepath.Join(st.dir, file)); err != nil {
		if errors.Is(err, errors.ErrUnsupported) {
			return nil // segments are re-embedded on open instead
		}
		return wrapClosed(fmt.Errorf("memory: snapshot %s: %w", st.dir, err))
	}
	man := st.man
	man.Snapshot = &Snapshot{File: file, LogOffset: off, Vectors: db.Len(), Time: time.Now().UTC()}
	if err := writeManifest(st.dir, man); err != nil {
		return err
	}
	st.man = man
	return nil
}

func (st *store) unlock() error {
	if st.lock == nil {
		return nil
	}
	err := unlockDir(st.lock)
	st.lock = nil
	return err
}
