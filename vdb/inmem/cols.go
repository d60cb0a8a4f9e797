package inmem

import "fmt"

// WithColumns keeps, beside the int8 codes of [WithCodes] (which it
// needs), a second copy of them laid out by columns: for each block of
// blockRows rows, dimension j's codes of those rows side by side. A query
// whose code has few nonzero dimensions (a lexical embedder's, such as
// embed/hash: a question of a few words touches 10–30 of 512 dimensions)
// then reads only its dimensions' columns, a few percent of the codes,
// instead of every row's whole code. The code products are the same
// integers, so the rows rescored and the results are exactly those of the
// row-major scan (and of the plain float32 scan). It costs one more byte
// per dimension per row (the codes' size again) and a little time in Add
// and Delete; a query with many nonzero dimensions (a model embedder's)
// scans the row-major codes as before.
func WithColumns() Option {
	return func(db *DB) error {
		db.columns = true
		return nil
	}
}

// colsMaxShare: a query takes the column scan when at most one in
// colsMaxShare of its code's dimensions is nonzero. The column kernels do
// one multiply per code where the row-major VNNI kernel does one per four:
// past a few percent of the dimensions they stop paying.
const colsMaxShare = 8

// colsMinRows is the size from which a database with columns scans them
// for a query that reads few (fewColumns), whatever codesMinRows says.
const colsMinRows = 4 * blockRows

// fewColumns reports whether query q (normalised) has so few nonzero
// dimensions that its code's do too (sparseTerms accepts them: a zero
// component codes as zero).
func fewColumns(q []float32) bool {
	nz := 0
	for _, v := range q {
		if v != 0 {
			nz++
		}
	}
	return nz*colsMaxShare <= len(q)
}

// colTerms are the nonzero dimensions of a query's code, for dotCols:
// offs[k] is dimension k's column offset in a block (j·blockRows), as[k]
// its code.
type colTerms struct {
	offs []int64
	as   []int32
}

// sparseTerms returns the nonzero dimensions of query code a, or ok false
// when there are too many for the column scan (see colsMaxShare).
func sparseTerms(a []int16) (t colTerms, ok bool) {
	nz := 0
	for _, v := range a {
		if v != 0 {
			nz++
		}
	}
	if nz*colsMaxShare > len(a) {
		return colTerms{}, false
	}
	t = colTerms{offs: make([]int64, 0, nz), as: make([]int32, 0, nz)}
	for j, v := range a {
		if v != 0 {
			t.offs = append(t.offs, int64(j*blockRows))
			t.as = append(t.as, int32(v))
		}
	}
	return t, true
}

// colBlock returns block b of the column codes: blockRows·dim bytes,
// dimension j's codes of the block's rows at [j·blockRows, (j+1)·blockRows).
// Callers hold mu.
func (db *DB) colBlock(b int) []int8 {
	n := blockRows * db.dim
	return db.cols[b*n : (b+1)*n : (b+1)*n]
}

// setColumns copies row r's code into the column codes. Callers hold mu
// (for writing; rows of one block may be set from several goroutines at
// once: each writes its own bytes).
func (db *DB) setColumns(r int) {
	if db.cols == nil {
		return
	}
	d := db.dim
	blk, i := db.colBlock(r/blockRows), r%blockRows
	for j, c := range db.code[r*d : (r+1)*d] {
		blk[j*blockRows+i] = c
	}
}

// colsLen is the length of the column codes for n rows: whole blocks.
func (db *DB) colsLen(n int) int {
	return (n + blockRows - 1) / blockRows * blockRows * db.dim
}

// checkColumns is New's check of WithColumns.
func (db *DB) checkColumns() error {
	if db.columns && db.codes != Int8 {
		return fmt.Errorf("inmem: columns need int8 codes (WithCodes(Int8))")
	}
	return nil
}

// dotColsGeneric sets out[i] to Σ_k as[k]·blk[offs[k]+i] for the rows
// i < len(out) (≤ blockRows) of a column block.
func dotColsGeneric(out []int32, t colTerms, blk []int8) {
	clear(out)
	for k, off := range t.offs {
		a := t.as[k]
		col := blk[off : int(off)+len(out)]
		for i, c := range col {
			out[i] += a * int32(c)
		}
	}
}

// keepColumns keeps the column codes (on, if WithColumns asked for them)
// or frees them (an IVF's trained index searches its own codes: the
// columns would only cost memory). Callers hold mu for writing.
func (db *DB) keepColumns(on bool) {
	switch {
	case !on || !db.columns || db.closed:
		db.cols = nil
	case db.cols == nil:
		db.cols = make([]int8, db.colsLen(len(db.ids)), db.colsLen(cap(db.ids)))
		adviseHugePages(db.cols)
		for r := range db.ids {
			db.setColumns(r)
		}
	}
}
