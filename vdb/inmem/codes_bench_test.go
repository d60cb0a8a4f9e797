package inmem_test

import (
	"fmt"
	"os"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/agentmem/agentmem/internal/testvec"
	"github.com/agentmem/agentmem/vdb/inmem"
)

// memBandwidth measures the machine's read bandwidth as this process sees
// it: the median over a few runs of summing a 512 MiB array (on huge pages,
// like the database's rows) with one goroutine per P, in GB/s.
func memBandwidth() float64 {
	const words = 64 << 20 // 512 MiB of uint64
	fl := make([]float32, 2*words)
	inmem.AdviseHugePages(fl)
	buf := unsafe.Slice((*uint64)(unsafe.Pointer(&fl[0])), words)
	for i := range buf {
		buf[i] = uint64(i)
	}
	w := runtime.GOMAXPROCS(0)
	var rates []float64
	var sink uint64
	for range 5 {
		sums := make([]uint64, w)
		start := time.Now()
		var wg sync.WaitGroup
		for i := range w {
			part := buf[words*i/w : words*(i+1)/w]
			wg.Go(func() {
				var a, b, c, d, e, f, g, h uint64
				for len(part) >= 8 {
					a += part[0]
					b += part[1]
					c += part[2]
					d += part[3]
					e += part[4]
					f += part[5]
					g += part[6]
					h += part[7]
					part = part[8:]
				}
				sums[i] = a + b + c + d + e + f + g + h
			})
		}
		wg.Wait()
		rates = append(rates, float64(words*8)/time.Since(start).Seconds()/1e9)
		for _, s := range sums {
			sink += s
		}
	}
	runtime.KeepAlive(sink)
	slices.Sort(rates)
	return rates[len(rates)/2]
}

// BenchmarkCodes compares single-query search with and without int8 codes
// on the same vectors (d=384, k=10, random unit vectors), alternating the two
// query by query so that both see the same machine load. It first asserts
// that both return identical results (IDs, scores, order) for every query.
// Each round also runs the codes search with the AVX-512 VNNI kernels off
// (int8-noVNNI/float32: the AVX2 int16 kernel). Reported: each median
// latency, the ratios codes/float32, the scan rates the
// medians imply (bytes of float32 rows, or of codes plus row metadata, read
// per second), the machine's read bandwidth measured in the same run, the
// rows rescored per query, and the codes' memory over the float32 rows'.
// n=1000000 runs only with AGENTMEM_BENCH_1M=1 (~6 GB).
func BenchmarkCodes(b *testing.B) {
	bw := memBandwidth()
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			if n >= 1_000_000 && os.Getenv("AGENTMEM_BENCH_1M") == "" {
				b.Skip("set AGENTMEM_BENCH_1M=1 to run the million-vector benchmark (~6 GB)")
			}
			plain := filledDB(b, n)
			codes := filledDB(b, n, inmem.WithCodes(inmem.Int8))
			ctx := b.Context()
			queries := testvec.Unit(2, 64, benchDim)
			for i, q := range queries {
				a, err := plain.Search(ctx, q, 10)
				if err != nil {
					b.Fatal(err)
				}
				c, err := codes.Search(ctx, q, 10)
				if err != nil {
					b.Fatal(err)
				}
				if !reflect.DeepEqual(a, c) {
					b.Fatalf("query %d: codes %v, float32 %v", i, c, a)
				}
			}
			codes.ResetRescored()
			var tf, tc, ta []time.Duration
			i := 0
			for b.Loop() {
				q := queries[i%len(queries)]
				i++
				start := time.Now()
				if _, err := plain.Search(ctx, q, 10); err != nil {
					b.Fatal(err)
				}
				mid := time.Now()
				if _, err := codes.Search(ctx, q, 10); err != nil {
					b.Fatal(err)
				}
				end := time.Now()
				// The same search with the AVX-512 VNNI kernels off: the
				// AVX2 int16 kernel (what a CPU without VNNI runs).
				restore := inmem.SetNoVNNI()
				if _, err := codes.Search(ctx, q, 10); err != nil {
					b.Fatal(err)
				}
				restore()
				tf = append(tf, mid.Sub(start))
				tc = append(tc, end.Sub(mid))
				ta = append(ta, time.Since(end))
			}
			f, c := median(tf), median(tc)
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			rawBytes := float64(n * benchDim * 4)
			codeBytes := float64(n * (benchDim + 16))
			b.ReportMetric(ms(f), "float32-p50-ms")
			b.ReportMetric(ms(c), "int8-p50-ms")
			b.ReportMetric(float64(c)/float64(f), "int8/float32")
			b.ReportMetric(float64(median(ta))/float64(f), "int8-noVNNI/float32")
			b.ReportMetric(rawBytes/f.Seconds()/1e9, "float32-GB/s")
			b.ReportMetric(codeBytes/c.Seconds()/1e9, "int8-GB/s")
			b.ReportMetric(bw, "membw-GB/s")
			b.ReportMetric(float64(codes.Rescored())/float64(2*i), "rescored/query")
			b.ReportMetric(codeBytes/rawBytes, "codes/raw")
		})
	}
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}
