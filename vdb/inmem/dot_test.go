package inmem

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	t.Parallel()

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

// TestDotRowsBitIdentical checks the property the codes path relies on:
// a row's score is the same float32, bit for bit, whether the row is scored
// alone, in a group of four, in the tail, or paired with another query.
func TestDotRowsBitIdentical(t *testing.T) {
	t.Parallel()

	r := rand.New(rand.NewPCG(3, 4))
	for _, d := range []int{8, 16, 24, 40, 384, 385} {
		for _, n := range []int{1, 3, 4, 5, 9, 130} {
			q, q1 := randFloats(r, d), randFloats(r, d)
			rows := randFloats(r, n*d)
			all := make([]float32, n)
			dotRows(all, q, rows)
			out0, out1 := make([]float32, n), make([]float32, n)
			dotRows2(out0, out1, q, q1, rows)
			var one, one1 [1]float32
			for i := range n {
				dotRows(one[:], q, rows[i*d:(i+1)*d])
				dotRows(one1[:], q1, rows[i*d:(i+1)*d])
				assert.Equal(t, math.Float32bits(one[0]), math.Float32bits(all[i]), "d=%d n=%d row %d", d, n, i)
				assert.Equal(t, math.Float32bits(one[0]), math.Float32bits(out0[i]), "pair, d=%d n=%d row %d", d, n, i)
				assert.Equal(t, math.Float32bits(one1[0]), math.Float32bits(out1[i]), "pair, d=%d n=%d row %d", d, n, i)
			}
		}
	}
}

// TestDotCodes checks the integer kernels against a direct sum, at the
// extreme values the caller allows.
func TestDotCodes(t *testing.T) {
	t.Parallel()

	r := rand.New(rand.NewPCG(5, 6))
	for _, d := range []int{16, 32, 48, 384, 400, 17} {
		qm := queryMax(d)
		for _, n := range []int{1, 3, 4, 5, 9, 130} {
			q, q1 := make([]int16, d), make([]int16, d)
			codes := make([]int8, n*d)
			for j := range q {
				q[j] = int16(r.IntN(2*qm+1) - qm)
				q1[j] = int16(qm) // extremes: the largest possible sums
			}
			for j := range codes {
				codes[j] = int8(r.IntN(2*codeMax+1) - codeMax)
			}
			for j := range codes[:d] {
				codes[j] = codeMax
			}
			out, out0, out1 := make([]int32, n), make([]int32, n), make([]int32, n)
			dotCodes(out, q, codes)
			dotCodes2(out0, out1, q, q1, codes)
			for i := range n {
				var want, want1 int64
				for j := range d {
					want += int64(q[j]) * int64(codes[i*d+j])
					want1 += int64(q1[j]) * int64(codes[i*d+j])
				}
				assert.Equal(t, want, int64(out[i]), "d=%d n=%d row %d", d, n, i)
				assert.Equal(t, want, int64(out0[i]), "pair d=%d n=%d row %d", d, n, i)
				assert.Equal(t, want1, int64(out1[i]), "pair d=%d n=%d row %d", d, n, i)
			}
		}
	}
}

// TestDotCodesN checks the batch entry point (the VNNI tile where the CPU
// has it) against a direct sum, for 1 to 6 queries and row counts around
// the tile's four rows.
func TestDotCodesN(t *testing.T) {
	t.Parallel()

	r := rand.New(rand.NewPCG(7, 8))
	for _, d := range []int{16, 48, 384, 24} {
		qm := queryMax(d)
		for _, n := range []int{1, 3, 4, 5, 8, 11, 128} {
			for nq := 1; nq <= codesQueries; nq++ {
				as := make([][]int16, nq)
				out := make([][]int32, nq)
				for i := range as {
					as[i] = make([]int16, d)
					for j := range as[i] {
						as[i][j] = int16(r.IntN(2*qm+1) - qm)
					}
					out[i] = make([]int32, n)
				}
				for j := range as[0] {
					as[0][j] = int16(-qm)
				}
				codes := make([]int8, n*d)
				for j := range codes {
					codes[j] = int8(r.IntN(2*codeMax+1) - codeMax)
				}
				for j := range codes[:d] {
					codes[j] = -codeMax
				}
				dotCodesN(out, as, codes)
				for i := range as {
					for row := range n {
						var want int64
						for j := range d {
							want += int64(as[i][j]) * int64(codes[row*d+j])
						}
						assert.Equal(t, want, int64(out[i][row]), "d=%d n=%d nq=%d query %d row %d", d, n, nq, i, row)
					}
				}
			}
		}
	}
}

// TestDotBytesTile checks the VNNI byte kernel (where the CPU has it)
// against a direct sum, at the extremes of both codes.
func TestDotBytesTile(t *testing.T) {
	t.Parallel()

	if !useBytes(64) {
		t.Skip("no VNNI byte kernel on this CPU or build")
	}
	r := rand.New(rand.NewPCG(9, 10))
	for _, d := range []int{32, 64, 384} {
		for _, n := range []int{4, 5, 7, 8, 130} {
			us := make([][]uint8, 6)
			as := make([][]int16, 6)
			out := make([][]int32, 6)
			for i := range us {
				us[i], as[i], out[i] = make([]uint8, d), make([]int16, d), make([]int32, n)
				for j := range d {
					a := r.IntN(2*byteQueryMax+1) - byteQueryMax
					if i == 0 {
						a = -byteQueryMax
					}
					as[i][j], us[i][j] = int16(a), uint8(a+128)
				}
			}
			codes := make([]int8, n*d)
			meta := make([]rowMeta, n)
			for row := range n {
				for j := range d {
					c := int8(r.IntN(2*codeMax+1) - codeMax)
					if row == 0 {
						c = -codeMax
					}
					codes[row*d+j] = c
					meta[row].csum += int32(c)
				}
			}
			require.True(t, dotBytesTile(out, us, codes, meta))
			for i := range 6 {
				for row := range n {
					var want int64
					for j := range d {
						want += int64(as[i][j]) * int64(codes[row*d+j])
					}
					assert.Equal(t, want, int64(out[i][row]), "d=%d n=%d query %d row %d", d, n, i, row)
				}
			}
		}
	}
}

// TestDotBytes checks the single-query VNNI byte kernel (where the CPU has
// it) against a direct sum, at the extremes of both codes, for row counts
// that are and are not multiples of its four-row pass.
func TestDotBytes(t *testing.T) {
	t.Parallel()

	if !useBytes1(64) {
		t.Skip("no single-query VNNI byte kernel on this CPU or build")
	}
	r := rand.New(rand.NewPCG(11, 12))
	for _, d := range []int{64, 384, 512} {
		for _, n := range []int{4, 5, 6, 7, 8, 128, 130} {
			for q := range 3 {
				as, us := make([]int16, d), make([]uint8, d)
				for j := range d {
					a := r.IntN(2*byteQueryMax+1) - byteQueryMax
					switch q {
					case 0:
						a = -byteQueryMax
					case 1:
						a = byteQueryMax
					}
					as[j], us[j] = int16(a), uint8(a+128)
				}
				codes := make([]int8, n*d)
				meta := make([]rowMeta, n)
				for row := range n {
					for j := range d {
						c := int8(r.IntN(2*codeMax+1) - codeMax)
						switch row {
						case 0:
							c = -codeMax
						case 1:
							c = codeMax
						}
						codes[row*d+j] = c
						meta[row].csum += int32(c)
					}
				}
				out := make([]int32, n)
				require.True(t, dotBytes(out, us, codes, meta))
				want := make([]int32, n)
				dotCodesGeneric(want, as, codes)
				assert.Equal(t, want, out, "d=%d n=%d query %d", d, n, q)
			}
		}
	}
	// Shapes the kernel does not take: nothing is done.
	out := []int32{7, 7, 7}
	assert.False(t, dotBytes(out, make([]uint8, 64), make([]int8, 3*64), make([]rowMeta, 3)))
	assert.Equal(t, []int32{7, 7, 7}, out)
	assert.False(t, dotBytes(make([]int32, 4), make([]uint8, 32), make([]int8, 4*32), make([]rowMeta, 4)))
}
