package inmem

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// BenchmarkEncodeRow measures the int8 coding of one d=384 row, which every
// Add into a codes database pays.
func BenchmarkEncodeRow(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	x := randFloats(r, 384)
	dst := make([]int8, len(x))
	b.SetBytes(int64(4 * len(x)))
	for b.Loop() {
		encodeRow(dst, x)
	}
}

// TestEncodeRow checks what the bound relies on, for ordinary, tiny
// (subnormal), huge and odd-length rows: codes in [-codeMax, codeMax], their
// sum, and stored norms at least the true ‖x − s·c‖ and ‖x‖ (computed here
// in big steps of float64, exact enough at these sizes).
//
// It also checks the AVX2 kernels against the portable loop (switched on
// and off here, so the test is not parallel): the same codes and sum, the
// norms within rounding.
func TestEncodeRow(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for _, scale := range []float64{1, 1e-30, 0x1p-140, 0x1p-148, 1e30} {
		for _, d := range []int{1, 2, 3, 4, 7, 8, 9, 16, 383, 384, 512} {
			x := make([]float32, d)
			for j := range x {
				x[j] = float32(r.NormFloat64() * scale)
			}
			dst := make([]int8, d)
			m := encodeRow(dst, x)
			restore := SetGeneric()
			gdst := make([]int8, d)
			gm := encodeRow(gdst, x)
			restore()
			if !slices.Equal(dst, gdst) || m.csum != gm.csum || m.scale != gm.scale {
				t.Errorf("scale %g d=%d: kernel and portable codes differ", scale, d)
			}
			for _, p := range [][2]float32{{m.rnorm, gm.rnorm}, {m.xnorm, gm.xnorm}} {
				if math.Abs(float64(p[0])-float64(p[1])) > 1e-6*float64(p[1]) {
					t.Errorf("scale %g d=%d: norms %v and %v", scale, d, p[0], p[1])
				}
			}
			var csum int32
			var r2, x2 float64
			for j, v := range x {
				c := dst[j]
				if c < -codeMax || c > codeMax {
					t.Fatalf("scale %g d=%d: code %d out of range", scale, d, c)
				}
				csum += int32(c)
				res := float64(v) - float64(m.scale)*float64(c)
				r2 += res * res
				x2 += float64(v) * float64(v)
			}
			if csum != m.csum {
				t.Errorf("scale %g d=%d: csum %d, want %d", scale, d, m.csum, csum)
			}
			if float64(m.rnorm) < math.Sqrt(r2) || float64(m.xnorm) < math.Sqrt(x2) {
				t.Errorf("scale %g d=%d: norms %v %v below %v %v", scale, d, m.rnorm, m.xnorm, math.Sqrt(r2), math.Sqrt(x2))
			}
		}
	}
}
