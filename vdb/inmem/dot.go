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
