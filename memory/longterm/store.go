package longterm

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/internal/atomicfile"
	"github.com/agentmem/agentmem/internal/filelock"
)

// Files in a store directory.
const (
	manifestFile = "manifest.json"
	logFileName  = "memories.log"
	snapMetaFile = "snapshot.json"
	snapPrefix   = "snap-"
	lockFileName = "LOCK"
)

// Open opens the store in dir, creating the directory and an empty store if
// needed, and returns a memory whose writes are durable.
//
// The store remembers the embedder that built it: opening it with an
// embedder of another Name or dimension is an error wrapping
// ErrEmbedderMismatch. Nothing is re-embedded on open: the indexes are
// loaded from the latest snapshot and the log records written after it are
// replayed with the vectors they carry.
//
// Damage is never repaired by deleting evidence. The one thing Open
// repairs is a torn log tail — the last record cut short by a crash, or
// trailing zeros — which it copies to memories.log.broken, truncates away
// and logs as a warning. Any other damage — a record or frame whose
// checksum fails, a log shorter than the snapshot says it was or from
// another log, a missing or damaged manifest, log or snapshot file — is an
// error wrapping ErrCorrupt (or ErrVersion) that names the file (and the
// offset), and leaves every file of the store as it was; [Repair] (`agentmem
// repair`) rebuilds what can be rebuilt and keeps a backup. A snapshot
// written by another vector backend is not loaded: the indexes are rebuilt
// from the log, without re-embedding. A writer's Open removes the files of
// snapshots and compactions that a crash interrupted.
//
// Only one writer may have a store open at a time: Open takes a lock on
// dir/LOCK (flock, released by Close or when the process dies), waits up to
// WithLockWait (DefaultLockWait) for another writer to close it, and then
// fails with ErrLocked. A memory opened WithReadOnly takes no lock.
func Open(ctx context.Context, dir string, emb embed.Embedder, opts ...Option) (*Memory, error) {
	for attempt := 0; ; attempt++ {
		m, err := New(ctx, emb, opts...)
		if err != nil {
			return nil, err
		}
		if !m.opts.store.readOnly {
			if err := m.open(ctx, dir); err != nil {
				return nil, err
			}
			return m, nil
		}
		// A reader takes no lock, so a writer may replace the snapshot
		// or compact the log while it reads: try again when that
		// happened.
		before := storeState(dir)
		err = m.open(ctx, dir)
		if err == nil {
			return m, nil
		}
		if attempt >= 4 || storeState(dir) == before || ctx.Err() != nil {
			return nil, err
		}
	}
}

// storeState identifies the snapshot and the log of dir, so that a reader
// notices a writer's snapshot or compaction.
func storeState(dir string) string {
	meta, _ := os.ReadFile(filepath.Join(dir, snapMetaFile))
	id, _, _ := logIdentity(filepath.Join(dir, logFileName))
	return fmt.Sprintf("%x/%s", id, meta)
}

// open does Open's work on a memory made by New.
func (m *Memory) open(ctx context.Context, dir string) (err error) {
	ro := m.opts.store.readOnly
	m.dir = dir
	if !ro && m.lock == nil { // Repair holds the lock already
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("longterm: %w", err)
		}
		if m.lock, err = lockDir(ctx, dir, m.opts.store.lockWait, m.opts.logger); err != nil {
			return err
		}
		if note := m.opts.store.lockNote; note != "" {
			_ = filelock.SetNote(m.lock, note) // a courtesy to waiters
		}
		defer func() {
			if err != nil {
				m.lock.Close()
				m.lock = nil
			}
		}()
	}
	lpath := filepath.Join(dir, logFileName)
	want := Manifest{Format: formatVersion, Embedder: m.emb.Name(), Dim: m.dim, Backend: m.opts.backend, Kind: m.opts.kind}
	got, err := ReadManifest(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if st, serr := os.Stat(lpath); serr == nil && st.Size() > logHeaderSize {
			return fmt.Errorf("%w: %s: missing, but %s holds records", ErrCorrupt, filepath.Join(dir, manifestFile), lpath)
		}
		if ro {
			return fmt.Errorf("longterm: no store in %s: %w", dir, err)
		}
		return m.create(dir, want)
	case err != nil:
		return err
	}
	want.Format = got.Format
	m.format = got.Format
	if got.Embedder != want.Embedder || got.Dim != want.Dim {
		return fmt.Errorf("%w: %s was built by %s (dim %d), opened with %s (dim %d)",
			ErrEmbedderMismatch, dir, got.Embedder, got.Dim, want.Embedder, want.Dim)
	}
	if kind := cmp.Or(got.Kind, KindLong); kind != want.Kind {
		return fmt.Errorf("longterm: %w: %s holds a %s-term memory store, opened as %s-term",
			ErrInvalidOption, dir, kind, want.Kind)
	}
	meta, loaded, err := m.loadSnapshot(ctx)
	if err != nil {
		m.closeIndexes()
		return err
	}
	from := int64(0)
	if loaded {
		from = meta.LogOffset
	}
	logPath, err := m.resolveLog(meta)
	if err != nil {
		m.closeIndexes()
		return err
	}
	replay := func(off int64, p []byte) error { return m.replay(ctx, off, p) }
	if m.log, err = openLog(logPath, from, !ro, m.opts.logger, replay); err != nil {
		m.closeIndexes()
		return err
	}
	if ro {
		return nil
	}
	// Everything checked: finish what a crash interrupted and record the
	// manifest's upgrade.
	if logPath != lpath {
		if err := os.Rename(logPath, lpath); err != nil {
			m.log.close()
			m.closeIndexes()
			return fmt.Errorf("longterm: finish compaction: %w", err)
		}
		m.log.path = lpath
		if err := atomicfile.SyncDir(dir); err != nil {
			m.log.close()
			m.closeIndexes()
			return fmt.Errorf("longterm: finish compaction: %w", err)
		}
		m.opts.logger.Warn("longterm: finished an interrupted compaction", "dir", dir)
	}
	if got != want {
		// A store of the previous release (no kind) or one that switches
		// backend: record the kind and the spec its indexes are now
		// opened with.
		if err := writeManifest(dir, want); err != nil {
			m.log.close()
			m.closeIndexes()
			return err
		}
	}
	m.removeLeftovers(meta)
	return nil
}

// create makes an empty store in dir: the log first, then the manifest, so
// that a crash in between leaves an empty log without a manifest, which
// the next Open makes again. (A log with records but no manifest is
// damage, refused before create is called.)
func (m *Memory) create(dir string, man Manifest) error {
	lpath := filepath.Join(dir, logFileName)
	if _, err := os.Stat(lpath); err == nil {
		if err := os.Remove(lpath); err != nil {
			return fmt.Errorf("longterm: %w", err)
		}
	}
	var err error
	if m.log, err = createLog(lpath); err != nil {
		return err
	}
	m.format = man.Format
	if err := writeManifest(dir, man); err != nil {
		m.log.close()
		return err
	}
	return nil
}

// logIdentity reads the id in the header of the log at path and its size.
func logIdentity(path string) (id uint64, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	hdr := make([]byte, logHeaderSize)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return 0, 0, fmt.Errorf("%w: %s: offset 0: short header", ErrCorrupt, path)
	}
	st, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	return binary.LittleEndian.Uint64(hdr[8:]), st.Size(), nil
}

// resolveLog returns the log to open and checks it against the snapshot
// metadata (loaded or not): the snapshot must have been taken from this
// log, and the log must be at least as long as the snapshot says it was —
// otherwise records the snapshot holds would be lost, and that is damage,
// not something to rebuild from. A snapshot of the log a compaction left
// beside memories.log (stopped after its snapshot, before its rename) names
// that log, which is then the one to open.
func (m *Memory) resolveLog(meta *snapMeta) (string, error) {
	lpath := filepath.Join(m.dir, logFileName)
	id, size, err := logIdentity(lpath)
	if meta == nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%w: %s: missing, but %s describes a store", ErrCorrupt, lpath, manifestFile)
		}
		return lpath, nil // openLog reports a bad header
	}
	if err == nil && id == meta.LogID {
		if size < meta.LogOffset {
			return "", fmt.Errorf("%w: %s: %d bytes, but %s (%d records) was taken when it held %d: the log lost records (agentmem repair rebuilds the store from what is left, keeping a backup)",
				ErrCorrupt, lpath, size, filepath.Join(m.dir, snapMetaFile), meta.Records, meta.LogOffset)
		}
		return lpath, nil
	}
	cpath := lpath + compactSuffix
	if cid, csize, cerr := logIdentity(cpath); cerr == nil && cid == meta.LogID && csize >= meta.LogOffset {
		return cpath, nil
	}
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%w: %s: missing, but %s describes a store", ErrCorrupt, lpath, manifestFile)
		}
		return "", err
	}
	return "", fmt.Errorf("%w: %s: log %016x, but %s was taken from log %016x (agentmem repair rebuilds the store from the log, keeping a backup)",
		ErrCorrupt, lpath, id, filepath.Join(m.dir, snapMetaFile), meta.LogID)
}

// compactSuffix names the log Compact writes beside memories.log.
const compactSuffix = ".compact"

// removeLeftovers removes what interrupted writes left in the store
// directory: atomicfile's temporary files, an unfinished compaction's log
// and the files of snapshots other than meta's (a snapshot stopped before
// its snapshot.json was written, or older generations a crash kept from
// being removed). m.lock must be held. Failures only leave the files.
func (m *Memory) removeLeftovers(meta *snapMeta) {
	keep := ""
	if meta != nil {
		keep = fmt.Sprintf("%s%06d.", snapPrefix, meta.Gen)
	}
	entries, err := os.ReadDir(m.dir)
	if err != nil {
		return
	}
	var n int
	var bytes int64
	for _, e := range entries {
		name := e.Name()
		if !isLeftover(name, keep) || e.IsDir() {
			continue
		}
		if info, err := e.Info(); err == nil {
			bytes += info.Size()
		}
		if os.Remove(filepath.Join(m.dir, name)) == nil {
			n++
		}
	}
	if n > 0 {
		m.opts.logger.Info("longterm: removed files of interrupted writes", "dir", m.dir, "files", n, "bytes", bytes)
	}
}

// replay applies one log record during Open.
func (m *Memory) replay(ctx context.Context, off int64, p []byte) error {
	typ, body, err := decodeRecord(p)
	if err != nil {
		return err
	}
	switch typ {
	case recAdd, recAddSparse, recAddFacts, recAddSparseFacts:
		a, err := decodeAdd(typ, body)
		if err != nil {
			return err
		}
		if a.dim != m.dim {
			return fmt.Errorf("%w: record %q has vectors of dim %d, store has %d", ErrCorrupt, a.rec.ID, a.dim, m.dim)
		}
		vecs := make([][]float32, len(a.children))
		for i := range vecs {
			vecs[i] = a.vecs[i*a.dim : (i+1)*a.dim : (i+1)*a.dim]
		}
		if err := m.apply(ctx, a, vecs, off); err != nil {
			return err
		}
	case recForget:
		id, err := decodeForget(body)
		if err != nil {
			return err
		}
		if p := m.parents[id]; p != nil {
			if err := m.remove(ctx, p); err != nil {
				return err
			}
		}
	case recSeen:
		id, t, err := decodeSeen(body)
		if err != nil {
			return err
		}
		m.seen(id, t)
	}
	m.applied++
	return nil
}

func (m *Memory) closeIndexes() {
	for _, db := range m.vecs {
		_ = db.Close()
	}
}
