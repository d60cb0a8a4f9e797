// Package store opens a memory store directory by what its manifest says:
// its kind (short- or long-term), its embedder and its vector backend, so
// that a program needs only the directory (and, for a new store, a
// [Config]). It opens the embedder through embed.Open and the backend
// through vdb.Open, so the drivers must be registered: a program imports
// them for their side effect, e.g.
//
//	import (
//		_ "github.com/agentmem/agentmem/embed/hash"
//		_ "github.com/agentmem/agentmem/vdb/inmem"
//	)
//
// Both kinds share one format (memory/longterm's manifest, lock, CRC-framed
// log and snapshots); a short-term store of the previous release
// (segments.jsonl) is converted by [Migrate].
//
// [OpenURL] is the opener for a program that takes whatever store a user
// names: a store directory, or a PostgreSQL URL (postgres://…, package
// memory/postgres). It refuses any other scheme:// ([CheckTarget]), and
// neither it nor [Verify] puts a URL's password in an error ([Redact]).
package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/internal/faissfmt"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/longterm"
	"github.com/agentmem/agentmem/memory/short"
	"github.com/agentmem/agentmem/vdb"
)

// Kind is a store's memory kind.
type Kind string

// The memory kinds.
const (
	// Short is seed 000's semantic memory (memory/short): one segment is
	// one memory, vector search, top 5 with a score of at least 0.3.
	Short Kind = short.Kind
	// Long is the long-term memory (memory/longterm): records with
	// namespaces, hybrid vector + keyword search over small-to-big chunks.
	Long Kind = longterm.KindLong
)

// ParseKind parses "short" or "long"; anything else is an error wrapping
// memory.ErrInvalidArgument.
func ParseKind(s string) (Kind, error) {
	switch k := Kind(s); k {
	case Short, Long:
		return k, nil
	}
	return "", fmt.Errorf("store: %w: unknown memory kind %q (known: short, long)", memory.ErrInvalidArgument, s)
}

// Defaults for a new store.
const (
	DefaultKind     = Short
	DefaultEmbedder = "hash:512"
	DefaultBackend  = longterm.DefaultBackend
)

// Config says how to open a store. Its zero value opens an existing store
// as it was built.
type Config struct {
	// Kind, Embedder and Backend are the store's when empty, and the
	// defaults (DefaultKind, DefaultEmbedder, DefaultBackend) for a new
	// store. Given, a Kind or Embedder that conflicts with an existing
	// store's is an error that names both; another Backend (a vdb.Open
	// spec, e.g. "faiss:HNSW32,Flat") switches the store to it, rebuilding
	// the vector indexes from the log without re-embedding.
	Kind     Kind
	Embedder string
	Backend  string
	// Create makes a missing store; without it a missing store is an
	// error wrapping fs.ErrNotExist.
	Create bool
	// TopK and MinScore set how many memories Search returns and the
	// minimum cosine similarity of a vector match; 0 means the kind's
	// default (short: 5 and 0.3; long: 5 and 0).
	TopK     int
	MinScore float32
	// Long are extra options for a long-term store (ignored for a short
	// one).
	Long []longterm.Option
	// Logger receives warnings (a repaired log, a snapshot not used); nil
	// means slog.Default().
	Logger *slog.Logger
	// OneShot says the process makes a request or two and exits (the
	// CLI's commands but serve and chat): a PostgreSQL store then reads
	// nothing in the background for later searches
	// (postgres.WithoutBackgroundReads). A store directory ignores it.
	OneShot bool
	// ReadOnly opens the store for reading (longterm.WithReadOnly): no
	// lock, no write of any kind, writes refused. A missing store is an
	// error even with Create.
	ReadOnly bool
	// LockWait is how long a writer waits for a store another writer
	// holds: 0 means longterm.DefaultLockWait, a negative value not at
	// all.
	LockWait time.Duration
	// MaxRecordBytes is the largest record a write takes
	// (longterm.WithMaxRecordBytes); 0 means
	// longterm.DefaultMaxRecordBytes.
	MaxRecordBytes int
	// LockNote is what a writer's lock file says about it beside its
	// process id, for writers that wait for it (longterm.WithLockNote).
	LockNote string
}

// Store is an open memory store of either kind. Its methods are the
// long-term engine's (Add, AddBatch, Get, List, Query, Forget, Snapshot,
// Compact, Close, …) except Search, which is the kind's: vector search with
// the short-term defaults for a short store, the long-term memory's default
// mode for a long one. It implements memory.Memory, memory.Records,
// memory.Querier and memory.Lister, and is safe for concurrent use.
type Store struct {
	*longterm.Memory
	short *short.Memory // nil for a long-term store
	kind  Kind
}

var (
	_ memory.Memory  = (*Store)(nil)
	_ memory.Records = (*Store)(nil)
	_ memory.Querier = (*Store)(nil)
	_ memory.Lister  = (*Store)(nil)
)

// Kind returns the store's memory kind.
func (s *Store) Kind() Kind { return s.kind }

// Search returns the memories most related to question, as the store's
// kind searches. It implements memory.Memory.
func (s *Store) Search(ctx context.Context, question string) ([]memory.Hit, error) {
	if s.short != nil {
		return s.short.Search(ctx, question)
	}
	return s.Memory.Search(ctx, question)
}

// Short returns the short-term face of a short store (SearchN, Segments,
// UpdateBatch), or nil for a long-term store.
func (s *Store) Short() *short.Memory { return s.short }

// Info reads what the store in dir was built with, without opening (or
// locking) it: its kind, embedder and backend spec. A missing store is an
// error wrapping fs.ErrNotExist; a short-term store of the previous release
// one wrapping memory.ErrVersion that names `agentmem migrate`.
func Info(dir string) (kind Kind, embedder, backend string, err error) {
	if err := checkDir(dir, "store.Info"); err != nil {
		return "", "", "", err
	}
	man, err := longterm.ReadManifest(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", "", "", fmt.Errorf("store: no memory store in %s: %w", dir, err)
		}
		return "", "", "", err
	}
	kind, backend = Long, man.Backend
	if man.Kind != "" {
		kind = Kind(man.Kind)
	} else {
		backend = legacyBackend(dir, man.Backend)
	}
	return kind, man.Embedder, backend, nil
}

// legacyBackend returns the backend spec a long-term store of the previous
// release is reopened with: its manifest kept the backend name it was
// created with, the latest snapshot the one it was last used with, and a
// Faiss snapshot's header the index type. (The manifest records the full
// spec from the first open by this release on.)
func legacyBackend(dir, backend string) string {
	snapBackend, files, err := longterm.SnapshotVectorFiles(dir)
	if err != nil || snapBackend == "" {
		return backend
	}
	backend = snapBackend
	if backend != "faiss" {
		return backend
	}
	for _, path := range files { // every namespace has the same index type
		if f, err := os.Open(path); err == nil {
			h, err := faissfmt.ReadHeader(f)
			f.Close()
			if err == nil && h.Factory != "" && h.Factory != faissfmt.DefaultFactory {
				return "faiss:" + h.Factory
			}
		}
		break
	}
	return backend
}

// Open opens the store in dir as cfg says (see [Config]). It opens the
// embedder (embed.Open) and checks that the backend opens (vdb.Open)
// before it touches the directory, so that a backend missing from this
// build (e.g. faiss without the faiss build tag: vdb.ErrUnsupported or
// vdb.ErrUnknownBackend) leaves a new store uncreated and an old one as it
// was.
func Open(ctx context.Context, dir string, cfg Config) (*Store, error) {
	if err := checkDir(dir, "store.Open (OpenURL opens both)"); err != nil {
		return nil, err
	}
	kind, emb, opts, err := resolve(ctx, dir, cfg, false)
	if err != nil {
		return nil, err
	}
	if kind == Short {
		sm, err := short.Open(ctx, dir, emb, opts...)
		if err != nil {
			return nil, err
		}
		return &Store{Memory: sm.Memory, short: sm, kind: Short}, nil
	}
	lt, err := longterm.Open(ctx, dir, emb, opts...)
	if err != nil {
		return nil, err
	}
	return &Store{Memory: lt, kind: Long}, nil
}

// Verify checks the store target names. A store directory is checked
// without writing to it or taking its lock (longterm.Verify); cfg is read
// as Open reads it; one whose manifest is missing or damaged is checked
// file by file (longterm.VerifyFiles). A PostgreSQL store's schema version and manifest are
// checked, then it is opened as a reader opens it and its records and
// chunks are counted (a fuller check is to come). Damage makes the error
// wrap memory.ErrCorrupt (or ErrVersion, ErrEmbedderMismatch); the report
// lists it.
func Verify(ctx context.Context, target string, cfg Config) (VerifyReport, error) {
	if err := CheckTarget(target); err != nil {
		return VerifyReport{VerifyReport: longterm.VerifyReport{Dir: Redact(target)}}, err
	}
	if IsURL(target) {
		return verifyPostgres(ctx, target, cfg)
	}
	cfg.Create, cfg.ReadOnly = false, true
	kind, emb, opts, err := resolve(ctx, target, cfg, false)
	if err != nil && (errors.Is(err, memory.ErrCorrupt) || (errors.Is(err, fs.ErrNotExist) && hasStoreFiles(target))) {
		// The manifest is lost: check the rest without an embedder.
		rep, ferr := longterm.VerifyFiles(ctx, target)
		return VerifyReport{VerifyReport: rep}, ferr
	}
	if err != nil {
		return VerifyReport{VerifyReport: longterm.VerifyReport{Dir: target, Problems: []string{err.Error()}}}, err
	}
	if kind == Short {
		opts = append(short.Options(), opts...)
	}
	rep, err := longterm.Verify(ctx, target, emb, opts...)
	return VerifyReport{VerifyReport: rep}, err
}

// Repair makes a damaged store in dir openable again (longterm.Repair):
// it keeps a copy of every file in dir/repair-TIMESTAMP, keeps every intact
// log record and the snapshot's records the log lost, rewrites a damaged
// or wrong manifest from cfg and rebuilds the snapshot; the report says
// what it dropped. cfg.Embedder, given, is the embedder that built the
// store, whatever the manifest says (that is how a manifest naming the
// wrong one is fixed; one that cannot have made the log's vectors is
// refused). Without a readable manifest, the store is repaired as the kind
// its files show (longterm.InferKind) unless cfg.Kind says; when they do
// not show it, cfg.Kind is required (an error wrapping
// memory.ErrInvalidArgument). The embedder is then cfg.Embedder, else
// DefaultEmbedder, and the backend the snapshot's.
func Repair(ctx context.Context, dir string, cfg Config) (longterm.RepairReport, error) {
	if err := checkDir(dir, "repair"); err != nil {
		return longterm.RepairReport{Dir: Redact(dir)}, err
	}
	cfg.Create, cfg.ReadOnly = false, false
	if _, err := os.Stat(filepath.Join(dir, "memories.log")); err != nil && !Exists(dir) {
		return longterm.RepairReport{Dir: dir}, fmt.Errorf("store: no memory store in %s: %w", dir, fs.ErrNotExist)
	}
	if _, _, _, err := Info(dir); cfg.Kind == "" && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, memory.ErrCorrupt)) {
		// The manifest is lost: the store is repaired as the kind it was,
		// which its files tell, or the caller must say.
		kind, why, ierr := longterm.InferKind(ctx, dir)
		if ierr != nil {
			return longterm.RepairReport{Dir: dir}, ierr
		}
		if kind == "" {
			return longterm.RepairReport{Dir: dir}, fmt.Errorf("store: %w: the manifest of %s is missing or damaged, and its files do not tell whether it is a short- or a long-term store (%s): say which (Config.Kind; agentmem repair --memory short|long)",
				memory.ErrInvalidArgument, dir, why)
		}
		cfg.Kind = Kind(kind)
		if cfg.Logger != nil {
			cfg.Logger.Info("store: repair: the manifest is lost; repairing as a "+kind+"-term store", "dir", dir, "because", why)
		}
	}
	kind, emb, opts, err := resolve(ctx, dir, cfg, true)
	if err != nil {
		return longterm.RepairReport{Dir: dir}, err
	}
	if kind == Short {
		opts = append(short.Options(), opts...)
	}
	return longterm.Repair(ctx, dir, emb, opts...)
}

// resolve works out what Open opens: the store's kind, its embedder and
// the longterm options, from the manifest (if readable) and cfg.
// With repair, a missing or damaged manifest is what Repair rewrites from
// cfg.
func resolve(ctx context.Context, dir string, cfg Config, repair bool) (Kind, embed.Embedder, []longterm.Option, error) {
	kind, embSpec, backend, err := Info(dir)
	switch {
	case repair && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, memory.ErrCorrupt)):
		// The snapshot, if there is one, names the backend.
		kind, embSpec, backend = DefaultKind, DefaultEmbedder, legacyBackend(dir, DefaultBackend)
	case errors.Is(err, fs.ErrNotExist):
		if !cfg.Create || cfg.ReadOnly {
			return "", nil, nil, err
		}
		kind, embSpec, backend = DefaultKind, DefaultEmbedder, DefaultBackend
	case err != nil:
		return "", nil, nil, err
	default:
		if cfg.Kind != "" && cfg.Kind != kind {
			return "", nil, nil, fmt.Errorf("store: %w: %s holds a %s-term memory store, not %s-term", memory.ErrInvalidArgument, dir, kind, cfg.Kind)
		}
	}
	if cfg.Kind != "" {
		if _, err := ParseKind(string(cfg.Kind)); err != nil {
			return "", nil, nil, err
		}
		kind = cfg.Kind
	}
	if cfg.Embedder != "" {
		embSpec = cfg.Embedder
	}
	if cfg.Backend != "" {
		backend = cfg.Backend
	}
	emb, err := embed.Open(embSpec)
	if err != nil {
		return "", nil, nil, fmt.Errorf("store: %w", err)
	}
	if err := probeBackend(ctx, emb, backend); err != nil {
		return "", nil, nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	opts := []longterm.Option{longterm.WithBackend(backend), longterm.WithLogger(logger)}
	if cfg.TopK != 0 {
		opts = append(opts, longterm.WithTopK(cfg.TopK))
	}
	if cfg.MinScore != 0 {
		opts = append(opts, longterm.WithMinScore(cfg.MinScore))
	}
	if cfg.ReadOnly {
		opts = append(opts, longterm.WithReadOnly())
	}
	switch {
	case cfg.LockWait < 0:
		opts = append(opts, longterm.WithLockWait(0))
	case cfg.LockWait > 0:
		opts = append(opts, longterm.WithLockWait(cfg.LockWait))
	}
	if cfg.MaxRecordBytes != 0 {
		opts = append(opts, longterm.WithMaxRecordBytes(cfg.MaxRecordBytes))
	}
	if cfg.LockNote != "" {
		opts = append(opts, longterm.WithLockNote(cfg.LockNote))
	}
	if kind == Short {
		return kind, emb, opts, nil
	}
	return kind, emb, append(opts, cfg.Long...), nil
}

// probeBackend opens (and closes) one index of backend for emb's dimension,
// so that a backend this build lacks is refused before the store is
// touched.
func probeBackend(ctx context.Context, emb embed.Embedder, backend string) error {
	dim, err := embed.Dimension(ctx, emb)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	db, err := vdb.Open(ctx, backend, vdb.Config{Dim: dim})
	if err != nil {
		return redactError(fmt.Errorf("store: backend %q: %w", Redact(backend), err), backend)
	}
	return db.Close()
}

// hasStoreFiles reports whether dir holds a store's log or snapshot (with
// or without its manifest).
func hasStoreFiles(dir string) bool {
	for _, f := range []string{"memories.log", "snapshot.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}

// Exists reports whether dir holds a memory store (of any kind or
// release).
func Exists(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "manifest.json"))
	return err == nil
}
