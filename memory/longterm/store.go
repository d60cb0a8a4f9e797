package longterm

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/internal/atomicfile"
	"github.com/agentmem/agentmem/semantic"
	"github.com/agentmem/agentmem/vdb"
)

// Files in a store directory.
const (
	manifestFile = "manifest.json"
	logFileName  = "memories.log"
	snapMetaFile = "snapshot.json"
	snapPrefix   = "snap-"
	lockFileName = "LOCK"
)

// formatVersion is the version of the store layout written into the
// manifest and the snapshot metadata.
const formatVersion = 1

// Manifest is the content of a store directory's manifest.json. Both
// kinds of store (memory/short and memory/longterm) have this format.
type Manifest struct {
	Format   int    `json:"format"`   // the store layout version
	Embedder string `json:"embedder"` // the embedder's Name, e.g. "hash:512"
	Dim      int    `json:"dim"`
	// Backend is the vector backend spec the store's indexes are opened
	// with (vdb.Open), e.g. "inmem" or "faiss:HNSW32,Flat". A store
	// reopened with another spec rebuilds its vector indexes from the log
	// and records the new spec. (The previous release recorded only the
	// backend name the store was created with.)
	Backend string `json:"backend"`
	// Kind is the memory kind, "long" or "short"; empty in a store written
	// by the previous release, which made only long-term stores in this
	// format.
	Kind string `json:"kind,omitempty"`
}

// legacyShortFormat is the "format" of the previous release's short-term
// store manifest (segments.jsonl beside it); store.Migrate converts it.
const legacyShortFormat = `"agentmem.short"`

// ReadManifest reads the manifest of the store directory dir without
// opening (or locking) the store, e.g. to learn which embedder to open it
// with. A missing manifest is an error wrapping os.ErrNotExist; one of a
// newer format version, or a short-term store of the previous release that
// must be migrated first (`agentmem migrate`, store.Migrate), [ErrVersion];
// an undecodable one [ErrCorrupt].
func ReadManifest(dir string) (Manifest, error) {
	path := filepath.Join(dir, manifestFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return Manifest{}, fmt.Errorf("longterm: read manifest: %w", err)
	}
	// Check the format before anything else, so that a newer version gets
	// a version error rather than a confusing decode error.
	var head struct {
		Format json.RawMessage `json:"format"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Manifest{}, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	var format int
	if len(head.Format) == 0 {
		return Manifest{}, fmt.Errorf("%w: %s: no format version", ErrCorrupt, path)
	}
	if string(head.Format) == legacyShortFormat {
		return Manifest{}, fmt.Errorf("%w: %s is a short-term store of the previous release: convert it with `agentmem migrate --store %s` (or store.Migrate)",
			ErrVersion, dir, dir)
	}
	if err := json.Unmarshal(head.Format, &format); err != nil {
		return Manifest{}, fmt.Errorf("%w: %s: format %s is not a memory store's", ErrCorrupt, path, head.Format)
	}
	if format != formatVersion {
		return Manifest{}, fmt.Errorf("%w: %s: format %d, this build reads %d", ErrVersion, path, format, formatVersion)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return Manifest{}, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	if m.Embedder == "" || m.Dim <= 0 {
		return Manifest{}, fmt.Errorf("%w: %s: embedder and dim are required", ErrCorrupt, path)
	}
	return m, nil
}

func writeManifest(dir string, m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("longterm: encode manifest: %w", err)
	}
	if err := atomicfile.WriteBytes(filepath.Join(dir, manifestFile), append(b, '\n')); err != nil {
		return fmt.Errorf("longterm: write manifest: %w", err)
	}
	return nil
}

type snapMeta struct {
	Format    int               `json:"format"`
	Gen       int64             `json:"gen"`
	LogID     uint64            `json:"log_id"`
	LogOffset int64             `json:"log_offset"`
	NextChild int64             `json:"next_child"`
	Backend   string            `json:"backend"`
	Records   int               `json:"records"`
	Children  int               `json:"children"`
	Parents   string            `json:"parents"`
	Keyword   string            `json:"keyword,omitempty"` // the previous release's chunk index; no longer written or read
	Turns     string            `json:"turns,omitempty"`   // the keyword path's turn index (long-term stores); a cache
	Vectors   map[string]string `json:"vectors"`           // namespace → file
	// Checksum is the CRC-32C of the metadata's JSON encoding with
	// Checksum 0 (absent in the previous release's snapshots).
	Checksum uint32 `json:"checksum,omitempty"`
}

// sum returns the checksum of meta (its Checksum field left out).
func (meta snapMeta) sum() uint32 {
	meta.Checksum = 0
	b, _ := json.Marshal(meta)
	return crc32.Checksum(b, castagnoli)
}

// SnapshotVectorFiles returns the backend that wrote the latest snapshot in
// the store directory dir and the paths of that snapshot's vector-index
// files, by namespace, without opening (or locking) the store; with no
// snapshot it returns "", nil, nil. It is for tools that inspect the files,
// e.g. to reopen a Faiss store with the index type it was built with (the
// manifest does not record it). The files belong to the store: do not
// modify them.
func SnapshotVectorFiles(dir string) (backend string, files map[string]string, err error) {
	path := filepath.Join(dir, snapMetaFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("longterm: %w", err)
	}
	var meta snapMeta
	if err := json.Unmarshal(data, &meta); err != nil {
		return "", nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	if meta.Format != formatVersion {
		return "", nil, fmt.Errorf("%w: %s: format %d, this build reads %d", ErrVersion, path, meta.Format, formatVersion)
	}
	files = make(map[string]string, len(meta.Vectors))
	for ns, f := range meta.Vectors {
		files[ns] = filepath.Join(dir, f)
	}
	return meta.Backend, files, nil
}

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
	case recAdd, recAddSparse:
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
	}
	m.applied++
	return nil
}

func (m *Memory) closeIndexes() {
	for _, db := range m.vecs {
		_ = db.Close()
	}
}

// loadSnapshot reads snapshot.json and, if the snapshot was written by the
// memory's backend, loads it (loaded true). It returns nil without a
// snapshot. A snapshot that cannot be read or does not add up is an error
// wrapping ErrCorrupt that names the file; the memory's state is then
// undefined.
func (m *Memory) loadSnapshot(ctx context.Context) (meta *snapMeta, loaded bool, err error) {
	mpath := filepath.Join(m.dir, snapMetaFile)
	data, err := os.ReadFile(mpath)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("longterm: %w", err)
	}
	meta = new(snapMeta)
	if err := json.Unmarshal(data, meta); err != nil {
		return nil, false, fmt.Errorf("%w: %s: %v", ErrCorrupt, mpath, err)
	}
	if meta.Format != formatVersion {
		return nil, false, fmt.Errorf("%w: %s: format %d, this build reads %d", ErrVersion, mpath, meta.Format, formatVersion)
	}
	if meta.Checksum != 0 && meta.Checksum != meta.sum() {
		return nil, false, fmt.Errorf("%w: %s: checksum mismatch", ErrCorrupt, mpath)
	}
	if meta.Parents == "" || meta.LogOffset < logHeaderSize || meta.Records < 0 {
		return nil, false, fmt.Errorf("%w: %s: incomplete (parents %q, log offset %d)", ErrCorrupt, mpath, meta.Parents, meta.LogOffset)
	}
	if !sameBackend(meta.Backend, m.opts.backend) {
		m.opts.logger.Info("longterm: snapshot of another backend not used; rebuilding the indexes from the log",
			"dir", m.dir, "snapshot_backend", meta.Backend, "backend", m.opts.backend)
		return meta, false, nil
	}
	if err := m.loadSnapshotFiles(ctx, meta); err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		if errors.Is(err, ErrVersion) || errors.Is(err, ErrCorrupt) {
			return nil, false, fmt.Errorf("longterm: snapshot %s: %w", mpath, err)
		}
		return nil, false, fmt.Errorf("%w: snapshot %s: %w", ErrCorrupt, mpath, err)
	}
	return meta, true, nil
}

func (m *Memory) loadSnapshotFiles(ctx context.Context, meta *snapMeta) error {
	// The three parts are independent: load them in parallel (the
	// vector files are the largest, the parents need the most decoding).
	m.parents = make(map[string]*parent, meta.Records)
	m.children = make(map[int64]childRef, meta.Children)
	dbs := make(map[string]*semantic.Vectors, len(meta.Vectors))
	for ns := range meta.Vectors {
		db, err := m.namespaceDB(ctx, ns)
		if err != nil {
			return err
		}
		dbs[ns] = db
	}
	var wg sync.WaitGroup
	// A snapshot of the previous release also holds a keyword file (a BM25
	// index over chunks); the keyword path now indexes whole records per
	// namespace (the turn index, loaded after the parents), so it is not
	// read.
	errs := make([]error, 1+len(dbs))
	wg.Go(func() {
		if errs[0] = m.loadParents(filepath.Join(m.dir, meta.Parents)); errs[0] == nil {
			m.loadTurnsCache(meta)
		}
	})
	i := 1
	for ns, db := range dbs {
		slot := &errs[i]
		wg.Go(func() { *slot = db.Load(ctx, filepath.Join(m.dir, meta.Vectors[ns])) })
		i++
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	// Cross-check: every child is in a vector index.
	nvec := 0
	for _, db := range m.vecs {
		nvec += db.Len()
	}
	if nvec != len(m.children) || len(m.parents) != meta.Records || len(m.children) != meta.Children {
		return fmt.Errorf("%w: snapshot inconsistent: %d children (%d recorded), %d vectors, %d records (%d recorded)",
			ErrCorrupt, len(m.children), meta.Children, nvec, len(m.parents), meta.Records)
	}
	m.nextChild = max(m.nextChild, meta.NextChild)
	return nil
}

// loadTurnsCache loads the snapshot's turn index, if it has one, once its
// parents are loaded (while the vectors load). The file is a cache: if it
// cannot be used, the index is built from the records on first use.
//
// A snapshot that lacks a namespace's turn index (one of the previous
// release, an automatic one, a damaged file) is made whole by this
// process's Close if it writes (turnsLeft).
func (m *Memory) loadTurnsCache(meta *snapMeta) {
	if m.opts.kind != KindLong || len(m.parents) == 0 {
		return
	}
	if meta.Turns != "" {
		if err := m.loadTurns(filepath.Join(m.dir, meta.Turns)); err != nil {
			m.turnsUnused = fmt.Errorf("%s: %w", meta.Turns, err)
			m.opts.logger.Warn("longterm: snapshot's turn index not used; it is built from the records on first search",
				"dir", m.dir, "file", meta.Turns, "err", err)
		}
	}
	ti := m.turnIdx()
	m.turnsLeft = len(ti.builtNamespaces()) < len(ti.namespaces(m))
}

// sameBackend reports whether a snapshot written by backend snap can be
// loaded into indexes opened with spec. The previous release recorded
// only the backend name ("faiss"); such a snapshot is loaded by the
// backend of that name, which checks the file itself.
func sameBackend(snap, spec string) bool {
	if snap == spec {
		return true
	}
	name, _ := vdb.ParseSpec(spec)
	return !strings.Contains(snap, ":") && snap == name
}

const (
	parentsMagic   = "AMPAR\x00"
	parentsVersion = 1
)

// writeParents writes every parent (without vectors) with its log offset,
// followed by a CRC32C of everything before it.
func (m *Memory) writeParents(w *bufio.Writer) error {
	crc := crc32.New(castagnoli)
	mw := io.MultiWriter(w, crc)
	hdr := make([]byte, 0, 32)
	hdr = append(hdr, parentsMagic...)
	hdr = binary.LittleEndian.AppendUint16(hdr, parentsVersion)
	hdr = binary.AppendUvarint(hdr, uint64(len(m.parents)))
	if _, err := mw.Write(hdr); err != nil {
		return err
	}
	var buf []byte
	for _, p := range m.parents {
		buf = encodeAdd(buf[:0], &p.rec, p.children, 0, nil)
		var pre [2 * binary.MaxVarintLen64]byte
		n := binary.PutUvarint(pre[:], uint64(len(buf)))
		n += binary.PutVarint(pre[n:], p.off)
		if _, err := mw.Write(pre[:n]); err != nil {
			return err
		}
		if _, err := mw.Write(buf); err != nil {
			return err
		}
	}
	return binary.Write(w, binary.LittleEndian, crc.Sum32())
}

// checkedFile checks a snapshot file of ours: its magic, the CRC-32C of
// everything before its last four bytes (which hold it), and the format
// version (a uint16 after the magic); it returns the bytes between the
// version and the checksum.
func checkedFile(data []byte, magic string, version uint16) ([]byte, error) {
	if len(data) < len(magic)+2+4 || string(data[:len(magic)]) != magic {
		return nil, fmt.Errorf("not a %q file", magic)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, errors.New("checksum mismatch")
	}
	if v := binary.LittleEndian.Uint16(body[len(magic):]); v != version {
		return nil, fmt.Errorf("%w: version %d, this build reads %d", ErrVersion, v, version)
	}
	return body[len(magic)+2:], nil
}

func (m *Memory) loadParents(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	body, err := checkedFile(data, parentsMagic, parentsVersion)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	d := &decoder{b: body}
	n := d.count(1)
	for i := 0; i < n && d.err == nil; i++ {
		size := d.uvarint()
		off := d.varint()
		rec := d.bytes(size)
		if d.err != nil {
			break
		}
		typ, b, err := decodeRecord(rec)
		if err != nil || !isAdd(typ) {
			return fmt.Errorf("%s: record %d: bad type", path, i)
		}
		a, err := decodeAdd(typ, b)
		if err != nil {
			return fmt.Errorf("%s: record %d: %w", path, i, err)
		}
		p := &parent{rec: a.rec, children: a.children, off: off}
		m.parents[p.rec.ID] = p
		for j, c := range p.children {
			m.children[c.id] = childRef{p: p, i: j}
			m.nextChild = max(m.nextChild, c.id+1)
		}
	}
	if d.err != nil {
		return fmt.Errorf("%s: %w", path, d.err)
	}
	return nil
}

// Snapshot writes the indexes to the store directory so that the next Open
// loads them instead of replaying the log, and the keyword index of every
// namespace (building those no search has built yet) so that the first
// search after Open does not build it. Close does this too when enough
// changed. It needs a vector backend that implements
// vdb.Persister (inmem and faiss do); otherwise the error wraps
// errors.ErrUnsupported and Open keeps replaying the log.
func (m *Memory) Snapshot(ctx context.Context) error {
	if err := m.lockOpenWritable(); err != nil {
		return err
	}
	defer m.wmu.Unlock()
	return m.snapshotLocked(ctx, true)
}

// lockOpenWritable takes m.wmu for a change to a writable, open store. It
// fails with ErrReadOnly or ErrClosed (holding nothing); on success the
// caller must unlock m.wmu.
func (m *Memory) lockOpenWritable() error {
	if err := m.writable(); err != nil {
		return err
	}
	m.wmu.Lock()
	m.mu.RLock()
	closed := m.closed
	m.mu.RUnlock()
	if closed {
		m.wmu.Unlock()
		return ErrClosed
	}
	return nil
}

// snapshotLocked writes a snapshot. m.wmu must be held (so nothing changes);
// searches go on meanwhile. With allTurns it builds the turn index of every
// namespace that no search has built yet, to keep it; otherwise (an
// automatic snapshot, in a writer's path) it keeps the built ones only.
func (m *Memory) snapshotLocked(ctx context.Context, allTurns bool) error {
	if m.log == nil {
		return ErrNotDurable
	}
	if err := m.Err(); err != nil {
		return err
	}
	for _, db := range m.vecs {
		if !db.CanSave() {
			return fmt.Errorf("longterm: snapshot: backend %s: %w", db.Spec(), errors.ErrUnsupported)
		}
	}
	// The snapshot must never cover records that are not durable.
	if err := m.log.sync(); err != nil {
		return err
	}
	prev, _ := os.ReadFile(filepath.Join(m.dir, snapMetaFile))
	var old snapMeta
	_ = json.Unmarshal(prev, &old)
	gen := old.Gen + 1
	name := func(kind string) string { return fmt.Sprintf("%s%06d.%s", snapPrefix, gen, kind) }
	meta := snapMeta{
		Format: formatVersion, Gen: gen, LogID: m.log.id, LogOffset: m.log.size,
		NextChild: m.nextChild, Backend: m.opts.backend, Records: len(m.parents), Children: len(m.children),
		Parents: name("parents"), Vectors: map[string]string{},
	}
	err := atomicfile.Write(filepath.Join(m.dir, meta.Parents), m.writeParents)
	if err != nil {
		return fmt.Errorf("longterm: snapshot: %w", err)
	}
	if m.opts.kind == KindLong { // short-term stores search by vector only
		// Every namespace that holds records, or only the built ones.
		ti := m.turnIdx()
		all := ti.namespaces(m)
		nss := all
		if !allTurns {
			nss = ti.builtNamespaces()
		}
		m.turnsLeft = len(nss) < len(all)
		if len(nss) > 0 {
			meta.Turns = name("turns")
			err := atomicfile.Write(filepath.Join(m.dir, meta.Turns), func(w *bufio.Writer) error { return m.writeTurns(w, nss) })
			if err != nil {
				return fmt.Errorf("longterm: snapshot: %w", err)
			}
		}
	}
	i := 0
	for ns, db := range m.vecs {
		if db.Len() == 0 {
			continue
		}
		f := name(fmt.Sprintf("vec%d", i))
		i++
		if err := db.Save(ctx, filepath.Join(m.dir, f)); err != nil {
			return fmt.Errorf("longterm: snapshot: %w", err)
		}
		meta.Vectors[ns] = f
	}
	meta.Checksum = meta.sum()
	b, _ := json.MarshalIndent(meta, "", "  ")
	if err := atomicfile.WriteBytes(filepath.Join(m.dir, snapMetaFile), append(b, '\n')); err != nil {
		return fmt.Errorf("longterm: snapshot: %w", err)
	}
	m.applied = 0
	// Remove older generations; failures only leave garbage behind.
	cur := fmt.Sprintf("%s%06d.", snapPrefix, gen)
	entries, _ := os.ReadDir(m.dir)
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, snapPrefix) && !strings.HasPrefix(n, cur) {
			_ = os.Remove(filepath.Join(m.dir, n))
		}
	}
	return nil
}

// Compact rewrites the log without forgotten and replaced records, so that
// what Forget removed is gone from disk, and writes a fresh snapshot. The
// new log is written beside the old one (memories.log.compact), its
// snapshot is written, and then it is renamed over the old one: a crash
// leaves the old log with its snapshot, or the new log (which Open then
// renames into place) with its own.
func (m *Memory) Compact(ctx context.Context) error {
	if err := m.lockOpenWritable(); err != nil {
		return err
	}
	defer m.wmu.Unlock()
	if m.log == nil {
		return ErrNotDurable
	}
	lpath := filepath.Join(m.dir, logFileName)
	tmp := lpath + compactSuffix
	_ = os.Remove(tmp)
	nl, err := createLog(tmp)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		nl.close()
		os.Remove(tmp)
		return fmt.Errorf("longterm: compact: %w", err)
	}
	// Live records in log order.
	live := make([]*parent, 0, len(m.parents))
	for _, p := range m.parents {
		live = append(live, p)
	}
	sortByOffset(live)
	newOff := make([]int64, len(live))
	const batch = 256
	for start := 0; start < len(live); start += batch {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		end := min(start+batch, len(live))
		payloads := make([][]byte, 0, end-start)
		for _, p := range live[start:end] {
			b, err := m.log.readFrame(p.off)
			if err != nil {
				return fail(err)
			}
			payloads = append(payloads, b)
		}
		offs, err := nl.append(payloads, false)
		if err != nil {
			return fail(err)
		}
		copy(newOff[start:], offs)
	}
	if err := nl.sync(); err != nil {
		return fail(err)
	}
	canSave := true
	for _, db := range m.vecs {
		canSave = canSave && db.CanSave()
	}
	if !canSave {
		// No snapshot can name the new log: remove the old one's
		// snapshot metadata first, so that no snapshot names a log
		// that is gone.
		if err := os.Remove(filepath.Join(m.dir, snapMetaFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fail(err)
		}
	}
	oldOff := make([]int64, len(live))
	m.mu.Lock()
	for i, p := range live {
		oldOff[i] = p.off
		p.off = newOff[i]
	}
	old := m.log
	m.log = nl
	m.mu.Unlock()
	if canSave {
		if err := m.snapshotLocked(ctx, true); err != nil {
			m.mu.Lock()
			for i, p := range live {
				p.off = oldOff[i]
			}
			m.log = old
			m.mu.Unlock()
			return fail(err)
		}
	}
	// From here on the new log is the store's (Open finds it beside the
	// old one if the rename does not happen).
	old.close()
	if err := os.Rename(tmp, lpath); err != nil {
		return fmt.Errorf("longterm: compact: %w", err)
	}
	nl.path = lpath
	if err := atomicfile.SyncDir(m.dir); err != nil {
		return fmt.Errorf("longterm: compact: %w", err)
	}
	return nil
}

// Sync makes every acknowledged write durable (needed only with
// WithoutSync).
func (m *Memory) Sync() error {
	if err := m.writable(); err != nil {
		return err
	}
	m.wmu.Lock()
	defer m.wmu.Unlock()
	if m.log == nil {
		return nil
	}
	return m.log.sync()
}

func sortByOffset(ps []*parent) {
	slices.SortFunc(ps, func(a, b *parent) int { return cmp.Compare(a.off, b.off) })
}
