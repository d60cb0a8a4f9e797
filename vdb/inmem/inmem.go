// Package inmem is agentmem's default vector backend: exact cosine search
// over vectors held in memory, in pure Go (no cgo).
//
// Vectors live row-major in segments of about 8 MiB of float32 (a whole
// number of scan blocks; no per-vector heap objects), normalised on the way
// in as [vdb.Normalize] does (a large batch on helpers too, its codes with
// them), so a search is a sequential scan of inner products
// feeding a bounded top-k heap. When the
// database is large the scan is split across GOMAXPROCS goroutines, each with
// its own heap, merged at the end. On amd64 with AVX2 and FMA the inner
// products use an assembly kernel (four rows per pass, eight accumulators);
// elsewhere, or with -tags purego, they go through gonum's blas32. A search
// over 100k vectors of dimension 384 reads 154 MB, so on a large database its
// speed is set by memory bandwidth.
//
// [WithCodes] keeps an int8 code of every row beside it (0.26× the float32
// bytes at d=384). A search then scans the codes, a quarter of the bytes, and
// rescores in float32 only the rows whose code score plus a proven error
// bound could still reach the current k-th score, so its results are
// identical to the plain scan's (see encodeQuery for the proof).
//
// A batch ([DB.SearchBatch]) scores each block of rows against up to
// twelve queries at a time from registers (AVX-512; three with AVX2).
// Where the CPU has AVX-512 BF16 it scores in bfloat16 first, twice the
// multiply-adds per instruction, and rescores in float32 only the rows
// within a proven bound of a query's k-th score, so that its results too
// are the plain scan's (see bf16Slack).
//
// Deleting moves the last row into the hole. A database smaller than one
// segment keeps its vectors in a single array that grows by doubling; past
// that, growing adds a segment and never copies the vectors already stored,
// and the heap stays within one segment of the raw vector size (see
// [WithCapacity] to allocate up front). The ids, and the codes of
// [WithCodes], are arrays that grow by doubling while small and by a
// sixteenth once past 64 MiB.
//
// [DB] implements [vdb.VectorDatabase] and the optional [vdb.Persister]
// (a versioned binary stream with CRC-32C checksums, written and read in large
// chunks), [vdb.MinScoreSearcher] and [vdb.BatchSearcher].
package inmem

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/agentmem/agentmem/internal/parallel"
	"github.com/agentmem/agentmem/vdb"
)

var (
	_ vdb.VectorDatabase   = (*DB)(nil)
	_ vdb.Persister        = (*DB)(nil)
	_ vdb.MinScoreSearcher = (*DB)(nil)
	_ vdb.BatchSearcher    = (*DB)(nil)
)

// DB is an in-memory exact vector database. It is safe for concurrent use by
// multiple goroutines: searches share a read lock, Add, Delete and Import take
// the write lock. The zero value is not usable; call [New].
type DB struct {
	dim     int
	workers int // goroutines per large scan
	// parallelMin is the number of stored float32s from which a scan is
	// split across workers; below it one goroutine is faster.
	parallelMin int
	// codesMin is the number of stored rows from which a search of a
	// database with codes scans them (and only from codesPerK rows per
	// result asked): below, the float32 rows are few enough to stay in
	// cache, and the codes' per-query set-up and rescoring cost more than
	// they save. Either scan gives the same results. A negative codesMin
	// (a test hook) scans the codes always.
	codesMin int

	codes   Codes // compressed codes kept beside data (WithCodes)
	columns bool  // keep cols (WithColumns)

	// segRows is the number of rows of a full segment: a multiple of
	// blockRows, so that a scan block never straddles two segments.
	segRows int

	mu sync.RWMutex // guards everything below
	// segs hold the rows, row r at segs[r/segRows][(r%segRows)*dim:]:
	// segment s has len min(max(len(ids)-s*segRows, 0), segRows)*dim.
	// Segments after the last row's are spare capacity. While the
	// database fits one segment, segs[0] may have less capacity than a
	// full one (it grows by doubling); every other segment has a full one.
	segs   [][]float32
	ids    []int64 // row → ID
	rows   map[int64]int
	closed bool
	// With codes == Int8: code is row-major like data, one int8 per
	// dimension, and meta holds each row's scale and norms; len(code) ==
	// len(data), len(meta) == len(ids), and row i's code always encodes
	// row i's vector.
	code []int8
	meta []rowMeta
	// With WithColumns: cols holds the codes again by columns, block b
	// of blockRows rows at colBlock(b); len(cols) == colsLen(len(ids)).
	// Row i's columns always hold row i's code; the rows of the last
	// block past len(ids) hold anything.
	cols []int8
	// rescored counts the rows a codes scan rescored in float32 (for
	// tests and benchmarks).
	rescored atomic.Int64
	// colBlocks counts the (query, block) pairs scored from the column
	// codes (for tests and benchmarks).
	colBlocks atomic.Int64
}

// An Option configures a [DB].
type Option func(*DB) error

// WithCapacity reserves room for n vectors up front, so that adding them
// never reallocates. Use it when the final size is known (for example before
// adding a corpus); the vectors' memory is then the raw size, rounded up to
// a whole segment (about 8 MiB) past the first.
func WithCapacity(n int) Option {
	return func(db *DB) error {
		if n < 0 {
			return fmt.Errorf("inmem: capacity %d is negative", n)
		}
		db.growRows(n)
		db.ids = make([]int64, 0, n)
		db.rows = make(map[int64]int, n)
		return nil
	}
}

// segmentFloats is the size a full segment aims at: 8 MiB of float32, so
// that three quarters of a segment at least (its 2 MiB-aligned interior)
// can be backed by transparent huge pages (see adviseHugePages; a 2 MiB
// segment, not 2 MiB-aligned, would get none).
const segmentFloats = 1 << 21

// segmentRows returns the rows of a full segment for dimension dim: about
// segmentFloats, a multiple of blockRows.
func segmentRows(dim int) int {
	return max(blockRows, segmentFloats/dim/blockRows*blockRows)
}

// WithWorkers sets how many goroutines one large search uses. The default is
// runtime.GOMAXPROCS(0); 1 makes every search, and every Add, single-threaded.
func WithWorkers(n int) Option {
	return func(db *DB) error {
		if n < 1 {
			return fmt.Errorf("inmem: workers must be ≥ 1, got %d", n)
		}
		db.workers = n
		return nil
	}
}

// New returns an empty database for vectors of dimension dim (> 0).
func New(dim int, opts ...Option) (*DB, error) {
	if dim <= 0 {
		return nil, fmt.Errorf("inmem: %w: dimension must be positive, got %d", vdb.ErrDimension, dim)
	}
	db := &DB{
		dim:         dim,
		segRows:     segmentRows(dim),
		workers:     runtime.GOMAXPROCS(0),
		parallelMin: 1 << 17,
		codesMin:    codesMinRows,
		rows:        map[int64]int{},
	}
	for _, o := range opts {
		if err := o(db); err != nil {
			return nil, err
		}
	}
	if err := db.checkColumns(); err != nil {
		return nil, err
	}
	if db.codes != NoCodes {
		db.code = make([]int8, 0, cap(db.ids)*dim)
		adviseHugePages(db.code)
		db.meta = make([]rowMeta, 0, cap(db.ids))
	}
	if db.columns {
		db.cols = make([]int8, 0, db.colsLen(cap(db.ids)))
		adviseHugePages(db.cols)
	}
	return db, nil
}

// Dim returns the vector dimension.
func (db *DB) Dim() int { return db.dim }

// Len returns the number of stored vectors (0 after Close).
func (db *DB) Len() int {
	db.mu.RLock()
	defer db.mu.RUnlock()
	return len(db.ids)
}

// Close releases the vectors. It is idempotent; every other method returns
// [vdb.ErrClosed] afterwards.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.closed = true
	db.segs, db.ids, db.rows = nil, nil, nil
	db.code, db.meta, db.cols = nil, nil, nil
	return nil
}

// Add stores vecs[i], normalised, under ids[i]; an ID already present is
// replaced, and within one batch the later vector wins. The whole batch is
// validated before anything is stored: on error nothing was added. The
// caller's slices are not retained. A batch of more than a few thousand
// vector entries is normalised and coded on up to GOMAXPROCS goroutines
// (unless WithWorkers(1)); the vectors of a caller that changes them
// while Add runs are undefined.
func (db *DB) Add(ctx context.Context, ids []int64, vecs [][]float32) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("inmem: add: %w", err)
	}
	if len(ids) != len(vecs) {
		return fmt.Errorf("inmem: %w: %d ids for %d vectors", vdb.ErrInvalidID, len(ids), len(vecs))
	}
	// A large batch is normalised and coded on helpers too (addLarge):
	// each vector is measured once, here, and scaled under the lock.
	large := db.workers != 1 && len(ids)*db.dim >= 2*parallelAdd
	var sqs []float64
	if large {
		sqs = make([]float64, len(vecs))
	}
	for i, id := range ids {
		if id < 0 {
			return fmt.Errorf("inmem: %w: ids[%d] = %d is negative", vdb.ErrInvalidID, i, id)
		}
		sq, err := vdb.SquaredNorm(vecs[i], db.dim)
		if err != nil {
			return fmt.Errorf("inmem: vecs[%d]: %w", i, err)
		}
		if large {
			sqs[i] = sq
		}
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return vdb.ErrClosed
	}
	fresh := 0
	for _, id := range ids {
		if _, ok := db.rows[id]; !ok {
			fresh++ // an ID repeated within the batch is counted twice: harmless
		}
	}
	db.reserve(len(db.ids) + fresh)
	if large {
		db.addLarge(ids, vecs, sqs)
		return nil
	}
	for i, id := range ids {
		r, _ := db.place(id)
		// Cannot fail after the check, unless the caller changes vecs
		// concurrently, which is a data race on their side. (Rows already
		// written stay, with their codes, as after a partial batch.)
		if err := vdb.Normalize(db.row(r), vecs[i]); err != nil {
			return fmt.Errorf("inmem: vecs[%d] changed during Add: %w", i, err)
		}
		db.encode(r)
	}
	return nil
}

// place returns the row of id: its own if stored (replaced true), else a
// new one at the end. Callers hold mu for writing, with room reserved.
func (db *DB) place(id int64) (r int, replaced bool) {
	if r, ok := db.rows[id]; ok {
		return r, true
	}
	r = len(db.ids)
	d := db.dim
	db.ids = append(db.ids, id)
	s := r / db.segRows
	db.segs[s] = db.segs[s][:len(db.segs[s])+d]
	if db.codes != NoCodes {
		db.code = db.code[:len(db.code)+d]
		db.meta = db.meta[:len(db.meta)+1]
	}
	if db.cols != nil {
		db.cols = db.cols[:db.colsLen(r+1)]
	}
	db.rows[id] = r
	return r, false
}

// encode recomputes row r's code (and column codes) from its float32
// vector. Callers hold mu for writing.
func (db *DB) encode(r int) {
	if db.codes == NoCodes {
		return
	}
	db.encodeCode(r)
	db.setColumns(r)
}

// encodeCode is encode without the column codes, which the rows of one
// block share cache lines for: it touches row r's code and metadata only.
func (db *DB) encodeCode(r int) {
	d := db.dim
	db.meta[r] = encodeRow(db.code[r*d:(r+1)*d], db.row(r))
}

// addLarge is Add's write of a large batch, sqs[i] being vecs[i]'s
// vdb.SquaredNorm: scaling a row and coding it cost about as much as each
// other and touch only the row's floats, code and metadata, so they are
// shared with helpers (parallel.Parts); the column codes of the rows of
// one block share cache lines, so they are set after, by this goroutine.
// Callers hold mu for writing, with room reserved.
func (db *DB) addLarge(ids []int64, vecs [][]float32, sqs []float64) {
	// rows[i] is the row vecs[i] goes to.
	rows := make([]int, len(ids))
	replaced := false
	for i, id := range ids {
		r, ok := db.place(id)
		rows[i] = r
		replaced = replaced || ok
	}
	// When the batch named a row twice (an ID given twice) or replaced
	// one, each row is written with its last vector only (todo), so that
	// no two goroutines write a row; otherwise every vector is (todo nil).
	var todo []int
	n := len(ids)
	if replaced {
		last := make(map[int]int, len(ids))
		for i, r := range rows {
			last[r] = i
		}
		for i, r := range rows {
			if last[r] == i {
				todo = append(todo, i)
			}
		}
		n = len(todo)
	}
	parallel.Parts(n, func(int) int { return db.dim }, parallelAdd, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			i := k
			if todo != nil {
				i = todo[k]
			}
			r := rows[i]
			vdb.Scale(db.row(r), vecs[i], sqs[i])
			if db.codes != NoCodes {
				db.encodeCode(r)
			}
		}
	})
	if db.cols != nil {
		for _, r := range rows {
			db.setColumns(r) // a row named twice: its last code, twice
		}
	}
}

// parallelAdd is the least number of vector entries for which Add gives
// a goroutine a share of scaling and coding a batch's rows.
const parallelAdd = 8 << 10

// Delete removes the given IDs and reports how many were present. Unknown
// IDs are not an error. The last row moves into each hole, so Delete costs
// O(dim) per ID.
func (db *DB) Delete(ctx context.Context, ids ...int64) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("inmem: delete: %w", err)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return 0, vdb.ErrClosed
	}
	d := db.dim
	n := 0
	for _, id := range ids {
		r, ok := db.rows[id]
		if !ok {
			continue
		}
		n++
		delete(db.rows, id)
		last := len(db.ids) - 1
		if r != last {
			copy(db.row(r), db.row(last))
			if db.codes != NoCodes {
				copy(db.code[r*d:(r+1)*d], db.code[last*d:(last+1)*d])
				db.meta[r] = db.meta[last]
				db.setColumns(r)
			}
			moved := db.ids[last]
			db.ids[r] = moved
			db.rows[moved] = r
		}
		db.ids = db.ids[:last]
		s := last / db.segRows
		db.segs[s] = db.segs[s][:len(db.segs[s])-d]
		if db.codes != NoCodes {
			db.code = db.code[:last*d]
			db.meta = db.meta[:last]
		}
		if db.cols != nil {
			db.cols = db.cols[:db.colsLen(last)]
		}
	}
	db.shrink()
	return n, nil
}

// Growth policy. append's doubling would leave up to half of a large
// database's backing array unused, so past bigRows floats the array grows by
// one sixteenth at a time: the heap stays within about 6% of the raw vector
// size, at the price of more (amortised) copying while a large database is
// being filled.
const (
	bigFloats = 1 << 24 // 64 MiB of float32
	minRows   = 64
)

// row returns row r's vector. Callers hold mu.
func (db *DB) row(r int) []float32 {
	off := (r % db.segRows) * db.dim
	return db.segs[r/db.segRows][off : off+db.dim : off+db.dim]
}

// rowRange returns rows [lo, hi), which lie in one segment, as one slice.
// Callers hold mu.
func (db *DB) rowRange(lo, hi int) []float32 {
	base := lo / db.segRows * db.segRows
	return db.segs[lo/db.segRows][(lo-base)*db.dim : (hi-base)*db.dim]
}

// rowCap is the number of rows the segments have room for.
func (db *DB) rowCap() int {
	n := len(db.segs)
	if n == 0 {
		return 0
	}
	return (n-1)*db.segRows + cap(db.segs[n-1])/db.dim
}

// growRows makes room in the segments for at least need rows: by doubling
// the first segment while need fits one (at most a segment's worth of
// copying), else by completing the first segment and adding full ones,
// which copies nothing. Callers hold mu (or own db).
func (db *DB) growRows(need int) {
	if need <= db.rowCap() {
		return
	}
	d := db.dim
	if need <= db.segRows {
		c := minRows
		if len(db.segs) > 0 {
			c = max(c, cap(db.segs[0])/d)
		}
		for c < need {
			c *= 2
		}
		c = min(c, db.segRows)
		if len(db.segs) == 0 {
			db.segs = [][]float32{newSegment(0, c*d, db.hugeFloats(0))}
		} else {
			db.segs[0] = regrow(db.segs[0], c*d, db.hugeFloats(0))
		}
		return
	}
	if len(db.segs) == 0 {
		db.segs = [][]float32{newSegment(0, db.segRows*d, db.hugeFloats(0))}
	} else if cap(db.segs[0]) < db.segRows*d {
		db.segs[0] = regrow(db.segs[0], db.segRows*d, db.hugeFloats(0))
	}
	for db.rowCap() < need {
		db.segs = append(db.segs, newSegment(0, db.segRows*d, db.hugeFloats(len(db.segs)*db.segRows)))
	}
}

// newSegment returns a segment of length n and capacity c, advised for
// huge pages when huge is set.
func newSegment(n, c int, huge bool) []float32 {
	s := make([]float32, n, c)
	if huge {
		adviseHugePages(s)
	}
	return s
}

// hugeFloats reports whether the float32 segment whose first row is start
// is worth huge pages. Huge pages pay off for the arrays a search streams
// (fewer TLB misses), and they cost at the first touch of each 2 MiB, which
// the kernel zeroes at once (and may compact memory for): on a virtual
// machine whose free memory goes back to the host, a fresh huge page costs
// milliseconds, on the write path.
// A database with int8 codes streams its float32 rows only while it holds
// fewer than codesMin rows; from there a search scans the codes (or the
// column codes) and reads the float32 rows of only the few candidates it
// rescores, so the segments past codesMin rows stay on ordinary pages. The
// codes themselves are streamed, and keep their advice.
func (db *DB) hugeFloats(start int) bool {
	return db.codes == NoCodes || db.codesMin >= 0 && start < db.codesMin
}

// reserve makes room for at least need rows. Callers hold mu.
func (db *DB) reserve(need int) {
	db.growRows(need)
	have := cap(db.ids)
	if need <= have {
		return
	}
	c := max(have, minRows)
	for c < need {
		if c*db.dim < bigFloats {
			c *= 2
		} else {
			c += c / 16
		}
	}
	// A single large batch (or an import) gets exactly what it needs.
	if need > 2*have && need*db.dim >= bigFloats {
		c = need
	}
	db.resize(c)
}

// shrink gives memory back after many deletes: segments past the one after
// the last row's are dropped, and a database back within one segment gets
// a first segment of its size. Callers hold mu.
func (db *DB) shrink() {
	n := len(db.ids)
	if keep := n/db.segRows + 2; len(db.segs) > keep {
		clear(db.segs[keep:])
		db.segs = db.segs[:keep]
	}
	if c := cap(db.ids); c > minRows && n < c/4 {
		db.resize(max(n+n/8, minRows))
	}
	if n <= db.segRows/4 && len(db.segs) > 0 {
		if c := cap(db.segs[0]) / db.dim; c > minRows && n < c/4 {
			db.segs = [][]float32{regrow(db.segs[0], max(n+n/8, minRows)*db.dim, db.hugeFloats(0))}
		}
	}
}

// resize sets the capacity of the ids (and codes) to rows. Callers hold
// mu.
func (db *DB) resize(rows int) {
	db.ids = regrow(db.ids, rows, false)
	if db.codes != NoCodes {
		db.code = regrow(db.code, rows*db.dim, true)
		db.meta = regrow(db.meta, rows, false)
	}
	if db.cols != nil {
		db.cols = regrow(db.cols, db.colsLen(rows), true)
	}
}

// regrow returns a copy of s with capacity c, advised for huge pages (before
// the copy touches it) when huge is set.
func regrow[T any](s []T, c int, huge bool) []T {
	out := make([]T, len(s), c)
	if huge {
		adviseHugePages(out)
	}
	copy(out, s)
	return out
}

// encodeAll computes the codes of the n rows of a database (Import), row(r)
// being row r's vector, splitting the work across workers.
func encodeAll(codes Codes, d, workers, n int, row func(int) []float32) ([]int8, []rowMeta) {
	if codes == NoCodes {
		return nil, nil
	}
	code := make([]int8, n*d)
	adviseHugePages(code)
	meta := make([]rowMeta, n)
	w := max(1, min(workers, n/1024))
	var wg sync.WaitGroup
	for i := range w {
		lo, hi := n*i/w, n*(i+1)/w
		wg.Go(func() {
			for r := lo; r < hi; r++ {
				meta[r] = encodeRow(code[r*d:(r+1)*d], row(r))
			}
		})
	}
	wg.Wait()
	return code, meta
}
