//go:build !amd64 || purego

package inmem

// useAVX2 is always false here; the test hooks switch it on amd64.
var useAVX2 = false

// useVNNI is always false here.
var useVNNI = false

// useAVX512 is always false here.
var useAVX512 = false

// useBF16 is always false here.
var useBF16 = false

// fmaPeak reports false: there is no peak probe here.
func fmaPeak(n int) bool { return false }

// skipBelow returns how many leading scores are below floor: the index of
// the first s[i] with !(s[i] < floor), or len(s).
func skipBelow(s []float32, floor float32) int {
	i := 0
	for ; i < len(s) && s[i] < floor; i++ {
	}
	return i
}

// useTile12 reports false: there is no AVX-512 tile here.
func useTile12(d, nq int) bool { return false }

// dotTileAsm reports false: dotTile runs the portable code.
func dotTileAsm(out *[tileQueries][blockRows]float32, t *qtile, rows []float32, n int) bool {
	return false
}

// dotRows sets out[i] to the inner product of q with the i-th row of rows.
func dotRows(out, q, rows []float32) { dotRowsGeneric(out, q, rows) }

// dotRows2 is dotRows for two queries at once.
func dotRows2(out0, out1, q0, q1, rows []float32) {
	dotRowsGeneric(out0, q0, rows)
	dotRowsGeneric(out1, q1, rows)
}

// dotCodes sets out[i] to the exact integer inner product of q with the i-th
// row of codes.
func dotCodes(out []int32, q []int16, codes []int8) { dotCodesGeneric(out, q, codes) }

// dotCodes2 is dotCodes for two queries at once.
func dotCodes2(out0, out1 []int32, q0, q1 []int16, codes []int8) {
	dotCodesGeneric(out0, q0, codes)
	dotCodesGeneric(out1, q1, codes)
}

// dotCodesTile reports false: there is no wide tile kernel here.
func dotCodesTile(out [][]int32, as [][]int16, codes []int8) bool { return false }

// dotBytesTile reports false: there is no byte kernel here.
func dotBytesTile(out [][]int32, us [][]uint8, codes []int8, meta []rowMeta) bool { return false }

// useBytes reports false: there is no byte kernel here.
func useBytes(d int) bool { return false }

// useBytes1 reports false: there is no single-query byte kernel here.
func useBytes1(d int) bool { return false }

// dotBytes reports false: there is no single-query byte kernel here.
func dotBytes(out []int32, u []uint8, codes []int8, meta []rowMeta) bool { return false }

// encodeRowAVX2 is never called here (useAVX2 is false).
func encodeRowAVX2(dst *int8, x *float32, n int, inv, s float64) (csum int32, r2, x2 float64) {
	panic("inmem: no AVX2 kernel in this build")
}

// absMaxBitsAVX2 is never called here (useAVX2 is false).
func absMaxBitsAVX2(x *float32, n int) uint32 { panic("inmem: no AVX2 kernel in this build") }

// dotCols sets out[i] to Σ_k t.as[k]·blk[t.offs[k]+i] for every row i of
// the column block blk.
func dotCols(out *[blockRows]int32, t colTerms, blk []int8) { dotColsGeneric(out[:], t, blk) }

// useTileBF16 reports false: there is no bfloat16 tile here.
func useTileBF16(d, nq int) bool { return false }

// toBF16 sets dst[i] to src[i] rounded to bfloat16.
func toBF16(dst []uint16, src []float32) { toBF16Generic(dst, src) }

// dotRows12BF16 is never called here (useTileBF16 is false).
func dotRows12BF16(out *float32, ostride int, qp *uint16, rows *uint16, n int, d int) {
	panic("inmem: no bfloat16 kernel in this build")
}
