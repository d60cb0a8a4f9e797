package inmem_test

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem/internal/testvec"
	"github.com/agentmem/agentmem/vdb/inmem"
)

// waitTrained waits for x's index where the IVF trains in the background
// (the file uses only what every version of IVF has, so that the same
// benchmark measures the IVF that trained under its lock, for
// comparison).
func waitTrained(b *testing.B, x any) {
	if w, ok := x.(interface{ WaitTrained(context.Context) error }); ok {
		if err := w.WaitTrained(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}

func benchN(def int) int {
	n := def
	if v, err := fmt.Sscan(os.Getenv("AGENTMEM_BENCH_IVF_N"), &n); v != 1 || err != nil {
		n = def
	}
	return n
}

// timedSearch is when a search started and ended.
type timedSearch struct{ start, end time.Time }

// BenchmarkIVFCrossing measures what a search goes through while an Add
// crosses MinRows (AGENTMEM_BENCH_IVF_N, default 2¹⁸) on clustered
// vectors of dimension 512: one goroutine searches (k=10) without pause
// from 300 ms before the crossing Add until 300 ms after the index is
// ready; it reports the longest search that overlapped the training
// (max-ms) against the searches' p50 before it (base-p50-ms), how long
// the Add took (add-ms) and how long until the index was there (ready-ms).
func BenchmarkIVFCrossing(b *testing.B) {
	n := benchN(1 << 18)
	const dim = 512
	cs := centres(1, 2000, dim)
	qs := testvec.Clustered(3, 200, cs, 0.7)
	for b.Loop() {
		crossOnce(b, n, cs, qs)
	}
}

// crossOnce is one run of BenchmarkIVFCrossing. (Its body inside the
// b.Loop loop crashes the go1.26.8 compiler's escape analysis.)
func crossOnce(b *testing.B, n int, cs, qs [][]float32) {
	const dim = 512
	ctx := b.Context()
	x, err := inmem.NewIVF(dim, inmem.IVFConfig{MinRows: n}, inmem.WithCodes(inmem.Int8))
	if err != nil {
		b.Fatal(err)
	}
	for lo := 0; lo < n-1; lo += 10000 {
		m := min(10000, n-1-lo)
		if err := x.Add(ctx, testvec.IDs(lo, m), testvec.Clustered(uint64(2+lo), m, cs, 0.7)); err != nil {
			b.Fatal(err)
		}
	}
	last := testvec.Clustered(7, 1, cs, 0.7)
	var done []timedSearch
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			t0 := time.Now()
			if _, err := x.Search(ctx, qs[i%len(qs)], 10); err != nil {
				b.Error(err)
				return
			}
			done = append(done, timedSearch{t0, time.Now()})
		}
	})
	time.Sleep(300 * time.Millisecond)
	t0 := time.Now()
	if err := x.Add(ctx, []int64{int64(n - 1)}, last); err != nil {
		b.Fatal(err)
	}
	added := time.Now()
	waitTrained(b, x)
	ready := time.Now()
	if x.Lists() == 0 {
		b.Fatal("no index after the crossing Add")
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	var base []time.Duration
	var longest time.Duration
	during := 0
	for _, s := range done {
		switch {
		case s.end.Before(t0):
			base = append(base, s.end.Sub(s.start))
		case s.start.Before(ready):
			during++
			longest = max(longest, s.end.Sub(s.start))
		}
	}
	if len(base) == 0 {
		b.Fatal("no search ended before the crossing Add")
	}
	slices.Sort(base)
	b.ReportMetric(float64(longest.Microseconds())/1000, "max-ms")
	b.ReportMetric(float64(base[len(base)/2].Microseconds())/1000, "base-p50-ms")
	b.ReportMetric(float64(added.Sub(t0).Microseconds())/1000, "add-ms")
	b.ReportMetric(float64(ready.Sub(t0).Microseconds())/1000, "ready-ms")
	b.ReportMetric(float64(during), "searches-during")
	x.Close()
}

// BenchmarkIVFImportReady measures Import into an IVF of n clustered
// vectors of dimension 512 (AGENTMEM_BENCH_IVF_N, default 500,000; the
// default MinRows), what Open pays for a namespace: import-s until Import
// returns, ready-s until the index is trained.
func BenchmarkIVFImportReady(b *testing.B) {
	n := benchN(500_000)
	const dim = 512
	cs := centres(1, 2000, dim)
	ctx := b.Context()
	src, err := inmem.New(dim)
	if err != nil {
		b.Fatal(err)
	}
	for lo := 0; lo < n; lo += 10000 {
		m := min(10000, n-lo)
		if err := src.Add(ctx, testvec.IDs(lo, m), testvec.Clustered(uint64(2+lo), m, cs, 0.7)); err != nil {
			b.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := src.Export(ctx, &buf); err != nil {
		b.Fatal(err)
	}
	src.Close()
	for b.Loop() {
		x, err := inmem.NewIVF(dim, inmem.IVFConfig{}, inmem.WithCodes(inmem.Int8))
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := x.Import(ctx, bytes.NewReader(buf.Bytes())); err != nil {
			b.Fatal(err)
		}
		imported := time.Since(t0)
		waitTrained(b, x)
		ready := time.Since(t0)
		if x.Lists() == 0 {
			b.Fatal("no index")
		}
		b.ReportMetric(imported.Seconds(), "import-s")
		b.ReportMetric(ready.Seconds(), "ready-s")
		x.Close()
	}
}

// BenchmarkIVFResults prints checksums of an IVF's search results, to
// compare versions of the IVF on the same rows: n clustered vectors of
// dimension 512 (AGENTMEM_BENCH_IVF_N, default 100,000) added in batches
// of 10,000 to an IVF with MinRows n/2 (trained at n/2, grown by
// insertion, retrained at n), then exported and imported into a fresh
// one; the ids and score bits of 200 top-10 searches of each, hashed
// (add-sum, import-sum), and the lists.
func BenchmarkIVFResults(b *testing.B) {
	n := benchN(100_000)
	const dim = 512
	cs := centres(1, 2000, dim)
	qs := testvec.Clustered(3, 200, cs, 0.7)
	ctx := b.Context()
	cfg := inmem.IVFConfig{MinRows: n / 2}
	sum := func(x *inmem.IVF) float64 {
		h := fnv.New32a()
		for _, q := range qs {
			res, err := x.Search(ctx, q, 10)
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range res {
				fmt.Fprintf(h, "%d:%08x,", r.ID, math.Float32bits(r.Score))
			}
		}
		return float64(h.Sum32())
	}
	for b.Loop() {
		x, err := inmem.NewIVF(dim, cfg, inmem.WithCodes(inmem.Int8))
		if err != nil {
			b.Fatal(err)
		}
		for lo := 0; lo < n; lo += 10000 {
			m := min(10000, n-lo)
			if err := x.Add(ctx, testvec.IDs(lo, m), testvec.Clustered(uint64(2+lo), m, cs, 0.7)); err != nil {
				b.Fatal(err)
			}
			waitTrained(b, x)
		}
		var buf bytes.Buffer
		if err := x.Export(ctx, &buf); err != nil {
			b.Fatal(err)
		}
		y, err := inmem.NewIVF(dim, cfg, inmem.WithCodes(inmem.Int8))
		if err != nil {
			b.Fatal(err)
		}
		if err := y.Import(ctx, &buf); err != nil {
			b.Fatal(err)
		}
		waitTrained(b, y)
		b.ReportMetric(sum(x), "add-sum")
		b.ReportMetric(sum(y), "import-sum")
		b.ReportMetric(float64(x.Lists()), "lists")
		x.Close()
		y.Close()
	}
}
