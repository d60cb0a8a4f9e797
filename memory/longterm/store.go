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
	Vectors   map[string]string `json:"vectors"`           // namespace → file
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
// replayed with the vectors they carry. A snapshot that is missing, stale
// or unreadable is ignored with a warning (the log is the source of truth);
// a torn log tail (the last record cut short by a crash) is copied to
// memories.log.broken, truncated away and logged as a warning; any other
// damage to the log or the manifest is an error wrapping ErrCorrupt (or
// ErrVersion) that names the file and the offset, and leaves the files as
// they were.
//
// Only one Memory may have a store open at a time: Open takes a lock on
// dir/LOCK (flock, released by Close or when the process dies) and fails
// with ErrLocked while another holds it.
func Open(ctx context.Context, dir string, emb embed.Embedder, opts ...Option) (*Memory, error) {
	m, err := New(ctx, emb, opts...)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("longterm: %w", err)
	}
	m.dir = dir
	if m.lock, err = lockDir(dir); err != nil {
		return nil, err
	}
	opened := false
	defer func() {
		if !opened {
			m.lock.Close()
		}
	}()
	mpath := filepath.Join(dir, manifestFile)
	lpath := filepath.Join(dir, logFileName)
	want := Manifest{Format: formatVersion, Embedder: emb.Name(), Dim: m.dim, Backend: m.opts.backend, Kind: m.opts.kind}
	got, err := ReadManifest(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if _, err := os.Stat(lpath); err == nil {
			return nil, fmt.Errorf("%w: %s: missing, but %s exists", ErrCorrupt, mpath, lpath)
		}
		if err := writeManifest(dir, want); err != nil {
			return nil, err
		}
		if m.log, err = createLog(lpath); err != nil {
			return nil, err
		}
		opened = true
		return m, nil
	case err != nil:
		return nil, err
	}
	if got.Embedder != want.Embedder || got.Dim != want.Dim {
		return nil, fmt.Errorf("%w: %s was built by %s (dim %d), opened with %s (dim %d)",
			ErrEmbedderMismatch, dir, got.Embedder, got.Dim, want.Embedder, want.Dim)
	}
	if kind := cmp.Or(got.Kind, KindLong); kind != want.Kind {
		return nil, fmt.Errorf("longterm: %w: %s holds a %s-term memory store, opened as %s-term",
			ErrInvalidOption, dir, kind, want.Kind)
	}
	if got != want {
		// A store of the previous release (no kind) or one that switches
		// backend: record the kind and the spec its indexes are now
		// opened with. The log and the snapshot are untouched; a
		// snapshot of another backend is not loaded.
		if err := writeManifest(dir, want); err != nil {
			return nil, err
		}
	}

	from := int64(0)
	meta, err := m.loadSnapshot(ctx)
	if err != nil {
		m.opts.logger.Warn("longterm: snapshot not used; replaying the whole log", "dir", dir, "err", err)
		m.reset()
		meta = nil
	}
	if meta != nil {
		from = meta.LogOffset
	}
	replay := func(off int64, p []byte) error { return m.replay(ctx, off, p) }
	if m.log, err = m.openLogChecked(lpath, meta, from, replay); err != nil {
		m.closeIndexes()
		return nil, err
	}
	opened = true
	return m, nil
}

// openLogChecked opens the log, replaying from the snapshot's offset when
// the snapshot belongs to this log, and from the start otherwise.
func (m *Memory) openLogChecked(lpath string, meta *snapMeta, from int64, replay func(int64, []byte) error) (*logFile, error) {
	if meta != nil {
		// Check the log id and length before trusting the offset.
		f, err := os.Open(lpath)
		if err != nil {
			return nil, fmt.Errorf("longterm: open log: %w", err)
		}
		hdr := make([]byte, logHeaderSize)
		_, rerr := io.ReadFull(f, hdr)
		st, serr := f.Stat()
		f.Close()
		stale := rerr != nil || serr != nil || binary.LittleEndian.Uint64(hdr[8:]) != meta.LogID || st.Size() < meta.LogOffset
		if stale {
			m.opts.logger.Warn("longterm: snapshot does not match the log; replaying the whole log", "dir", m.dir)
			m.reset()
			from = 0
		}
	}
	return openLog(lpath, from, m.opts.logger, replay)
}

// replay applies one log record during Open.
func (m *Memory) replay(ctx context.Context, off int64, p []byte) error {
	typ, body, err := decodeRecord(p)
	if err != nil {
		return err
	}
	switch typ {
	case recAdd:
		a, err := decodeAdd(body)
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

// reset empties the in-memory indexes (after a failed snapshot load).
func (m *Memory) reset() {
	m.closeIndexes()
	m.parents = make(map[string]*parent)
	m.children = make(map[int64]childRef)
	m.vecs = make(map[string]*semantic.Vectors)
	m.nextChild = 0
	m.applied = 0
}

func (m *Memory) closeIndexes() {
	for _, db := range m.vecs {
		_ = db.Close()
	}
}

// loadSnapshot loads the latest snapshot, if any (nil, nil when there is
// none). On error the memory's state is undefined and must be reset.
func (m *Memory) loadSnapshot(ctx context.Context) (*snapMeta, error) {
	data, err := os.ReadFile(filepath.Join(m.dir, snapMetaFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var meta snapMeta
	if err := json.Unmarshal(data, &meta); err != nil {
		return nil, fmt.Errorf("%s: %w", snapMetaFile, err)
	}
	if meta.Format != formatVersion {
		return nil, fmt.Errorf("%s: format %d", snapMetaFile, meta.Format)
	}
	if !sameBackend(meta.Backend, m.opts.backend) {
		return nil, fmt.Errorf("snapshot backend %q, memory uses %q", meta.Backend, m.opts.backend)
	}
	// The three parts are independent: load them in parallel (the
	// vector files are the largest, the parents need the most decoding).
	m.parents = make(map[string]*parent, meta.Records)
	m.children = make(map[int64]childRef, meta.Children)
	dbs := make(map[string]*semantic.Vectors, len(meta.Vectors))
	for ns := range meta.Vectors {
		db, err := m.namespaceDB(ctx, ns)
		if err != nil {
			return nil, err
		}
		dbs[ns] = db
	}
	var wg sync.WaitGroup
	// A snapshot of the previous release also holds a keyword file (a BM25
	// index over chunks); the keyword path now indexes whole records per
	// namespace, built from the parents on first use, so it is not read.
	errs := make([]error, 1+len(dbs))
	wg.Go(func() { errs[0] = m.loadParents(filepath.Join(m.dir, meta.Parents)) })
	i := 1
	for ns, db := range dbs {
		slot := &errs[i]
		wg.Go(func() { *slot = db.Load(ctx, filepath.Join(m.dir, meta.Vectors[ns])) })
		i++
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// Cross-check: every child is in a vector index.
	nvec := 0
	for _, db := range m.vecs {
		nvec += db.Len()
	}
	if nvec != len(m.children) || len(m.parents) != meta.Records {
		return nil, fmt.Errorf("snapshot inconsistent: %d children, %d vectors, %d/%d records",
			len(m.children), nvec, len(m.parents), meta.Records)
	}
	m.nextChild = max(m.nextChild, meta.NextChild)
	return &meta, nil
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

func (m *Memory) loadParents(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if len(data) < len(parentsMagic)+2+4 || string(data[:len(parentsMagic)]) != parentsMagic {
		return fmt.Errorf("%s: not a parents snapshot", path)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return fmt.Errorf("%s: checksum mismatch", path)
	}
	if v := binary.LittleEndian.Uint16(body[len(parentsMagic):]); v != parentsVersion {
		return fmt.Errorf("%s: version %d", path, v)
	}
	d := &decoder{b: body[len(parentsMagic)+2:]}
	n := d.count(1)
	for i := 0; i < n && d.err == nil; i++ {
		size := d.uvarint()
		off := d.varint()
		rec := d.bytes(size)
		if d.err != nil {
			break
		}
		typ, b, err := decodeRecord(rec)
		if err != nil || typ != recAdd {
			return fmt.Errorf("%s: record %d: bad type", path, i)
		}
		a, err := decodeAdd(b)
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
// loads them instead of replaying the log. Close does this too when
// anything changed. It needs a vector backend that implements
// vdb.Persister (inmem and faiss do); otherwise the error wraps
// errors.ErrUnsupported and Open keeps replaying the log.
func (m *Memory) Snapshot(ctx context.Context) error {
	m.wmu.Lock()
	defer m.wmu.Unlock()
	m.mu.RLock()
	closed := m.closed
	m.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	return m.snapshotLocked(ctx)
}

// snapshotLocked writes a snapshot. m.wmu must be held (so nothing changes);
// searches go on meanwhile.
func (m *Memory) snapshotLocked(ctx context.Context) error {
	if m.log == nil {
		return ErrNotDurable
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
// new log is written beside the old one and renamed over it: a crash
// leaves one or the other.
func (m *Memory) Compact(ctx context.Context) error {
	m.wmu.Lock()
	defer m.wmu.Unlock()
	m.mu.RLock()
	closed := m.closed
	m.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	if m.log == nil {
		return ErrNotDurable
	}
	lpath := filepath.Join(m.dir, logFileName)
	tmp := lpath + ".compact"
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
	if err := os.Rename(tmp, lpath); err != nil {
		return fail(err)
	}
	if err := atomicfile.SyncDir(m.dir); err != nil {
		return fmt.Errorf("longterm: compact: %w", err)
	}
	nl.path = lpath
	m.mu.Lock()
	for i, p := range live {
		p.off = newOff[i]
	}
	old := m.log
	m.log = nl
	m.mu.Unlock()
	old.close()
	return m.snapshotLocked(ctx)
}

// Sync makes every acknowledged write durable (needed only with
// WithoutSync).
func (m *Memory) Sync() error {
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
