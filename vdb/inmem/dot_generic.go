//go:build !amd64 || purego

package inmem

// dotRows sets out[i] to the inner product of q with the i-th row of rows.
func dotRows(out, q, rows []float32) { dotRowsGeneric(out, q, rows) }
