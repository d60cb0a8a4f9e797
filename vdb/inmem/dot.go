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
