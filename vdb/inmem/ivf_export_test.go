package inmem

import (
	"fmt"
	"slices"
)

// Scanned returns how many rows' codes the IVF's searches have scanned.
func (x *IVF) Scanned() int64 { return x.scanned.Load() }

// TrainNow trains the index from the rows held, whatever their number,
// in the calling goroutine (stopping a training running).
func (x *IVF) TrainNow() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.cancel()
	x.ix = x.train(nil)
}

// HasColumns reports whether the IVF's DB keeps column codes.
func (x *IVF) HasColumns() bool {
	x.db.mu.RLock()
	defer x.db.mu.RUnlock()
	return x.db.cols != nil
}

// SetTrainHook sets the function a training calls with each step it
// reaches. Call it before the writes that start the training.
func (x *IVF) SetTrainHook(f func(step string)) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.trainHook = f
}

// Training reports whether a training runs.
func (x *IVF) Training() bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.job != nil
}

// Index returns the index, for comparisons (nil without one).
func (x *IVF) Index() any {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.ix
}

// CheckIndex checks that the index holds every row of the DB exactly once,
// where its where map says, with the DB's code of the row (WithCodes(Int8))
// and in the list of its nearest centroid. It returns nil without an
// index.
func (x *IVF) CheckIndex() error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	ix, db := x.ix, x.db
	if ix == nil {
		return nil
	}
	db.mu.RLock()
	defer db.mu.RUnlock()
	d := db.dim
	if len(ix.where) != len(db.rows) {
		return fmt.Errorf("where holds %d ids, the DB %d", len(ix.where), len(db.rows))
	}
	rows := 0
	scratch := ix.scratch()
	for li := range ix.lists {
		l := &ix.lists[li]
		if len(l.code) != len(l.ids)*d || len(l.meta) != len(l.ids) {
			return fmt.Errorf("list %d: %d ids, %d code bytes, %d metas", li, len(l.ids), len(l.code), len(l.meta))
		}
		for i, id := range l.ids {
			rows++
			if p, ok := ix.where[id]; !ok || p != (ivfPos{int32(li), int32(i)}) {
				return fmt.Errorf("id %d at list %d row %d, where says %v (%v)", id, li, i, p, ok)
			}
			r, ok := db.rows[id]
			if !ok {
				return fmt.Errorf("id %d is indexed, not stored", id)
			}
			if db.codes == Int8 && (!slices.Equal(l.code[i*d:(i+1)*d], db.code[r*d:(r+1)*d]) || l.meta[i] != db.meta[r]) {
				return fmt.Errorf("id %d: its code in list %d is not its row's", id, li)
			}
			if near := ix.nearest(db.row(r), scratch); near != li {
				return fmt.Errorf("id %d is in list %d, its nearest is %d", id, li, near)
			}
		}
	}
	if rows != len(db.rows) {
		return fmt.Errorf("the lists hold %d rows, the DB %d", rows, len(db.rows))
	}
	return nil
}
