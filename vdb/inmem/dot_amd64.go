//go:build amd64 && !purego

package inmem

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly kernel. It is a variable so tests can compare
// the kernel with the generic code.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func dotRowsAVX2(out *float32, q *float32, rows *float32, n int, d int)

// dotRows sets out[i] to the inner product of q with the i-th row of rows
// (row-major, len(q) columns). len(rows) must be len(out)*len(q).
func dotRows(out, q, rows []float32) {
	d := len(q)
	if !useAVX2 || d%8 != 0 || len(out) == 0 {
		dotRowsGeneric(out, q, rows)
		return
	}
	_ = rows[len(out)*d-1] // bounds check once, for the assembly's sake
	dotRowsAVX2(&out[0], &q[0], &rows[0], len(out), d)
}
