package longterm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/agentmem/agentmem/internal/atomicfile"
)

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
			if err == nil && hasFacts(&p.rec) {
				b, err = withState(b, &p.rec)
			}
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

// withState returns the payload of an added record's frame with the
// record as it stands now (rec): closed by a successor, seen again. The
// frames that told so (the successor's, recSeen) may be gone after the
// compaction; the record's own frame then says it.
func withState(payload []byte, rec *Record) ([]byte, error) {
	typ, body, err := decodeRecord(payload)
	if err != nil {
		return nil, err
	}
	if !isAdd(typ) {
		return nil, fmt.Errorf("%w: frame of %q is not an add", ErrCorrupt, rec.ID)
	}
	a, err := decodeAdd(typ, body)
	if err != nil {
		return nil, err
	}
	vecs := make([][]float32, len(a.children))
	for i := range vecs {
		vecs[i] = a.vecs[i*a.dim : (i+1)*a.dim : (i+1)*a.dim]
	}
	return encodeAdd(nil, rec, a.children, a.dim, vecs), nil
}
