package longterm

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentmem/agentmem/internal/atomicfile"
)

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

// autoSnapshotShare: an automatic snapshot is due when the records
// applied since the last one reach WithSnapshotEvery's count and also
// 1/autoSnapshotShare of the store's records. A snapshot rewrites every
// record and vector (O(store)), so a fixed count alone made a growing
// store's ingest quadratic: loading 1M memories rewrote the store 50
// times at the default count. With the share, the snapshots' sizes grow
// geometrically (each at least 4/3 of the previous one past 4× the
// count), their total stays within about 4× the final store, and the tail
// a killed process leaves to replay is at most a quarter of the store.
const autoSnapshotShare = 4

// snapshotDue reports whether an automatic snapshot is due after m.applied
// records (see autoSnapshotShare).
func (m *Memory) snapshotDue() bool {
	every := m.opts.snapshotEvery
	return every > 0 && m.applied >= every && m.applied*autoSnapshotShare >= len(m.parents)
}

// maybeSnapshot writes a snapshot when one is due (snapshotDue), so that a
// process that is killed rather than closed does not leave a long log tail
// to replay (and re-tokenise) on the next Open. m.wmu must be held;
// searches go on. A failure is logged, not returned: the records are safe
// in the log.
func (m *Memory) maybeSnapshot(ctx context.Context) {
	if m.log == nil || !m.snapshotDue() {
		return
	}
	if err := m.snapshotLocked(ctx, false); err != nil {
		m.opts.logger.Warn("longterm: automatic snapshot failed", "dir", m.dir, "err", err)
	}
}
