package inmem

import (
	"fmt"
	"math"
	"math/big"
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

// fma32 is a·b+c rounded once to float32, as VFMADD231PS computes it. The
// product is exact in float64; so is the sum when its rounding error is 0,
// and otherwise rounding the float64 sum to float32 is still right unless
// it landed on a float32 midpoint (double rounding), or is tiny: then the
// exact value in a wide big.Float, rounded to nearest even.
func fma32(a, b, c float32) float32 {
	p, y := float64(a)*float64(b), float64(c)
	s := p + y
	bb := s - p
	exact := (p-(s-bb))+(y-bb) == 0
	if exact || math.Abs(s) > 0x1p-100 && math.Float64bits(s)&(1<<29-1) != 1<<28 {
		return float32(s)
	}
	x := new(big.Float).SetPrec(512).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetPrec(512).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetPrec(512).SetFloat64(float64(c)))
	f, _ := x.Float32()
	return f
}

// dot8 is the pure-Go reference of the assembly kernels' order of
// operations: eight lanes, each a chain of fused multiply-adds over the
// 8-float chunks in increasing order, then ((l0+l4)+(l1+l5)) +
// ((l2+l6)+(l3+l7)). d must be a multiple of 8.
func dot8(q, row []float32) float32 {
	var l [8]float32
	for c := 0; c < len(q); c += 8 {
		for i := range l {
			l[i] = fma32(q[c+i], row[c+i], l[i])
		}
	}
	return ((l[0] + l[4]) + (l[1] + l[5])) + ((l[2] + l[6]) + (l[3] + l[7]))
}

// tilePaths are the float32 batch tile's paths: the AVX-512 twelve-query
// kernel, the AVX2 three-query kernel and the portable code; each entry
// switches its path on and returns what restores the previous one. On a
// CPU or build without a kernel the path falls back to the next, which is
// checked all the same. (The bfloat16 pass, which "avx512" switches off,
// is checked in bf16_test.go.)
var tilePaths = []struct {
	name string
	set  func() (restore func())
}{
	{"avx512", SetNoBF16},
	{"avx2", SetNoAVX512},
	{"generic", SetGeneric},
}

// TestDotTile checks the float32 batch tile on each path: every score has
// the bits dotRows gives that row alone (which the codes path's rescoring
// relies on), the assembly paths match dot8, the exact reference of their
// order of operations, bit for bit, and every path is within rounding of a
// float64 sum. Dimensions, row counts and query counts straddle the
// kernels' boundaries (8-float chunks, four rows, three and twelve
// queries, the AVX-512 kernel's minimum of tileMin).
func TestDotTile(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, path := range tilePaths {
		restore := path.set()
		for _, d := range []int{1, 7, 8, 16, 24, 40, 384, 385, 392} {
			for _, n := range []int{1, 3, 4, 5, 7, 9, 128} {
				rows := randFloats(r, n*d)
				for _, nq := range []int{1, 2, 3, 4, 5, 7, 8, 11, 12} {
					qs := make([][]float32, nq)
					for i := range qs {
						qs[i] = randFloats(r, d)
					}
					tiles := makeTiles(qs, d, true)
					require.Len(t, tiles, 1)
					assert.Equal(t, useTile12(d, nq), tiles[0].packed != nil)
					var out [tileQueries][blockRows]float32
					dotTile(&out, &tiles[0], rows)
					var one [1]float32
					for i, q := range qs {
						for row := range n {
							x := rows[row*d : (row+1)*d]
							dotRows(one[:], q, x)
							got := out[i][row]
							if math.Float32bits(one[0]) != math.Float32bits(got) {
								t.Fatalf("%s d=%d n=%d nq=%d query %d row %d: tile %v, dotRows %v", path.name, d, n, nq, i, row, got, one[0])
							}
							if useAVX2 && d%8 == 0 {
								if want := dot8(q, x); math.Float32bits(want) != math.Float32bits(got) {
									t.Fatalf("%s d=%d n=%d nq=%d query %d row %d: tile %v, reference %v", path.name, d, n, nq, i, row, got, want)
								}
							}
							var want float64
							for j := range q {
								want += float64(q[j]) * float64(x[j])
							}
							assert.InDelta(t, want, got, 1e-4*math.Sqrt(float64(d)), "%s d=%d n=%d nq=%d query %d row %d", path.name, d, n, nq, i, row)
						}
					}
				}
			}
		}
		restore()
	}
}

// TestFMA32 checks the reference's fused multiply-add where rounding the
// float64 sum to float32 would round twice: a·b+c = 1 + 2⁻²⁴ + 2⁻⁷⁰, just
// above the float32 midpoint 1 + 2⁻²⁴, must round up to 1 + 2⁻²³, while
// the float64 sum is the midpoint itself, which rounds to even, 1.
func TestFMA32(t *testing.T) {
	a := float32(-0x1p-24 * (1 + 0x1p-23))
	b := float32(1 - 0x1p-23) // a·b = -2⁻²⁴ + 2⁻⁷⁰
	c := float32(1 + 0x1p-23)
	require.Equal(t, float32(1), float32(float64(a)*float64(b)+float64(c)), "the float64 sum rounds twice")
	assert.Equal(t, float32(1+0x1p-23), fma32(a, b, c))
	assert.Equal(t, float32(7), fma32(2, 3, 1))
	assert.Equal(t, float32(0x1p-140), fma32(0x1p-70, 0x1p-70, 0), "subnormal")
}

// TestMakeTiles checks the grouping of a batch and the AVX-512 packing
// (in bfloat16 where that pass runs).
func TestMakeTiles(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	const d = 16
	qs := make([][]float32, 2*tileQueries+tileMin)
	for i := range qs {
		qs[i] = randFloats(r, d)
	}
	tiles := makeTiles(qs, d, true)
	require.Len(t, tiles, 3)
	for k, tl := range tiles {
		assert.Equal(t, k*tileQueries, tl.first)
		assert.Equal(t, qs[tl.first:tl.first+len(tl.qs)], tl.qs)
		if useTileBF16(d, len(tl.qs)) {
			assert.Nil(t, tl.flat)
			assert.Nil(t, tl.packed)
			assert.Equal(t, packQueriesBF16(tl.qs, d), tl.bf16)
			continue
		}
		assert.Nil(t, tl.bf16)
		if useTile12(d, len(tl.qs)) {
			assert.Nil(t, tl.flat)
			assert.Equal(t, packQueries(tl.qs, d), tl.packed)
			continue
		}
		assert.Nil(t, tl.packed)
		for i, q := range tl.qs {
			assert.Equal(t, q, tl.flat[i*d:(i+1)*d])
		}
	}
	p := packQueries(qs[:3], d)
	require.Len(t, p, tileQueries*d)
	// Chunk 1 of query 2 (pair 1, first half) and of query 1 (pair 0,
	// second half); query 3 is missing: zeros.
	assert.Equal(t, qs[2][8:16], p[96+16:96+24])
	assert.Equal(t, qs[1][8:16], p[96+8:96+16])
	assert.Equal(t, make([]float32, 8), p[96+24:96+32])
}

// TestSkipBelow checks the vectorised skip over scores below a floor (on
// each path) against a plain loop, with the first score not below it at
// every position, in and after the 16-float steps, NaN counting as not
// below.
func TestSkipBelow(t *testing.T) {
	for _, path := range tilePaths {
		restore := path.set()
		for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 128, 130} {
			for at := 0; at <= n; at++ {
				for _, x := range []float32{0.5, 0.25, float32(math.NaN())} {
					s := make([]float32, n)
					for i := range s {
						s[i] = 0.125 - float32(i%7)/8 // below 0.25
					}
					if at < n {
						s[at] = x
					}
					want := 0
					for want < n && s[want] < 0.25 {
						want++
					}
					assert.Equal(t, want, skipBelow(s, 0.25), "%s n=%d at=%d x=%v", path.name, n, at, x)
				}
			}
		}
		restore()
	}
}
