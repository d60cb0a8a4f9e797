package inmem

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/agentmem/agentmem/vdb"
)

var (
	_ vdb.VectorDatabase   = (*IVF)(nil)
	_ vdb.Persister        = (*IVF)(nil)
	_ vdb.MinScoreSearcher = (*IVF)(nil)
	_ vdb.BatchSearcher    = (*IVF)(nil)
)

// Defaults of [IVFConfig].
const (
	// DefaultIVFMinRows is the size from which an [IVF] searches its
	// inverted lists: below it every search is the exact scan. It is 2¹⁸
	// (262,144), above a long-term namespace of 100k memories (about 200k
	// vectors), whose exact int8 scan reads 100 MB at dimension 512.
	DefaultIVFMinRows = 1 << 18
	// DefaultIVFListRows is the average number of rows of a list: a
	// database of n rows has about n/DefaultIVFListRows lists (at least
	// ivfMinLists). Training and assigning cost n·lists·dim; a search
	// pays lists·dim to rank the lists, then scans the rows of the lists it
	// probes.
	DefaultIVFListRows = 4096
	// DefaultIVFProbes is how many lists a search scans: about 65k rows
	// with the default list size, whatever the database's size.
	DefaultIVFProbes = 16
)

// ivf tuning constants.
const (
	ivfMinLists      = 16
	ivfMaxLists      = 4096
	ivfSamplePerList = 48 // k-means sample: rows per list
	ivfIterations    = 8  // k-means iterations
	ivfAssignGroups  = 2  // groups a row's list is chosen among
	// ivfRowsPerK: a search for k results scans its lists only if they
	// hold at least ivfRowsPerK·k rows; a deeper one is the exact scan.
	ivfRowsPerK = 8
	// ivfParallelRows is the number of rows to scan from which a search
	// splits its lists across the workers.
	ivfParallelRows = 32 << 10
	// ivfChunkRows is how many rows a training assigns or copies under
	// one hold of the DB's read lock: a write waits for about that much
	// work, not for the whole training.
	ivfChunkRows = 256
	// ivfCatchUp: a trained index is installed under the write lock once
	// at most this many rows written during training are left to redo;
	// more are redone first without it (at most ivfCatchUpRounds times).
	ivfCatchUp       = 1024
	ivfCatchUpRounds = 4
)

// IVFConfig configures an [IVF]. Zero fields take the defaults.
type IVFConfig struct {
	// MinRows is the size from which searches use the index
	// (DefaultIVFMinRows); below half of it the index is dropped.
	MinRows int
	// ListRows is the average number of rows per list
	// (DefaultIVFListRows).
	ListRows int
	// Probes is how many lists a search scans (DefaultIVFProbes). Probes
	// ≥ the number of lists scans them all: the exact result.
	Probes int
	// Sync trains the index in the Add, Delete or Import that triggers
	// it, under the write lock, instead of in the background: the index
	// is there when the call returns, and searches wait meanwhile.
	Sync bool
}

func (c IVFConfig) withDefaults() IVFConfig {
	if c.MinRows <= 0 {
		c.MinRows = DefaultIVFMinRows
	}
	if c.ListRows <= 0 {
		c.ListRows = DefaultIVFListRows
	}
	if c.Probes <= 0 {
		c.Probes = DefaultIVFProbes
	}
	return c
}

// IVF is a [DB] with an approximate candidate stage for large databases:
// an inverted-file index (IVF) of the int8 codes. From [IVFConfig.MinRows]
// rows, spherical k-means on a sample of the rows gives about
// n/ListRows centroids and every row goes to the list of its nearest one;
// a search ranks the centroids by their inner product with the query and
// scans the codes of the Probes best lists only, rescoring in float32 every
// row whose code bound could reach the current k-th score (as [WithCodes]'
// scan does). So the scores returned are exact, bit for bit the plain
// scan's for those rows, and the result is the exact top k of the rows in
// the lists probed: only rows of lists not probed can be missed.
//
// Below MinRows every search is the exact scan of the DB, and so is a
// search for more than 1/ivfRowsPerK of the rows the lists probed hold, and
// one that found fewer than k results without a minimum score. Batch
// searches ([IVF.SearchBatch]) are always exact.
//
// The index is kept up to date by Add and Delete (a new row goes to the
// list of its nearest centroid), trained when the database reaches MinRows
// and trained again whenever it has doubled since (so the cost of training
// is O(1) per row added), and dropped below MinRows/2. Import trains it
// anew: the index is not persisted, the export format is the DB's. So an
// IVF whose index has grown by insertion since it was trained may answer a
// little differently after a round trip through Export and Import (a
// different index, the same rule: exact top k of the lists probed).
//
// Training runs in the background (unless [IVFConfig.Sync]): at 1M rows of
// dimension 512 it takes seconds of CPU (see the README's figures), during
// which searches go on, exact while there is no index yet, on the previous
// index (kept up to date) when retraining, and so do writes: the rows
// written meanwhile are redone in the new index before it is installed,
// atomically, under the write lock. The training reads the rows a chunk at
// a time under the DB's read lock, so a write waits for one chunk, not
// the training. Add and Import return without waiting for it;
// [IVF.WaitTrained] waits; Close stops it. Given the same rows in the same
// order and no writes during training, the index is the same, whether
// trained in the background or not. The index holds its own copy of the
// codes, grouped by list (d+16 bytes a row, 0.28× the float32 rows at
// d=512); while it is retrained, the previous index is kept too.
//
// An IVF is safe for concurrent use: searches share a read lock, Add,
// Delete and Import take the write lock.
type IVF struct {
	db  *DB
	cfg IVFConfig

	// mu guards ix, job and closed; held for writing by Add, Delete,
	// Import and the installing of a trained index.
	mu     sync.RWMutex
	ix     *ivfIndex // nil below MinRows, and until the first training ends
	job    *ivfJob   // the training running, if any
	closed bool
	jobs   sync.WaitGroup // the trainings' goroutines, for Close

	// scanned counts the rows whose codes searches scanned, for tests
	// and benchmarks.
	scanned atomic.Int64
	// trainHook, if set (tests), is called by a training with each step
	// it reaches: "snapshot", "trained", "assigned", "filled", "caught up"
	// (a round of redoing rows written meanwhile without x.mu).
	trainHook func(step string)
}

// ivfJob is a training running in the background.
type ivfJob struct {
	stop atomic.Bool   // set when its index is no longer wanted
	done chan struct{} // closed when its goroutine has finished
	// dirty holds the ids written (added, replaced or deleted) since the
	// training started: their rows in its index are redone before it is
	// installed. Guarded by IVF.mu.
	dirty map[int64]struct{}
}

// ivfIndex is a trained index: the centroids and the lists.
type ivfIndex struct {
	trained int // rows when it was trained
	// coarse are the groups' centroids (groups×dim); group g's lists are
	// first[g] to first[g+1]-1 (see nearest).
	coarse []float32
	first  []int
	cent   []float32 // len(lists)×dim, unit vectors
	lists  []ivfList
	where  map[int64]ivfPos
}

// ivfList is one inverted list: its rows' ids, int8 codes (row-major) and
// code metadata.
type ivfList struct {
	ids  []int64
	code []int8
	meta []rowMeta
}

// ivfPos is where a row is in the index.
type ivfPos struct{ list, i int32 }

// NewIVF returns an empty IVF for vectors of dimension dim; opts configure
// its exact [DB] (see [New]).
func NewIVF(dim int, cfg IVFConfig, opts ...Option) (*IVF, error) {
	db, err := New(dim, opts...)
	if err != nil {
		return nil, err
	}
	if queryMax(dim) < 1 {
		return nil, fmt.Errorf("inmem: dimension %d too large for an IVF's int8 codes", dim)
	}
	return &IVF{db: db, cfg: cfg.withDefaults()}, nil
}

// Config returns the IVF's configuration, defaults filled in.
func (x *IVF) Config() IVFConfig { return x.cfg }

// Dim returns the vector dimension.
func (x *IVF) Dim() int { return x.db.Dim() }

// Len returns the number of stored vectors.
func (x *IVF) Len() int { return x.db.Len() }

// Lists returns the number of inverted lists, 0 when searches are exact
// (below MinRows).
func (x *IVF) Lists() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.ix == nil {
		return 0
	}
	return len(x.ix.lists)
}

// Close stops a training running (and waits for its goroutine to end),
// then releases the vectors and the index.
func (x *IVF) Close() error {
	x.mu.Lock()
	x.closed = true
	x.cancel()
	x.ix = nil
	x.mu.Unlock()
	x.jobs.Wait()
	return x.db.Close()
}

// WaitTrained waits until no training of the index runs (one started in
// the background by Add, Delete or Import, or by the end of another whose
// database had doubled meanwhile), or until ctx is done. Past MinRows the
// index is then trained, unless writes have started another training
// since.
func (x *IVF) WaitTrained(ctx context.Context) error {
	for {
		x.mu.RLock()
		job := x.job
		x.mu.RUnlock()
		if job == nil {
			return nil
		}
		select {
		case <-job.done:
		case <-ctx.Done():
			return fmt.Errorf("inmem: wait for the index: %w", ctx.Err())
		}
	}
}

// record notes ids as written for the training running, if any. Callers
// hold x.mu for writing.
func (x *IVF) record(ids []int64) {
	if x.job == nil {
		return
	}
	for _, id := range ids {
		x.job.dirty[id] = struct{}{}
	}
}

// cancel stops the training running, if any: its index will not be
// installed. Callers hold x.mu for writing.
func (x *IVF) cancel() {
	if x.job != nil {
		x.job.stop.Store(true)
		x.job = nil
	}
}

// Add is [DB.Add], keeping the index up to date (and training it when the
// database reaches MinRows, or has doubled since it was trained).
func (x *IVF) Add(ctx context.Context, ids []int64, vecs [][]float32) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	err := x.db.Add(ctx, ids, vecs)
	x.record(ids)
	// A failed Add may have stored part of the batch (DB.Add): index
	// what the DB holds under ids either way.
	if ix := x.ix; ix != nil {
		x.db.mu.RLock()
		ix.update(x.db, ids, ix.scratch())
		x.db.mu.RUnlock()
	}
	x.retrain()
	return err
}

// Delete is [DB.Delete], keeping the index up to date.
func (x *IVF) Delete(ctx context.Context, ids ...int64) (int, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	n, err := x.db.Delete(ctx, ids...)
	x.record(ids)
	if x.ix != nil {
		for _, id := range ids {
			x.ix.remove(id, x.db.dim)
		}
	}
	x.retrain()
	return n, err
}

// Export writes the DB's vectors ([DB.Export]); the index is not saved.
func (x *IVF) Export(ctx context.Context, w io.Writer) error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.db.Export(ctx, w)
}

// Import is [DB.Import]; the index is trained anew, in the background
// (IVFConfig.Sync: before Import returns), if the database holds MinRows
// rows, and the DB's column codes (WithColumns) are built only if it does
// not: a trained index searches its own codes. The stream is read without
// the IVF's lock: searches and writes wait only while the rows are
// swapped in (writes made meanwhile are lost to the import, as [DB.Import]'s).
func (x *IVF) Import(ctx context.Context, r io.Reader) error {
	s, err := x.db.loadStream(ctx, r)
	if err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.cancel() // its rows are gone
	if err := x.db.installStream(s, false); err != nil {
		return err
	}
	x.ix = nil
	x.retrain()
	return nil
}

// SearchBatch is [DB.SearchBatch]: exact.
func (x *IVF) SearchBatch(ctx context.Context, queries [][]float32, k int) ([][]vdb.Result, error) {
	return x.db.SearchBatch(ctx, queries, k)
}

// Search returns about the k stored vectors most similar to query (see
// [IVF] for when it is exact), best first, ties by ascending ID. Errors
// are [DB.Search]'s.
func (x *IVF) Search(ctx context.Context, query []float32, k int) ([]vdb.Result, error) {
	return x.SearchMinScore(ctx, query, k, float32(math.Inf(-1)))
}

// SearchMinScore is [IVF.Search] restricted to results with Score ≥
// minScore (NaN: no cut-off).
func (x *IVF) SearchMinScore(ctx context.Context, query []float32, k int, minScore float32) ([]vdb.Result, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	ix := x.ix
	if ix == nil || k <= 0 || len(query) != x.db.dim || ctx.Err() != nil {
		return x.db.SearchMinScore(ctx, query, k, minScore) // exact, or its error
	}
	if math.IsNaN(float64(minScore)) {
		minScore = float32(math.Inf(-1))
	}
	q := make([]float32, len(query))
	if err := vdb.Normalize(q, query); err != nil {
		return nil, fmt.Errorf("inmem: query: %w", err)
	}
	res, n, err := x.search(ctx, ix, q, k, minScore)
	if err != nil {
		return nil, err
	}
	if res == nil || len(res) < min(k, n) && math.IsInf(float64(minScore), -1) {
		return x.db.SearchMinScore(ctx, query, k, minScore)
	}
	return res, nil
}

// search scans the lists of the Probes centroids nearest to q (normalised)
// and returns the top k of their rows with the number of rows in the
// database, or nil results when the lists hold too few rows for k. Callers
// hold x.mu for reading.
func (x *IVF) search(ctx context.Context, ix *ivfIndex, q []float32, k int, minScore float32) ([]vdb.Result, int, error) {
	db := x.db
	d := db.dim
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, 0, vdb.ErrClosed
	}
	n := len(db.ids)
	probe := ix.probe(q, min(x.cfg.Probes, len(ix.lists)), d)
	rows := 0
	for _, l := range probe {
		rows += len(ix.lists[l].ids)
	}
	if rows < ivfRowsPerK*k {
		return nil, n, nil
	}
	var qc qcode
	var qu []uint8
	if useBytes1(d) {
		qc, qu = encodeQueryBytes(q)
	} else {
		qc = encodeQuery(q)
	}
	w := 1
	if rows >= ivfParallelRows {
		w = min(db.workers, len(probe))
	}
	tops := make([]topK, w)
	var next atomic.Int64
	work := func(i int) error {
		tops[i] = newTopK(k, minScore)
		var dots [blockRows]int32
		for {
			j := int(next.Add(1) - 1)
			if j >= len(probe) {
				return nil
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			x.scanList(&ix.lists[probe[j]], q, &qc, qu, &tops[i], &dots)
		}
	}
	if err := runWorkers(w, work); err != nil {
		return nil, 0, fmt.Errorf("inmem: search: %w", err)
	}
	x.scanned.Add(int64(rows))
	all := tops[0].h
	for _, t := range tops[1:] {
		all = append(all, t.h...)
	}
	slices.SortFunc(all, better)
	all = slices.Clip(all[:min(k, len(all))])
	for i := range all {
		all[i].Score = max(-1, min(1, all[i].Score)) // as DB.scan
	}
	return all, n, nil
}

// scanList offers to t every row of l whose float32 score could reach t's
// floor, rescored by the float32 kernel from the DB's row (see
// DB.scanRangeCodes: the same bound, the same skipping). Callers hold
// x.db.mu for reading.
func (x *IVF) scanList(l *ivfList, q []float32, qc *qcode, qu []uint8, t *topK, dots *[blockRows]int32) {
	db := x.db
	d := db.dim
	var one [1]float32
	for lo := 0; lo < len(l.ids); lo += blockRows {
		hi := min(lo+blockRows, len(l.ids))
		codes, meta := l.code[lo*d:hi*d], l.meta[lo:hi]
		out := dots[:hi-lo]
		if qu == nil || !dotBytes(out, qu, codes, meta) {
			dotCodes(out, qc.a, codes) // byte query codes are int16 codes too
		}
		floor := float64(t.floor)
		cut := qc.cut(floor, blockMaxima(meta))
		for i, dot := range out {
			if dot <= cut || qc.bound(dot, meta[i]) < floor {
				continue
			}
			id := l.ids[lo+i]
			dotRows(one[:], q, db.row(db.rows[id]))
			if one[0] >= t.floor {
				t.offer(vdb.Result{ID: id, Score: one[0]})
				floor = float64(t.floor)
			}
		}
	}
}

// probe returns the indexes of the p lists whose centroids have the
// largest inner products with q, best first (ties by index).
func (ix *ivfIndex) probe(q []float32, p, d int) []int {
	scores := make([]float32, len(ix.lists))
	dotRows(scores, q, ix.cent)
	order := make([]int, len(scores))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(scores[b], scores[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return order[:p]
}

// nearest returns the list of the centroid nearest to v (largest inner
// product) within the ivfAssignGroups groups whose coarse centroids are
// nearest to v, using scratch (len ≥ groups and ≥ the largest group's
// lists) for scores. Two levels make training's assignment of every row
// cost groups + 2·lists/groups inner products rather than lists.
func (ix *ivfIndex) nearest(v []float32, scratch []float32) int {
	d := len(v)
	g := len(ix.first) - 1
	gs := scratch[:g]
	dotRows(gs, v, ix.coarse)
	var top [ivfAssignGroups]int
	for i := range top {
		top[i] = -1
	}
	for i, s := range gs {
		if ix.first[i] == ix.first[i+1] {
			continue // a group without lists
		}
		for j := range top {
			if top[j] < 0 || s > gs[top[j]] {
				copy(top[j+1:], top[j:len(top)-1])
				top[j] = i
				break
			}
		}
	}
	best, bestScore := -1, float32(0)
	for _, gi := range top {
		if gi < 0 {
			continue
		}
		lo, hi := ix.first[gi], ix.first[gi+1]
		ls := scratch[:hi-lo]
		dotRows(ls, v, ix.cent[lo*d:hi*d])
		for i, s := range ls {
			if best < 0 || s > bestScore || s == bestScore && lo+i < best {
				best, bestScore = lo+i, s
			}
		}
	}
	return best
}

// insert adds row v (normalised) under id to its nearest list.
func (ix *ivfIndex) insert(id int64, v []float32, d int, scratch []float32) {
	li := ix.nearest(v, scratch)
	l := &ix.lists[li]
	ix.where[id] = ivfPos{int32(li), int32(len(l.ids))}
	l.ids = append(l.ids, id)
	l.code = append(l.code, make([]int8, d)...)
	l.meta = append(l.meta, encodeRow(l.code[len(l.code)-d:], v))
}

// update puts the rows of ids into ix as db holds them now, each in its
// nearest list, or out of ix if db no longer holds it. scratch is
// ix.scratch()'s. Callers hold db.mu for reading.
func (ix *ivfIndex) update(db *DB, ids []int64, scratch []float32) {
	for _, id := range ids {
		ix.remove(id, db.dim)
		if r, ok := db.rows[id]; ok {
			ix.insert(id, db.row(r), db.dim, scratch)
		}
	}
}

// scratch returns room for nearest's distances.
func (ix *ivfIndex) scratch() []float32 { return make([]float32, max(len(ix.first), len(ix.lists))) }

// remove takes id out of its list, if indexed: the list's last row moves
// into its place.
func (ix *ivfIndex) remove(id int64, d int) {
	p, ok := ix.where[id]
	if !ok {
		return
	}
	delete(ix.where, id)
	l := &ix.lists[p.list]
	last := len(l.ids) - 1
	if i := int(p.i); i != last {
		moved := l.ids[last]
		l.ids[i] = moved
		copy(l.code[i*d:(i+1)*d], l.code[last*d:])
		l.meta[i] = l.meta[last]
		ix.where[moved] = p
	}
	l.ids = l.ids[:last]
	l.code = l.code[:last*d]
	l.meta = l.meta[:last]
}
