package longterm

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/semantic"
	"github.com/agentmem/agentmem/vdb"
)

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
	m.nsRecords = nil
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
			msg := "longterm: snapshot's turn index not used; it is built from the records on first search"
			if errors.Is(err, keyword.ErrTokenizer) {
				// Not damage: a build whose tokenizer cuts terms
				// differently (an upgrade) opened the store, and every
				// open builds the index again until one that writes
				// closes it: say how that ends.
				msg = "longterm: snapshot's turn index not used: another version's tokenizer cut its terms; it is built " +
					"from the records on first search, at each open until a command that writes (add, import, serve) closes the store"
			}
			m.opts.logger.Warn(msg, "dir", m.dir, "file", meta.Turns, "err", err)
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
		m.added(p)
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
