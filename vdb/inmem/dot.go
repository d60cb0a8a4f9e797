package inmem

import "gonum.org/v1/gonum/blas/blas32"

// dotRowsGeneric sets out[i] to the inner product of q with the i-th row of
// rows (row-major, len(q) columns) through gonum's blas32.
func dotRowsGeneric(out, q, rows []float32) {
	d := len(q)
	x := blas32.Vector{N: d, Inc: 1, Data: q}
	for i := range out {
		out[i] = blas32.Dot(x, blas32.Vector{N: d, Inc: 1, Data: rows[i*d : (i+1)*d]})
	}
}

// dotCodesGeneric sets out[i] to Σ_j q[j]·codes[i*d+j], d = len(q). The sum
// is exact: the caller bounds |q[j]| so that it fits in an int32, and
// integer addition does not depend on the order.
func dotCodesGeneric(out []int32, q []int16, codes []int8) {
	d := len(q)
	for i := range out {
		row := codes[i*d : (i+1)*d]
		row = row[:len(q)]
		var s int32
		for j, c := range row {
			s += int32(q[j]) * int32(c)
		}
		out[i] = s
	}
}

// codesQueries is how many queries dotCodesN serves per call.
const codesQueries = 6

// dotCodesN sets out[i][r] to the exact integer product of as[i] with row r
// of codes, for up to codesQueries queries, using the widest register tile
// the CPU offers.
func dotCodesN(out [][]int32, as [][]int16, codes []int8) {
	if dotCodesTile(out, as, codes) {
		return
	}
	i := 0
	for ; i+1 < len(as); i += 2 {
		dotCodes2(out[i], out[i+1], as[i], as[i+1], codes)
	}
	if i < len(as) {
		dotCodes(out[i], as[i], codes)
	}
}

// tileQueries is how many queries one float32 batch tile serves: the
// AVX-512 kernel's twelve (six pairs) at once, the AVX2 kernel's three at a
// time, the portable code's one.
const tileQueries = 12

// tileMin is the fewest queries for which a tile takes the AVX-512 kernel;
// below it the twelve-query kernel would mostly multiply padding, and the
// AVX2 three-query tile is faster.
const tileMin = 8

// A qtile is a group of up to tileQueries normalised queries of a batch,
// laid out once per batch for the kernels (dotTile).
type qtile struct {
	first int         // index of qs[0] in the batch
	qs    [][]float32 // the queries
	// packed holds the queries in pairs for the AVX-512 tile
	// (packQueries) where it runs; else, from three queries, flat holds
	// them one after another for the three-query AVX2 tile.
	flat, packed []float32
	// bf16 holds them in bfloat16 pairs (packQueriesBF16) where the
	// bfloat16 pass runs (useTileBF16), instead of packed.
	bf16 []uint16
}

// makeTiles groups the queries qs (each of dimension d) in tiles of
// tileQueries, packed for the bfloat16 pass where it runs, if bf16 (see
// bf16Rows).
func makeTiles(qs [][]float32, d int, bf16 bool) []qtile {
	tiles := make([]qtile, 0, (len(qs)+tileQueries-1)/tileQueries)
	for lo := 0; lo < len(qs); lo += tileQueries {
		t := qtile{first: lo, qs: qs[lo:min(lo+tileQueries, len(qs))]}
		switch {
		case bf16 && useTileBF16(d, len(t.qs)):
			t.bf16 = packQueriesBF16(t.qs, d)
		case useTile12(d, len(t.qs)):
			t.packed = packQueries(t.qs, d)
		case len(t.qs) >= 3:
			t.flat = make([]float32, 0, len(t.qs)*d)
			for _, q := range t.qs {
				t.flat = append(t.flat, q...)
			}
		}
		tiles = append(tiles, t)
	}
	return tiles
}

// packQueries lays out up to tileQueries queries of dimension d (a multiple
// of 8) for the AVX-512 tile: for each 8-float chunk c, six 16-float
// vectors, vector p holding chunk c of query 2p then chunk c of query 2p+1.
// Missing queries are zeros.
func packQueries(qs [][]float32, d int) []float32 { return packPairs(qs, d, 8) }

// packPairs lays out up to tileQueries queries of dimension d (a multiple
// of chunk) in pairs: for each chunk c of chunk elements, six vectors of
// 2·chunk, vector p holding chunk c of query 2p then chunk c of query
// 2p+1. Missing queries are zeros. (packQueries and packQueriesBF16.)
func packPairs[T any](qs [][]T, d, chunk int) []T {
	const pairs = tileQueries / 2
	p := make([]T, d*tileQueries)
	for i, q := range qs {
		for c := 0; c < d/chunk; c++ {
			off := (c*pairs+i/2)*2*chunk + (i%2)*chunk
			copy(p[off:off+chunk], q[c*chunk:(c+1)*chunk])
		}
	}
	return p
}

// dotTile sets out[i][r] to the inner product of t.qs[i] with row r of rows
// (row-major, d = len(t.qs[0]) columns, at most blockRows rows), through the
// widest register tile the CPU offers. Every path gives each score the bits
// dotRows gives it.
func dotTile(out *[tileQueries][blockRows]float32, t *qtile, rows []float32) {
	d := len(t.qs[0])
	n := len(rows) / d
	if dotTileAsm(out, t, rows, n) {
		return
	}
	j := 0
	for ; j+1 < len(t.qs); j += 2 {
		dotRows2(out[j][:n], out[j+1][:n], t.qs[j], t.qs[j+1], rows)
	}
	if j < len(t.qs) {
		dotRows(out[j][:n], t.qs[j], rows)
	}
}
