package inmem_test

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/agentmem/agentmem/internal/testvec"
	"github.com/agentmem/agentmem/vdb/inmem"
)

// BenchmarkIVF measures, on clustered vectors of dimension 512, the IVF's
// training (Import of n rows, which trains the index) and its searches
// against the exact int8 scan of the same DB, queries interleaved: it
// prints p50 of both, their ratio, recall@10 and the rows scanned.
// AGENTMEM_BENCH_IVF_N=N sets n (default 200,000).
func BenchmarkIVF(b *testing.B) {
	n := 200_000
	if v, err := fmt.Sscan(os.Getenv("AGENTMEM_BENCH_IVF_N"), &n); v != 1 || err != nil {
		n = 200_000
	}
	const dim = 512
	cs := centres(1, 2000, dim)
	ctx := b.Context()
	exact, err := inmem.New(dim, inmem.WithCodes(inmem.Int8))
	if err != nil {
		b.Fatal(err)
	}
	defer exact.Close()
	for lo := 0; lo < n; lo += 10000 {
		m := min(10000, n-lo)
		if err := exact.Add(ctx, testvec.IDs(lo, m), testvec.Clustered(uint64(2+lo), m, cs, 0.7)); err != nil {
			b.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := exact.Export(ctx, &buf); err != nil {
		b.Fatal(err)
	}
	plain, err := inmem.New(dim, inmem.WithCodes(inmem.Int8))
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	if err := plain.Import(ctx, bytes.NewReader(buf.Bytes())); err != nil {
		b.Fatal(err)
	}
	impPlain := time.Since(t0)
	plain.Close()
	runtime.GC()
	ivf, err := inmem.NewIVF(dim, inmem.IVFConfig{MinRows: 1000}, inmem.WithCodes(inmem.Int8))
	if err != nil {
		b.Fatal(err)
	}
	defer ivf.Close()
	t0 = time.Now()
	if err := ivf.Import(ctx, bytes.NewReader(buf.Bytes())); err != nil {
		b.Fatal(err)
	}
	if err := ivf.WaitTrained(ctx); err != nil {
		b.Fatal(err)
	}
	imp := time.Since(t0)
	buf = bytes.Buffer{}
	runtime.GC()
	b.Logf("n=%d: %d lists; Import %v (a DB alone %v: training %v)", n, ivf.Lists(), imp, impPlain, imp-impPlain)
	qs := testvec.Clustered(3, 200, cs, 0.7)
	var le, li []time.Duration
	hit, all := 0, 0
	s0 := ivf.Scanned()
	for b.Loop() {
		for _, q := range qs {
			t0 := time.Now()
			want, err := exact.Search(ctx, q, 10)
			le = append(le, time.Since(t0))
			if err != nil {
				b.Fatal(err)
			}
			t0 = time.Now()
			got, err := ivf.Search(ctx, q, 10)
			li = append(li, time.Since(t0))
			if err != nil {
				b.Fatal(err)
			}
			for _, w := range want {
				all++
				if slices.Contains(got, w) {
					hit++
				}
			}
		}
	}
	slices.Sort(le)
	slices.Sort(li)
	pe, pi := le[len(le)/2], li[len(li)/2]
	b.ReportMetric(float64(pe.Microseconds())/1000, "exact-p50-ms")
	b.ReportMetric(float64(pi.Microseconds())/1000, "ivf-p50-ms")
	b.ReportMetric(float64(pi)/float64(pe), "ivf/exact")
	b.ReportMetric(float64(hit)/float64(all), "recall@10")
	b.ReportMetric(float64(ivf.Scanned()-s0)/float64(len(li)), "rows-scanned")
	b.ReportMetric(imp.Seconds()-impPlain.Seconds(), "train-s")
}

// BenchmarkIVFTrain measures training an IVF of n clustered vectors of
// dimension 512 (AGENTMEM_BENCH_IVF_N, default 1M), what Open pays for a
// namespace of n vectors.
func BenchmarkIVFTrain(b *testing.B) {
	n := 1_000_000
	if v, err := fmt.Sscan(os.Getenv("AGENTMEM_BENCH_IVF_N"), &n); v != 1 || err != nil {
		n = 1_000_000
	}
	const dim = 512
	cs := centres(1, 2000, dim)
	ivf, err := inmem.NewIVF(dim, inmem.IVFConfig{MinRows: n + 1}, inmem.WithCodes(inmem.Int8))
	if err != nil {
		b.Fatal(err)
	}
	defer ivf.Close()
	for lo := 0; lo < n; lo += 10000 {
		m := min(10000, n-lo)
		if err := ivf.Add(b.Context(), testvec.IDs(lo, m), testvec.Clustered(uint64(2+lo), m, cs, 0.7)); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		ivf.TrainNow()
	}
	b.ReportMetric(float64(ivf.Lists()), "lists")
}
