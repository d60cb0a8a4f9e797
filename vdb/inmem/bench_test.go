package inmem_test

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/agentmem/agentmem/internal/testvec"
	"github.com/agentmem/agentmem/vdb/inmem"
)

const benchDim = 384

func filledDB(b *testing.B, n int, opts ...inmem.Option) *inmem.DB {
	b.Helper()
	db, err := inmem.New(benchDim, append([]inmem.Option{inmem.WithCapacity(n)}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	if err := db.Add(b.Context(), testvec.IDs(0, n), testvec.Unit(1, n, benchDim)); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// reportPercentiles reports the median and 99th percentile of per-operation
// durations in milliseconds, and returns the median.
func reportPercentiles(b *testing.B, d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	at := func(p float64) time.Duration { return d[min(len(d)-1, int(p*float64(len(d))))] }
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(at(0.5)), "p50-ms")
	b.ReportMetric(ms(at(0.99)), "p99-ms")
	return at(0.5)
}

// BenchmarkSearch is single-query search, one query at a time, k=10, d=384,
// over random unit vectors. Besides ns/op it reports the median and 99th
// percentile latency and the scan rate the median implies (GB/s of vectors
// read), which on a large database is bounded by memory bandwidth.
// workers=1 shows what splitting the scan buys.
func BenchmarkSearch(b *testing.B) {
	cases := []struct {
		n    int
		opts []inmem.Option
		name string
	}{
		{1_000, nil, "n=1000"},
		{10_000, nil, "n=10000"},
		{100_000, nil, "n=100000"},
		{100_000, []inmem.Option{inmem.WithWorkers(1)}, "n=100000/workers=1"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			db := filledDB(b, c.n, c.opts...)
			queries := testvec.Unit(2, 64, benchDim)
			var durs []time.Duration
			ctx := b.Context()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				start := time.Now()
				if _, err := db.Search(ctx, queries[i%len(queries)], 10); err != nil {
					b.Fatal(err)
				}
				durs = append(durs, time.Since(start))
				i++
			}
			p50 := reportPercentiles(b, durs)
			b.ReportMetric(float64(c.n*benchDim*4)/p50.Seconds()/1e9, "scan-GB/s")
		})
	}
}

// BenchmarkSearchBatch answers a batch of queries in one call; it reports the
// time per query as well.
func BenchmarkSearchBatch(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, nq := range []int{16, 64} {
			b.Run(fmt.Sprintf("n=%d/queries=%d", n, nq), func(b *testing.B) {
				db := filledDB(b, n)
				queries := testvec.Unit(2, nq, benchDim)
				ctx := b.Context()
				b.ReportAllocs()
				for b.Loop() {
					if _, err := db.SearchBatch(ctx, queries, 10); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(nq)/float64(time.Millisecond), "ms/query")
			})
		}
	}
}

// BenchmarkAdd adds batches of new vectors (IDs wrap at 100k, so long runs
// replace rather than grow without bound).
func BenchmarkAdd(b *testing.B) {
	for _, batch := range []int{1, 100} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			const wrap = 100_000
			db, err := inmem.New(benchDim)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			vecs := testvec.Unit(3, 1000, benchDim)
			ids := make([]int64, batch)
			ctx := b.Context()
			next := 0
			b.ReportAllocs()
			b.SetBytes(int64(batch * benchDim * 4))
			for b.Loop() {
				for i := range ids {
					ids[i] = int64(next % wrap)
					next++
				}
				j := next % (len(vecs) - batch)
				if err := db.Add(ctx, ids, vecs[j:j+batch]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchExport returns a database of 100k×384 and its export, and makes the
// benchmark report MB/s of the export's size.
func benchExport(b *testing.B) (*inmem.DB, []byte) {
	db := filledDB(b, 100_000)
	var buf bytes.Buffer
	if err := db.Export(b.Context(), &buf); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	return db, buf.Bytes()
}

// BenchmarkExport and BenchmarkImport report MB/s for 100k×384.
func BenchmarkExport(b *testing.B) {
	db, _ := benchExport(b)
	for b.Loop() {
		if err := db.Export(b.Context(), io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkImport(b *testing.B) {
	_, data := benchExport(b)
	for _, c := range []struct {
		name string
		opts []inmem.Option
	}{
		{"float32", nil},
		{"int8", []inmem.Option{inmem.WithCodes(inmem.Int8)}},
		{"int8,cols", []inmem.Option{inmem.WithCodes(inmem.Int8), inmem.WithColumns()}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				fresh, err := inmem.New(benchDim, c.opts...)
				if err != nil {
					b.Fatal(err)
				}
				if err := fresh.Import(b.Context(), bytes.NewReader(data)); err != nil {
					b.Fatal(err)
				}
				fresh.Close()
			}
		})
	}
	// An IVF that trains its index on the imported rows (long-term
	// memory's default past inmem.DefaultIVFMinRows), training included.
	b.Run("ivf,int8,cols", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			fresh, err := inmem.NewIVF(benchDim, inmem.IVFConfig{MinRows: 50_000}, inmem.WithCodes(inmem.Int8), inmem.WithColumns())
			if err != nil {
				b.Fatal(err)
			}
			if err := fresh.Import(b.Context(), bytes.NewReader(data)); err != nil {
				b.Fatal(err)
			}
			if err := fresh.WaitTrained(b.Context()); err != nil {
				b.Fatal(err)
			}
			fresh.Close()
		}
	})
}

// BenchmarkHeap fills a database of 100k×384 the way a user would (batches
// of 1000, no capacity hint) and reports its live heap over the raw size of
// the vectors (153.6 MB).
func BenchmarkHeap(b *testing.B) {
	const n = 100_000
	vecs := testvec.Unit(1, n, benchDim)
	ids := testvec.IDs(0, n)
	raw := float64(n * benchDim * 4)
	var ratio float64
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		db, err := inmem.New(benchDim)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < n; i += 1000 {
			if err := db.Add(b.Context(), ids[i:i+1000], vecs[i:i+1000]); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		ratio = float64(after.HeapAlloc-before.HeapAlloc) / raw
		runtime.KeepAlive(db)
		db.Close()
	}
	b.ReportMetric(ratio, "heap/raw")
}
