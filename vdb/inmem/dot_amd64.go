//go:build amd64 && !purego

package inmem

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly kernel. It is a variable so tests can compare
// the kernel with the generic code.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func dotRowsAVX2(out *float32, q *float32, rows *float32, n int, d int)

//go:noescape
func dotRows2AVX2(out0, out1 *float32, q0, q1 *float32, rows *float32, n int, d int)

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

// dotRows2 is dotRows for two queries at once, sharing each load of a row.
func dotRows2(out0, out1, q0, q1, rows []float32) {
	d := len(q0)
	if !useAVX2 || d%8 != 0 || len(out0) == 0 {
		dotRowsGeneric(out0, q0, rows)
		dotRowsGeneric(out1, q1, rows)
		return
	}
	n := len(out0)
	_ = out1[n-1]
	_ = q1[d-1]
	_ = rows[n*d-1]
	dotRows2AVX2(&out0[0], &out1[0], &q0[0], &q1[0], &rows[0], n, d)
}

//go:noescape
func dotCodesAVX2(out *int32, q *int16, codes *int8, n int, d int)

//go:noescape
func dotCodes2AVX2(out0, out1 *int32, q0, q1 *int16, codes *int8, n int, d int)

// dotCodes sets out[i] to the exact integer inner product of q with the i-th
// row of codes (row-major, len(q) columns).
func dotCodes(out []int32, q []int16, codes []int8) {
	d := len(q)
	if !useAVX2 || d%16 != 0 || len(out) == 0 {
		dotCodesGeneric(out, q, codes)
		return
	}
	_ = codes[len(out)*d-1]
	dotCodesAVX2(&out[0], &q[0], &codes[0], len(out), d)
}

// dotCodes2 is dotCodes for two queries at once, sharing each load of a row.
func dotCodes2(out0, out1 []int32, q0, q1 []int16, codes []int8) {
	d := len(q0)
	if !useAVX2 || d%16 != 0 || len(out0) == 0 {
		dotCodesGeneric(out0, q0, codes)
		dotCodesGeneric(out1, q1, codes)
		return
	}
	n := len(out0)
	_ = out1[n-1]
	_ = q1[d-1]
	_ = codes[n*d-1]
	dotCodes2AVX2(&out0[0], &out1[0], &q0[0], &q1[0], &codes[0], n, d)
}
