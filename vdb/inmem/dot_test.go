package inmem

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

func randFloats(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// TestDotRowsMatchesGeneric checks the kernel in use (assembly on amd64 with
// AVX2) against a float64 reference, for dimensions and row counts around
// its unrolling boundaries.
func TestDotRowsMatchesGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, d := range []int{1, 3, 8, 16, 24, 40, 384, 385} {
		for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 9, 130} {
			q := randFloats(r, d)
			rows := randFloats(r, n*d)
			q1 := randFloats(r, d)
			out := make([]float32, n)
			dotRows(out, q, rows)
			out0, out1 := make([]float32, n), make([]float32, n)
			dotRows2(out0, out1, q, q1, rows)
			for i := range out {
				var want, want1 float64
				for j := range q {
					want += float64(q[j]) * float64(rows[i*d+j])
					want1 += float64(q1[j]) * float64(rows[i*d+j])
				}
				tol := 1e-4 * math.Sqrt(float64(d))
				assert.InDelta(t, want, out[i], tol, "dotRows d=%d n=%d row %d", d, n, i)
				assert.InDelta(t, want, out0[i], tol, "dotRows2 first query d=%d n=%d row %d", d, n, i)
				assert.InDelta(t, want1, out1[i], tol, "dotRows2 second query d=%d n=%d row %d", d, n, i)
			}
		}
	}
}

func BenchmarkDotRows(b *testing.B) {
	const d = 384
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1000, 100_000} {
		q := randFloats(r, d)
		rows := randFloats(r, n*d)
		out := make([]float32, blockRows)
		for _, kernel := range []string{"asm", "gonum"} {
			b.Run(fmt.Sprintf("n=%d/%s", n, kernel), func(b *testing.B) {
				b.SetBytes(int64(n * d * 4))
				for b.Loop() {
					for lo := 0; lo < n; lo += blockRows {
						hi := min(lo+blockRows, n)
						if kernel == "asm" {
							dotRows(out[:hi-lo], q, rows[lo*d:hi*d])
						} else {
							dotRowsGeneric(out[:hi-lo], q, rows[lo*d:hi*d])
						}
					}
				}
			})
		}
	}
}
