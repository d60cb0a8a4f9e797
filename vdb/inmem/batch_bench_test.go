//go:build unix

package inmem_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem/internal/cputime"
	"github.com/agentmem/agentmem/internal/testvec"
	"github.com/agentmem/agentmem/vdb/inmem"
)

// peakGFLOPs runs the FMA peak probe on w goroutines at once and returns
// the float32 GFLOP/s they reached together and the GFLOP per CPU-second of
// the process, or zeros without AVX-512.
func peakGFLOPs(w int) (wall, cpu float64) {
	const rounds = 1 << 17 // ~100 Mflop a goroutine
	if !inmem.FMAPeak(1) {
		return 0, 0
	}
	cpu0, start := cputime.Process().Seconds(), time.Now()
	var wg sync.WaitGroup
	for range w {
		wg.Go(func() { inmem.FMAPeak(rounds) })
	}
	wg.Wait()
	flops := float64(w) * 768 * rounds
	return flops / time.Since(start).Seconds() / 1e9, flops / (cputime.Process().Seconds() - cpu0) / 1e9
}

// medianOf returns the median of x, leaving x as it was.
func medianOf(x []float64) float64 {
	x = slices.Clone(x)
	slices.Sort(x)
	return x[len(x)/2]
}

// BenchmarkBatchFloat32 measures the float32 batch path (SearchBatch
// without codes) at N=100k, d=384, k=10, for batches of 200 and 1,024
// queries, on one worker and on two, each batch followed by the FMA peak
// probe on as many goroutines (the CPU's float32 peak: 512-bit fused
// multiply-adds and nothing else) so that both see the same load. Reported,
// as medians: queries/s and GFLOP/s (2·N·d flops a query) on 1 and 2
// workers, GFLOP per CPU-second of the process on one worker and of the
// probe, and their ratio (what the code reaches of the core it gets,
// whatever the machine's other load; the wall-clock shares of peak are
// only meaningful on an idle machine), the peak on 1 and 2 goroutines, the share of peak reached, the
// speed-up of the second worker, the rate at which the rows were read, and
// the machine's read bandwidth measured once in the same run. Where the
// CPU has AVX-512 BF16 the batch scores in bfloat16 first (bf16.go), two
// multiply-adds for each of the probe's, so its GFLOP/s (counted as
// float32 flops) and share of the peak may pass the probe's.
//
//	go test -run '^$' -bench BatchFloat32 -benchtime 5x ./vdb/inmem
func BenchmarkBatchFloat32(b *testing.B) {
	const n = 100_000
	db1 := filledDB(b, n, inmem.WithWorkers(1))
	db2 := filledDB(b, n, inmem.WithWorkers(2))
	queries := testvec.Unit(99, 1024, benchDim)
	bw := memBandwidth()
	for _, nq := range []int{200, 1024} {
		b.Run(fmt.Sprintf("n=%d/batch=%d", n, nq), func(b *testing.B) {
			ctx := b.Context()
			var t1, t2, p1, p2, c1, pc1 []float64
			for b.Loop() {
				for _, c := range []struct {
					db    *inmem.DB
					w     int
					times *[]float64
					peak  *[]float64
				}{{db1, 1, &t1, &p1}, {db2, 2, &t2, &p2}} {
					cpu0, start := cputime.Process().Seconds(), time.Now()
					if _, err := c.db.SearchBatch(ctx, queries[:nq], 10); err != nil {
						b.Fatal(err)
					}
					*c.times = append(*c.times, time.Since(start).Seconds())
					if c.w == 1 {
						c1 = append(c1, cputime.Process().Seconds()-cpu0)
					}
					wall, cpu := peakGFLOPs(c.w)
					*c.peak = append(*c.peak, wall)
					if c.w == 1 {
						pc1 = append(pc1, cpu)
					}
				}
			}
			flops := 2 * float64(n) * benchDim * float64(nq)
			g1, g2 := flops/medianOf(t1)/1e9, flops/medianOf(t2)/1e9
			b.ReportMetric(float64(nq)/medianOf(t1), "q/s-1w")
			b.ReportMetric(float64(nq)/medianOf(t2), "q/s-2w")
			b.ReportMetric(g1, "GFLOP/s-1w")
			b.ReportMetric(g2, "GFLOP/s-2w")
			b.ReportMetric(medianOf(p1), "peak-GFLOP/s-1w")
			b.ReportMetric(medianOf(p2), "peak-GFLOP/s-2w")
			if medianOf(p1) > 0 {
				b.ReportMetric(g1/medianOf(p1), "of-peak-1w")
				b.ReportMetric(g2/medianOf(p2), "of-peak-2w")
			}
			b.ReportMetric(flops/medianOf(c1)/1e9, "GFLOP/cpu-s-1w")
			if pc := medianOf(pc1); pc > 0 {
				b.ReportMetric(pc, "peak-GFLOP/cpu-s")
				b.ReportMetric(flops/medianOf(c1)/1e9/pc, "of-peak-cpu-1w")
			}
			b.ReportMetric(medianOf(t1)/medianOf(t2), "2w/1w")
			b.ReportMetric(float64(n)*benchDim*4/medianOf(t2)/1e9, "rows-GB/s-2w")
			b.ReportMetric(bw, "membw-GB/s")
		})
	}
}
