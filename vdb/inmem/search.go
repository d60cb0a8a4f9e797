package inmem

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/agentmem/agentmem/vdb"
)

// blockRows is how many rows one kernel call scores: small enough that the
// scores stay in L1 and a block stays in L2 while a batch of queries is run
// over it.
const blockRows = 128

// A search of a database with codes scans them from codesMinRows stored
// rows and codesPerK rows per result asked (DB.codesMin). Measured through
// long-term memory (hash:512, depth ~200): with codes, 2,800 rows took
// 1.26× the float32 scan's CPU, 20,000 rows 0.60×.
const (
	codesMinRows = 8192
	codesPerK    = 32
)

// Search returns the k stored vectors most similar to query, by descending
// cosine similarity, ties by ascending ID; fewer when the database holds
// fewer, and an empty slice when it is empty. The result is a fresh slice
// owned by the caller. Errors wrap [vdb.ErrInvalidK] (k ≤ 0),
// [vdb.ErrDimension], [vdb.ErrInvalidVector] (NaN, ±Inf or zero query),
// [vdb.ErrClosed] or the context's error.
func (db *DB) Search(ctx context.Context, query []float32, k int) ([]vdb.Result, error) {
	return db.SearchMinScore(ctx, query, k, float32(math.Inf(-1)))
}

// SearchMinScore is [DB.Search] restricted to results with Score ≥
// minScore; the cut-off is applied inside the scan. A NaN minScore means no
// cut-off.
func (db *DB) SearchMinScore(ctx context.Context, query []float32, k int, minScore float32) ([]vdb.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("inmem: search: %w", err)
	}
	if k <= 0 {
		return nil, fmt.Errorf("inmem: %w: got %d", vdb.ErrInvalidK, k)
	}
	if len(query) != db.dim {
		return nil, fmt.Errorf("inmem: query: %w: got %d, want %d", vdb.ErrDimension, len(query), db.dim)
	}
	if math.IsNaN(float64(minScore)) {
		minScore = float32(math.Inf(-1)) // no cut-off
	}
	q := make([]float32, len(query))
	if err := vdb.Normalize(q, query); err != nil {
		return nil, fmt.Errorf("inmem: query: %w", err)
	}
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, vdb.ErrClosed
	}
	res, err := db.scan(ctx, [][]float32{q}, k, minScore)
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// SearchBatch answers many queries in one pass over the stored vectors: each
// block of rows is read from memory once and scored against every query while
// it is in cache (up to twelve queries per kernel pass). All queries are validated
// before the scan; an error names the first bad one.
func (db *DB) SearchBatch(ctx context.Context, queries [][]float32, k int) ([][]vdb.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("inmem: search: %w", err)
	}
	if k <= 0 {
		return nil, fmt.Errorf("inmem: %w: got %d", vdb.ErrInvalidK, k)
	}
	qs := make([][]float32, len(queries))
	flat := make([]float32, len(queries)*db.dim)
	for i, query := range queries {
		if len(query) != db.dim {
			return nil, fmt.Errorf("inmem: query %d: %w: got %d, want %d", i, vdb.ErrDimension, len(query), db.dim)
		}
		qs[i] = flat[i*db.dim : (i+1)*db.dim : (i+1)*db.dim]
		if err := vdb.Normalize(qs[i], query); err != nil {
			return nil, fmt.Errorf("inmem: query %d: %w", i, err)
		}
	}
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, vdb.ErrClosed
	}
	return db.scan(ctx, qs, k, float32(math.Inf(-1)))
}

// scan scores every stored row against every (normalised) query. Callers
// hold mu for reading.
func (db *DB) scan(ctx context.Context, qs [][]float32, k int, minScore float32) ([][]vdb.Result, error) {
	n := len(db.ids)
	out := make([][]vdb.Result, len(qs))
	if n == 0 {
		for i := range out {
			out[i] = []vdb.Result{}
		}
		return out, nil
	}
	k = min(k, n)
	w := db.workers
	if n*db.dim < db.parallelMin {
		w = 1
	}
	w = min(w, (n+blockRows-1)/blockRows)
	tops := make([][]topK, w)
	for i := range tops {
		tops[i] = make([]topK, len(qs))
		for j := range tops[i] {
			tops[i][j] = newTopK(k, minScore)
		}
	}
	var qcs []qcode
	var qus [][]uint8
	var tiles []qtile
	useCodes := db.codes == Int8 && (db.codesMin < 0 || n >= db.codesMin && n >= codesPerK*k)
	if !useCodes && db.cols != nil && n >= colsMinRows && len(qs) == 1 {
		// A query that reads a few columns costs less than a scan of
		// the float32 rows even where those would stay in cache.
		useCodes = fewColumns(qs[0])
	}
	// The bfloat16 pass pays where k is small beside the rows (bf16Rows).
	bf16 := n >= bf16Rows*k
	if useCodes && bf16 && len(qs) >= bf16OverCodes && useTileBF16(db.dim, tileQueries) {
		// A batch this large is bound by multiply-adds, not by reading
		// the rows, and the bfloat16 pass does them faster than the
		// codes' kernels: the same results.
		useCodes = false
	}
	if useCodes {
		qcs = make([]qcode, len(qs))
		// Full groups of six queries take the byte kernel where it runs
		// (VNNI), with byte query codes; the rest too where the
		// single-query byte kernel runs (AVX-512 VNNI, d a multiple of
		// 64), else int16 codes (the AVX2 or the portable kernel).
		full := 0
		if useBytes(db.dim) {
			full = len(qs) / codesQueries * codesQueries
		}
		if useBytes1(db.dim) {
			full = len(qs)
		}
		if full > 0 {
			qus = make([][]uint8, full)
		}
		for j, q := range qs {
			if j < full {
				qcs[j], qus[j] = encodeQueryBytes(q)
			} else {
				qcs[j] = encodeQuery(q)
			}
		}
	}
	if qcs == nil {
		tiles = makeTiles(qs, db.dim, bf16)
	}
	// A query whose code has few nonzero dimensions reads only their
	// columns (WithColumns).
	var terms []colTerms
	if qcs != nil && db.cols != nil {
		terms = make([]colTerms, len(qs))
		for j := range qcs {
			if t, ok := sparseTerms(qcs[j].a); ok {
				terms[j] = t
			}
		}
	}
	// Workers pull chunks of rows from a shared counter rather than taking a
	// fixed share each: on a busy machine a worker that starts late (its
	// core is taken) simply scans fewer chunks, instead of holding up the
	// whole search.
	blocks := (n + blockRows - 1) / blockRows
	chunkRows := blockRows * max(1, blocks/(w*8))
	chunks := (n + chunkRows - 1) / chunkRows
	var next atomic.Int64
	work := func(i int) error {
		for {
			c := int(next.Add(1) - 1)
			if c >= chunks {
				return nil
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			lo := c * chunkRows
			if qcs != nil {
				db.scanRangeCodes(qs, qcs, qus, terms, lo, min(lo+chunkRows, n), tops[i])
			} else {
				db.scanRange(tiles, lo, min(lo+chunkRows, n), tops[i])
			}
		}
	}
	if err := runWorkers(w, work); err != nil {
		return nil, fmt.Errorf("inmem: search: %w", err)
	}
	for j := range qs {
		var all []vdb.Result
		if w == 1 {
			all = tops[0][j].h
		} else {
			all = make([]vdb.Result, 0, w*k)
			for i := range tops {
				all = append(all, tops[i][j].h...)
			}
		}
		slices.SortFunc(all, better)
		all = slices.Clip(all[:min(k, len(all))])
		for i := range all {
			// Rounding can push a unit-vector dot product just past ±1.
			all[i].Score = max(-1, min(1, all[i].Score))
		}
		out[j] = all
	}
	return out, nil
}

// scanRange scores rows [lo, hi) against every query, offering each score to
// that query's top-k. Each block of rows is read from memory once and
// scored against every tile of queries (dotTile) while it is in cache.
//
// Tiles packed in bfloat16 (bf16.go) score a block converted to bfloat16
// once for all of them, and rescore in float32 only the rows that may
// reach a query's floor (offerBF16).
func (db *DB) scanRange(tiles []qtile, lo, hi int, tops []topK) {
	var scores [tileQueries][blockRows]float32
	var rows16 []uint16
	var slack float32
	if slices.ContainsFunc(tiles, func(t qtile) bool { return t.bf16 != nil }) {
		rows16 = make([]uint16, blockRows*db.dim)
		slack = bf16Slack(db.dim)
	}
	for r := lo; r < hi; r += blockRows {
		end := min(r+blockRows, hi)
		rows := db.rowRange(r, end)
		ids := db.ids[r:end]
		converted := false
		for k := range tiles {
			t := &tiles[k]
			if t.bf16 != nil {
				if !converted {
					toBF16(rows16[:len(rows)], rows)
					converted = true
				}
				dotTileBF16(&scores, t, rows16[:len(rows)], rows, end-r)
				for i, q := range t.qs {
					db.offerBF16(&tops[t.first+i], q, scores[i][:end-r], r, slack)
				}
				continue
			}
			dotTile(&scores, t, rows)
			for i := range t.qs {
				tops[t.first+i].offerAll(scores[i][:end-r], ids)
			}
		}
	}
}

// scanRangeCodes is scanRange over the int8 codes: it computes every row's
// code score, and rescores with the float32 kernel only the rows whose bound
// (see encodeQuery) reaches the query's current floor.
//
// The first len(qus) queries are coded as bytes, qus, for the VNNI byte
// kernels: the six-query tile, and for the rest (a single query, most
// often) the single-query kernel. A group of queries that all have column
// terms (terms[j].offs not nil; lo a multiple of blockRows) reads the
// column codes instead (dotCols): the same products.
func (db *DB) scanRangeCodes(qs [][]float32, qcs []qcode, qus [][]uint8, terms []colTerms, lo, hi int, tops []topK) {
	d := db.dim
	var dots [codesQueries][blockRows]int32
	var one [1]float32
	rescored, colBlocks := 0, 0
	rescore := func(j int, dots []int32, r int, bm blockMax) {
		t := &tops[j]
		qc := &qcs[j]
		floor := float64(t.floor)
		cut := qc.cut(floor, bm)
		meta := db.meta[r : r+len(dots)]
		for i, dot := range dots {
			if dot <= cut || qc.bound(dot, meta[i]) < floor {
				continue
			}
			row := r + i
			dotRows(one[:], qs[j], db.row(row))
			rescored++
			if one[0] >= t.floor {
				t.offer(vdb.Result{ID: db.ids[row], Score: one[0]})
				floor = float64(t.floor)
			}
		}
	}
	as := make([][]int16, len(qcs))
	for j := range qcs {
		as[j] = qcs[j].a
	}
	for r := lo; r < hi; r += blockRows {
		end := min(r+blockRows, hi)
		codes := db.code[r*d : end*d]
		bm := blockMaxima(db.meta[r:end])
		for j := 0; j < len(qs); j += codesQueries {
			g := min(codesQueries, len(qs)-j)
			var out [codesQueries][]int32
			for i := range g {
				out[i] = dots[i][:end-r]
			}
			switch meta := db.meta[r:end]; {
			case allColumns(terms, j, g):
				blk := db.colBlock(r / blockRows)
				for i := range g {
					dotCols(&dots[i], terms[j+i], blk)
				}
				colBlocks += g
			case j+g <= len(qus) && dotBytesTile(out[:g], qus[j:j+g], codes, meta):
			case j+g <= len(qus) && dotBytesEach(out[:g], qus[j:j+g], codes, meta):
			default:
				// Byte query codes are int16 codes too: the same
				// products, through the int16 kernels.
				dotCodesN(out[:g], as[j:j+g], codes)
			}
			for i := range g {
				rescore(j+i, out[i], r, bm)
			}
		}
	}
	db.rescored.Add(int64(rescored))
	db.colBlocks.Add(int64(colBlocks))
}

// allColumns reports whether queries [j, j+g) all have column terms.
func allColumns(terms []colTerms, j, g int) bool {
	if terms == nil {
		return false
	}
	for _, t := range terms[j : j+g] {
		if t.offs == nil {
			return false
		}
	}
	return true
}

// dotBytesEach runs the single-query byte kernel (dotBytes) for each byte
// query us[i] into out[i], and reports false, doing nothing, where that
// kernel does not run (every query has the same shape).
func dotBytesEach(out [][]int32, us [][]uint8, codes []int8, meta []rowMeta) bool {
	for i := range us {
		if !dotBytes(out[i], us[i], codes, meta) {
			return false
		}
	}
	return true
}

// better orders results best first: higher score, then lower ID.
func better(a, b vdb.Result) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// topK keeps the k best results offered to it in a heap whose root is the
// worst of them. floor is the score below which an offer cannot get in: the
// minimum score until the heap is full, then the root's score.
type topK struct {
	k     int
	h     []vdb.Result
	min   float32
	floor float32
}

func newTopK(k int, minScore float32) topK {
	return topK{k: k, h: make([]vdb.Result, 0, k), min: minScore, floor: minScore}
}

// worse reports whether a ranks below b.
func worse(a, b vdb.Result) bool {
	return a.Score < b.Score || (a.Score == b.Score && a.ID > b.ID)
}

// offerAll offers scores[i] under ids[i], skipping quickly (skipBelow)
// those below the floor: nearly all of them, once the heap has filled.
func (t *topK) offerAll(scores []float32, ids []int64) {
	for i := 0; ; i++ {
		i += skipBelow(scores[i:], t.floor)
		if i >= len(scores) {
			return
		}
		t.offer(vdb.Result{ID: ids[i], Score: scores[i]})
	}
}

func (t *topK) offer(r vdb.Result) {
	if len(t.h) < t.k {
		t.h = append(t.h, r)
		// Sift up.
		i := len(t.h) - 1
		for i > 0 {
			p := (i - 1) / 2
			if !worse(t.h[i], t.h[p]) {
				break
			}
			t.h[i], t.h[p] = t.h[p], t.h[i]
			i = p
		}
		if len(t.h) == t.k {
			t.floor = max(t.min, t.h[0].Score)
		}
		return
	}
	if !worse(t.h[0], r) {
		return
	}
	t.h[0] = r
	// Sift down.
	i, n := 0, len(t.h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if rr := l + 1; rr < n && worse(t.h[rr], t.h[l]) {
			c = rr
		}
		if !worse(t.h[c], t.h[i]) {
			break
		}
		t.h[i], t.h[c] = t.h[c], t.h[i]
		i = c
	}
	t.floor = max(t.min, t.h[0].Score)
}

// runWorkers runs work(0) … work(w−1), work(0) on this goroutine and the
// others each on its own, and returns the first error by worker number.
func runWorkers(w int, work func(i int) error) error {
	errs := make([]error, w)
	var wg sync.WaitGroup
	for i := 1; i < w; i++ {
		wg.Go(func() { errs[i] = work(i) })
	}
	errs[0] = work(0)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
