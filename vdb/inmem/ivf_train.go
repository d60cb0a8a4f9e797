package inmem

import (
	"maps"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/agentmem/agentmem/vdb"
)

// The IVF's training: in the background (or in the call, IVFConfig.Sync),
// the rows read a chunk at a time, the rows written meanwhile redone
// before the index is installed (see IVF).

// retrain starts training the index when the database has reached
// MinRows without one or has doubled since it was trained (IVFConfig.Sync:
// trains it), unless a training runs already, and drops the index below
// MinRows/2 (stopping a training). Callers hold x.mu for writing.
func (x *IVF) retrain() {
	n := x.db.Len()
	switch {
	case x.closed:
	case n < x.cfg.MinRows/2:
		x.ix = nil
		x.cancel()
	case x.job != nil:
	case x.ix == nil && n >= x.cfg.MinRows, x.ix != nil && n >= 2*x.ix.trained:
		if x.cfg.Sync {
			x.ix = x.train(nil)
		} else {
			x.start()
		}
	}
	// Searches of a trained index scan its lists, not the DB's column
	// codes (WithColumns): keep those only while the index is off. While
	// a first index is trained, keep them if there are (the exact scans
	// meanwhile use them) but do not build them (Import) for so short a
	// time.
	if x.job == nil || x.ix != nil {
		x.db.mu.Lock()
		x.db.keepColumns(x.ix == nil)
		x.db.mu.Unlock()
	}
}

// start starts a training in the background. Callers hold x.mu for
// writing, with no training running.
func (x *IVF) start() {
	job := &ivfJob{done: make(chan struct{}), dirty: map[int64]struct{}{}}
	x.job = job
	x.jobs.Add(1)
	go func() {
		defer x.jobs.Done()
		defer close(job.done)
		x.install(job, x.train(job))
	}()
}

// install makes ix, trained by job, the index, if job is still the
// training wanted: it redoes the rows written during the training, most
// of them without x.mu (ivfCatchUp), the rest and the swap under it; then
// it starts another training if the database has doubled meanwhile.
func (x *IVF) install(job *ivfJob, ix *ivfIndex) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for round := 0; ix != nil && x.job == job && len(job.dirty) > ivfCatchUp && round < ivfCatchUpRounds; round++ {
		dirty := job.dirty
		job.dirty = map[int64]struct{}{}
		x.mu.Unlock()
		x.redo(ix, dirty)
		x.step("caught up")
		x.mu.Lock()
	}
	if x.job != job {
		return // stopped: by Close, Import, or the rows fell below MinRows/2
	}
	x.job = nil
	if ix != nil && x.redo(ix, job.dirty) {
		x.ix = ix
	}
	x.retrain()
}

// redo puts the rows of ids into ix as the DB holds them now (out of it
// if deleted), in ascending id order, a chunk at a time under the DB's
// read lock. It reports false if the DB is closed.
func (x *IVF) redo(ix *ivfIndex, ids map[int64]struct{}) bool {
	db := x.db
	order := slices.Sorted(maps.Keys(ids))
	scratch := ix.scratch()
	for lo := 0; lo < len(order) || lo == 0; lo += ivfChunkRows {
		db.mu.RLock()
		if db.closed {
			db.mu.RUnlock()
			return false
		}
		ix.update(db, order[lo:min(lo+ivfChunkRows, len(order))], scratch)
		db.mu.RUnlock()
	}
	return true
}

// step calls the test hook, if any, with a training's step.
func (x *IVF) step(s string) {
	if x.trainHook != nil {
		x.trainHook(s)
	}
}

// rowOf returns the row of id, which was at row i when a training took
// its snapshot of the ids, or -1 if it is no longer stored. Callers hold
// mu.
func (db *DB) rowOf(id int64, i int) int {
	if i < len(db.ids) && db.ids[i] == id {
		return i
	}
	if r, ok := db.rows[id]; ok {
		return r
	}
	return -1
}

// chunks calls f(w, lo, hi) for the chunks of ivfChunkRows rows of [0, n)
// across w workers (w is the worker's index), each under the DB's read
// lock. It reports false if stop reported true or the DB was closed
// between chunks.
func (x *IVF) chunks(n, workers int, stop func() bool, f func(w, lo, hi int)) bool {
	db := x.db
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for w := range max(1, min(workers, n/ivfChunkRows)) {
		wg.Go(func() {
			for !failed.Load() {
				lo := int(next.Add(ivfChunkRows) - ivfChunkRows)
				if lo >= n {
					return
				}
				db.mu.RLock()
				if db.closed || stop() {
					db.mu.RUnlock()
					failed.Store(true)
					return
				}
				f(w, lo, min(lo+ivfChunkRows, n))
				db.mu.RUnlock()
			}
		})
	}
	wg.Wait()
	return !failed.Load()
}

// train builds an index of the DB's rows: spherical k-means on a sample
// (strided over the rows, so that the index is a function of the data)
// into about sqrt(lists) groups, then within each group into its share of
// the lists; then every row goes to its nearest list (ivfIndex.nearest).
// The steps run across the DB's workers. It holds the DB's read lock only
// to take its snapshot (the ids and the sample) and then a chunk of rows
// at a time: a row written since the snapshot may be in the index as it
// was, or not at all (its id is the caller's to redo: ivfJob.dirty); a
// row not written is in it once, in its list. It returns nil if job (nil:
// never) is stopped, or if the DB is closed or empty. Callers need not
// hold x.mu.
func (x *IVF) train(job *ivfJob) *ivfIndex {
	stop := func() bool { return job != nil && job.stop.Load() }
	step := x.step
	db := x.db
	d := db.dim
	db.mu.RLock()
	n := len(db.ids)
	if db.closed || n == 0 {
		db.mu.RUnlock()
		return nil
	}
	ids := slices.Clone(db.ids)
	nl := min(n, max(ivfMinLists, min(ivfMaxLists, n/x.cfg.ListRows)))
	m := min(n, nl*ivfSamplePerList)
	sample := make([]float32, m*d)
	for i := range m {
		copy(sample[i*d:(i+1)*d], db.row(int(int64(i)*int64(n)/int64(m))))
	}
	db.mu.RUnlock()
	step("snapshot")
	ng := max(1, int(math.Round(math.Sqrt(float64(nl)))))
	ix := &ivfIndex{trained: n, coarse: kmeans(db.workers, sample, d, ng, stop), first: make([]int, ng+1)}
	// The sample's rows by group, each group's lists by its share.
	asg := make([]int32, m)
	assign(db.workers, asg, ix.coarse, d, func(i int) []float32 { return sample[i*d : (i+1)*d] })
	members := make([][]float32, ng)
	for i, g := range asg {
		members[g] = append(members[g], sample[i*d:(i+1)*d]...)
	}
	for g, mem := range members {
		if stop() {
			return nil
		}
		size := len(mem) / d
		k := min(size, max(1, int(math.Round(float64(nl)*float64(size)/float64(m)))))
		ix.cent = append(ix.cent, kmeans(db.workers, mem, d, k, stop)...)
		ix.first[g+1] = len(ix.cent) / d
	}
	nl = len(ix.cent) / d
	step("trained")
	// Every row to its list (-1: deleted since the snapshot).
	rowAsg := make([]int32, n)
	scratch := make([][]float32, db.workers)
	for w := range scratch {
		scratch[w] = make([]float32, max(ng, nl))
	}
	if !x.chunks(n, db.workers, stop, func(w, lo, hi int) {
		for i := lo; i < hi; i++ {
			if r := db.rowOf(ids[i], i); r >= 0 {
				rowAsg[i] = int32(ix.nearest(db.row(r), scratch[w]))
			} else {
				rowAsg[i] = -1
			}
		}
	}) {
		return nil
	}
	step("assigned")
	ix.lists, ix.where = make([]ivfList, nl), make(map[int64]ivfPos, n)
	count := make([]int, nl)
	for _, c := range rowAsg {
		if c >= 0 {
			count[c]++
		}
	}
	for c := range ix.lists {
		// A little room to grow; appends past it reallocate one list.
		c0 := count[c] + count[c]/8
		ix.lists[c] = ivfList{ids: make([]int64, 0, c0), code: make([]int8, 0, c0*d), meta: make([]rowMeta, 0, c0)}
	}
	// The codes are the DB's when it keeps them.
	if !x.chunks(n, 1, stop, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			c := rowAsg[i]
			r := db.rowOf(ids[i], i)
			if c < 0 || r < 0 {
				continue
			}
			l := &ix.lists[c]
			id := ids[i]
			ix.where[id] = ivfPos{c, int32(len(l.ids))}
			l.ids = append(l.ids, id)
			l.code = l.code[:len(l.code)+d] // within the capacity counted
			dst := l.code[len(l.code)-d:]
			if db.codes == Int8 {
				copy(dst, db.code[r*d:(r+1)*d])
				l.meta = append(l.meta, db.meta[r])
			} else {
				l.meta = append(l.meta, encodeRow(dst, db.row(r)))
			}
		}
	}) {
		return nil
	}
	step("filled")
	return ix
}

// kmeans returns k unit centroids of the m = len(sample)/d rows of sample
// (unit vectors) by spherical k-means: ivfIterations rounds of assigning
// each row to the centroid of largest inner product and setting each
// centroid to its rows' normalised mean. It starts from k rows strided
// over the sample; a centroid left without rows takes another sample row.
// It stops early (returning the centroids so far) when stop reports true.
func kmeans(workers int, sample []float32, d, k int, stop func() bool) []float32 {
	m := len(sample) / d
	cent := make([]float32, k*d)
	for c := range k {
		copy(cent[c*d:(c+1)*d], sample[(c*m/k)*d:])
	}
	if k == 1 && m == 1 {
		return cent
	}
	asg := make([]int32, m)
	sum := make([]float64, k*d)
	count := make([]int, k)
	mean := make([]float32, d)
	for it := range ivfIterations {
		if stop() {
			break // the caller sees it too
		}
		assign(workers, asg, cent, d, func(i int) []float32 { return sample[i*d : (i+1)*d] })
		clear(sum)
		clear(count)
		for i, c := range asg {
			count[c]++
			s := sum[int(c)*d : int(c+1)*d]
			for j, v := range sample[i*d : (i+1)*d] {
				s[j] += float64(v)
			}
		}
		for c := range k {
			dst := cent[c*d : (c+1)*d]
			if count[c] == 0 {
				copy(dst, sample[((c*7919+it*104729)%m)*d:])
				continue
			}
			for j, v := range sum[c*d : (c+1)*d] {
				mean[j] = float32(v)
			}
			if vdb.Normalize(dst, mean) != nil {
				copy(dst, sample[(c*m/k)*d:]) // the rows cancel out
			}
		}
	}
	return cent
}

// assign sets out[i] to the index of the centroid (row of cent) with the
// largest inner product with row(i), across workers goroutines.
func assign(workers int, out []int32, cent []float32, d int, row func(int) []float32) {
	nl := len(cent) / d
	w := max(1, min(workers, len(out)/256))
	var wg sync.WaitGroup
	for p := range w {
		lo, hi := len(out)*p/w, len(out)*(p+1)/w
		wg.Go(func() {
			s0, s1 := make([]float32, nl), make([]float32, nl)
			best := func(s []float32) int32 {
				b := 0
				for i, v := range s {
					if v > s[b] {
						b = i
					}
				}
				return int32(b)
			}
			i := lo
			for ; i+1 < hi; i += 2 { // two rows per pass over the centroids
				dotRows2(s0, s1, row(i), row(i+1), cent)
				out[i], out[i+1] = best(s0), best(s1)
			}
			if i < hi {
				dotRows(s0, row(i), cent)
				out[i] = best(s0)
			}
		})
	}
	wg.Wait()
}
