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
func dotRows3AVX2(out *float32, ostride int, q *float32, rows *float32, n int, d int)

//go:noescape
func dotRows12AVX512(out *float32, ostride int, qp *float32, rows *float32, n int, d int)

// fmaPeakAVX512 runs n rounds of 24 independent 512-bit fused
// multiply-adds (768 flops): the float32 peak, for the benchmarks.
//
//go:noescape
func fmaPeakAVX512(n int)

// fmaPeak runs n rounds of 768 flops at the CPU's peak rate and reports
// whether it could (AVX-512).
func fmaPeak(n int) bool {
	if !useAVX2 || !useAVX512 {
		return false
	}
	fmaPeakAVX512(n)
	return true
}

//go:noescape
func skipBelowAVX512(s *float32, n int, floor float32) int

// skipBelow returns how many leading scores are below floor: the index of
// the first s[i] with !(s[i] < floor), or len(s).
func skipBelow(s []float32, floor float32) int {
	i := 0
	if m := len(s) &^ 15; m > 0 && useAVX2 && useAVX512 {
		if i = skipBelowAVX512(&s[0], m, floor); i < m {
			return i
		}
	}
	for ; i < len(s) && s[i] < floor; i++ {
	}
	return i
}

// useAVX512 selects the AVX-512 float32 batch tile (a variable for tests).
var useAVX512 = useAVX2 && cpu.X86.HasAVX512F

// useTile12 reports whether a tile of nq queries of dimension d takes the
// AVX-512 twelve-query kernel.
func useTile12(d, nq int) bool { return useAVX2 && useAVX512 && d%8 == 0 && nq >= tileMin }

// dotTileAsm is dotTile's assembly: the AVX-512 four-row × twelve-query
// tile where the CPU has it and the tile was packed for it, else the AVX2
// four-row × three-query tile (then dotRows2 and dotRows for the last one or
// two queries). The last n%4 rows go through dotRows, which gives the same
// bits. It reports false, doing nothing, without AVX2 or when d is not a
// multiple of 8.
func dotTileAsm(out *[tileQueries][blockRows]float32, t *qtile, rows []float32, n int) bool {
	d := len(t.qs[0])
	if !useAVX2 || d%8 != 0 || n == 0 {
		return false
	}
	_ = rows[n*d-1]
	const ostride = blockRows * 4
	m := n &^ 3
	nq := len(t.qs)
	tiled := 0 // queries whose first m rows the tile kernels scored
	if t.packed != nil && useTile12(d, nq) {
		_ = t.packed[tileQueries*d-1]
		if m > 0 {
			dotRows12AVX512(&out[0][0], ostride, &t.packed[0], &rows[0], m, d)
		}
		tiled = nq
	} else {
		for ; tiled+3 <= nq; tiled += 3 {
			_ = t.flat[(tiled+3)*d-1]
			if m > 0 {
				dotRows3AVX2(&out[tiled][0], ostride, &t.flat[tiled*d], &rows[0], m, d)
			}
		}
		j := tiled
		if j+1 < nq {
			dotRows2(out[j][:n], out[j+1][:n], t.qs[j], t.qs[j+1], rows)
			j += 2
		}
		if j < nq {
			dotRows(out[j][:n], t.qs[j], rows)
		}
	}
	if m < n {
		for i := range tiled {
			dotRows(out[i][m:n], t.qs[i], rows[m*d:])
		}
	}
	return true
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

// useVNNI selects the AVX-512 VNNI batch kernel (a variable for tests).
var useVNNI = useAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VNNI

//go:noescape
func dotCodes6VNNI(outs *[6]*int32, qs *[6]*int16, codes *int8, n int, d int)

// dotCodesTile runs the 4-row × 6-query AVX-512 VNNI kernel when the CPU
// has it and there are six queries, and reports whether it did.
func dotCodesTile(out [][]int32, as [][]int16, codes []int8) bool {
	if !useAVX2 || !useVNNI || len(as) != 6 || len(out) != 6 {
		return false
	}
	d := len(as[0])
	n := len(out[0])
	if d%16 != 0 || n == 0 {
		return false
	}
	_ = codes[n*d-1]
	var outs [6]*int32
	var qs [6]*int16
	for i := range 6 {
		_ = out[i][n-1]
		_ = as[i][d-1]
		outs[i], qs[i] = &out[i][0], &as[i][0]
	}
	if m := n &^ 3; m > 0 {
		dotCodes6VNNI(&outs, &qs, &codes[0], m, d)
	}
	for r := n &^ 3; r < n; r++ { // the last n%4 rows
		for i := range 6 {
			dotCodes(out[i][r:r+1], as[i], codes[r*d:(r+1)*d])
		}
	}
	return true
}

//go:noescape
func dotCodes6VNNI8(outs *[6]*int32, qs *[6]*uint8, codes *int8, n int, d int)

// dotBytesTile is dotCodesTile for byte queries (u[j] = a[j]+128, |a[j]| ≤
// 127) through VPDPBUSD: out[i][r] = Σ a_i[j]·c_r[j], given meta[r].csum =
// Σ c_r[j].
// It reports false, doing nothing, when the CPU lacks VNNI or the shapes do
// not fit.
func dotBytesTile(out [][]int32, us [][]uint8, codes []int8, meta []rowMeta) bool {
	if !useAVX2 || !useVNNI || len(us) != 6 || len(out) != 6 {
		return false
	}
	d := len(us[0])
	n := len(out[0])
	if d%32 != 0 || n < 4 || len(meta) != n {
		return false
	}
	_ = codes[n*d-1]
	var outs [6]*int32
	var qs [6]*uint8
	for i := range 6 {
		_ = out[i][n-1]
		_ = us[i][d-1]
		outs[i], qs[i] = &out[i][0], &us[i][0]
	}
	m := n &^ 3
	dotCodes6VNNI8(&outs, &qs, &codes[0], m, d)
	if m < n { // the last n%4 rows: rerun the tile over the last four
		var tail [6][4]int32
		var touts [6]*int32
		for i := range 6 {
			touts[i] = &tail[i][0]
		}
		dotCodes6VNNI8(&touts, &qs, &codes[(n-4)*d], 4, d)
		for i := range 6 {
			copy(out[i][n-4:], tail[i][:])
		}
	}
	for i := range 6 {
		o := out[i]
		for r := range meta {
			o[r] -= 128 * meta[r].csum // wraps like the kernel: the result is exact
		}
	}
	return true
}

// useBytes reports whether a batch over codes of dimension d should code
// its queries as bytes for dotBytesTile.
func useBytes(d int) bool { return useAVX2 && useVNNI && d%32 == 0 && byteQueries(d) }

//go:noescape
func dotBytes1VNNI(out *int32, q *uint8, codes *int8, n int, d int)

// useBytes1 reports whether a single query over codes of dimension d can
// take the AVX-512 VNNI single-query byte kernel (dotBytes).
func useBytes1(d int) bool { return useAVX2 && useVNNI && d%64 == 0 && byteQueries(d) }

// dotBytes sets out[r] to Σ a[j]·c_r[j] for the byte query u (u[j] =
// a[j]+128, |a[j]| ≤ 127) through the single-query VNNI kernel, given
// meta[r].csum = Σ c_r[j]. It reports false, doing nothing, when the CPU
// lacks VNNI or the shapes do not fit (fewer than four rows, d not a
// multiple of 64).
func dotBytes(out []int32, u []uint8, codes []int8, meta []rowMeta) bool {
	d, n := len(u), len(out)
	if !useBytes1(d) || n < 4 || len(meta) != n {
		return false
	}
	_ = codes[n*d-1]
	m := n &^ 3
	dotBytes1VNNI(&out[0], &u[0], &codes[0], m, d)
	if m < n { // the last n%4 rows: rerun the kernel over the last four
		var tail [4]int32
		dotBytes1VNNI(&tail[0], &u[0], &codes[(n-4)*d], 4, d)
		copy(out[n-4:], tail[:])
	}
	for r := range meta {
		out[r] -= 128 * meta[r].csum // wraps like the kernel: the result is exact
	}
	return true
}

//go:noescape
func encodeRowAVX2(dst *int8, x *float32, n int, inv, s float64) (csum int32, r2, x2 float64)

//go:noescape
func absMaxBitsAVX2(x *float32, n int) uint32

// useBF16 selects the bfloat16 pass of the float32 batch tile (bf16.go)
// where the CPU has AVX-512 BF16 (a variable for tests).
var useBF16 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BF16

// useTileBF16 reports whether a tile of nq queries of dimension d takes the
// bfloat16 pass: where the AVX-512 twelve-query tile runs, the CPU has
// AVX-512 BF16 and d is a multiple of 16.
func useTileBF16(d, nq int) bool { return useTile12(d, nq) && useBF16 && d%16 == 0 }

//go:noescape
func dotRows12BF16(out *float32, ostride int, qp *uint16, rows *uint16, n int, d int)

//go:noescape
func toBF16AVX512(dst *uint16, src *float32, n int)

// toBF16 sets dst[i] to src[i] rounded to bfloat16 (toBF16Generic),
// sixteen at a time where the CPU has AVX-512 BF16.
func toBF16(dst []uint16, src []float32) {
	m := len(src) &^ 15
	if useBF16 && m > 0 {
		_ = dst[len(src)-1]
		toBF16AVX512(&dst[0], &src[0], m)
	} else {
		m = 0
	}
	toBF16Generic(dst[m:len(src)], src[m:])
}
