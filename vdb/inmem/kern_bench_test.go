package inmem

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// BenchmarkKernels measures the batch kernels on one core with everything in
// cache, in multiply-adds per second (the "MAC/s" metric, as bytes), the
// float32 tiles and the bfloat16 one (its multiply-adds counted as
// float32 flops) also in GFLOP/s beside fma-peak, the CPU's float32 peak
// (512-bit fused multiply-adds and nothing else) in the same run.
func BenchmarkKernels(b *testing.B) {
	const d, n = 384, 64
	r := rand.New(rand.NewPCG(1, 2))
	rows := randFloats(r, n*d)
	q0, q1 := randFloats(r, d), randFloats(r, d)
	codes := make([]int8, n*d)
	for i := range codes {
		codes[i] = int8(r.IntN(255) - 127)
	}
	a0, a1 := make([]int16, d), make([]int16, d)
	for i := range a0 {
		a0[i], a1[i] = int16(r.IntN(60000)-30000), int16(r.IntN(60000)-30000)
	}
	out0, out1 := make([]float32, n), make([]float32, n)
	i0, i1 := make([]int32, n), make([]int32, n)
	b.Run("float32-4x2", func(b *testing.B) {
		b.SetBytes(2 * n * d)
		for b.Loop() {
			dotRows2(out0, out1, q0, q1, rows)
		}
	})
	b.Run("fma-peak", func(b *testing.B) {
		const rounds = 1 << 16
		if !fmaPeak(1) {
			b.Skip("no AVX-512 on this CPU or build")
		}
		for b.Loop() {
			fmaPeak(rounds)
		}
		b.ReportMetric(768*rounds*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
	qs := make([][]float32, tileQueries)
	for i := range qs {
		qs[i] = randFloats(r, d)
	}
	var tout [tileQueries][blockRows]float32
	for _, path := range tilePaths {
		restore := path.set()
		tiles := makeTiles(qs, d, false)
		b.Run("float32-tile12-"+path.name, func(b *testing.B) {
			b.SetBytes(tileQueries * n * d)
			for b.Loop() {
				dotTile(&tout, &tiles[0], rows)
			}
			b.ReportMetric(2*tileQueries*n*d*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		restore()
	}
	b.Run("bfloat16-tile12", func(b *testing.B) {
		if !useTileBF16(d, tileQueries) {
			b.Skip("no AVX-512 BF16 on this CPU or build")
		}
		tiles := makeTiles(qs, d, true)
		rows16 := make([]uint16, n*d)
		toBF16(rows16, rows)
		b.SetBytes(tileQueries * n * d)
		for b.Loop() {
			dotTileBF16(&tout, &tiles[0], rows16, rows, n)
		}
		b.ReportMetric(2*tileQueries*n*d*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
	// The AVX-512 tile and the peak probe alternately, a few milliseconds
	// each, so that both see the same load: the tile's share of the peak.
	b.Run("float32-tile12-of-peak", func(b *testing.B) {
		if !fmaPeak(1) {
			b.Skip("no AVX-512 on this CPU or build")
		}
		tiles := makeTiles(qs, d, false)
		const calls = 200
		rounds := calls * 2 * tileQueries * n * d / 768 // the same flops
		var ratios []float64
		for b.Loop() {
			t0 := time.Now()
			for range calls {
				dotTile(&tout, &tiles[0], rows)
			}
			t1 := time.Now()
			fmaPeak(rounds)
			ratios = append(ratios, time.Since(t1).Seconds()/t1.Sub(t0).Seconds())
		}
		slices.Sort(ratios)
		b.ReportMetric(ratios[len(ratios)/2], "of-peak")
	})
	b.Run("int8-4x2", func(b *testing.B) {
		b.SetBytes(2 * n * d)
		for b.Loop() {
			dotCodes2(i0, i1, a0, a1, codes)
		}
	})
	as := make([][]int16, 6)
	outs := make([][]int32, 6)
	for i := range as {
		as[i] = a0
		outs[i] = make([]int32, n)
	}
	b.Run("int8-tile6", func(b *testing.B) {
		b.SetBytes(6 * n * d)
		for b.Loop() {
			dotCodesN(outs, as, codes)
		}
	})
	us := make([][]uint8, 6)
	for i := range us {
		us[i] = make([]uint8, d)
		for j := range us[i] {
			us[i][j] = uint8(r.IntN(255) + 1)
		}
	}
	meta := make([]rowMeta, n)
	b.Run("int8-bytes-tile6", func(b *testing.B) {
		b.SetBytes(6 * n * d)
		for b.Loop() {
			dotBytesTile(outs, us, codes, meta)
		}
	})
	qc := encodeQuery(q0)
	for i := range meta {
		meta[i] = rowMeta{scale: 0.01, rnorm: 0.01, xnorm: 1}
	}
	b.Run("bound", func(b *testing.B) {
		b.SetBytes(n)
		c := 0
		for b.Loop() {
			for i, dot := range i0 {
				if qc.bound(dot, meta[i]) >= 0.3 {
					c++
				}
			}
		}
	})
}
