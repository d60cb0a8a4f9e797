package pgvector_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/agentmem/agentmem/internal/latency"
	"github.com/agentmem/agentmem/internal/testvec"
	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/inmem"
)

// BenchmarkCompare puts pgvector (exact scan and HNSW at several ef_search)
// beside the pure-Go exact backend, and Faiss IVF when built with -tags
// faiss, on the same clustered vectors as vdb/faiss's BenchmarkApprox
// (1,000 Gaussian topics, d=384, 200 queries from the same topics):
//
//	eval "$(PG_SHARED_BUFFERS=1GB scripts/pg-test.sh start)"
//	go test -tags faiss -run '^$' -bench Compare -benchtime 200x -timeout 60m -v ./vdb/pgvector/
//	scripts/pg-test.sh stop
//
// Reported: p50/p95 single-query latency (ms), recall@10 against the exact
// answers (inmem), and on the pgvector rows the load rate (Add in batches of
// 10,000 into the table without index: COPY + upsert), the HNSW build time
// (CREATE INDEX over the loaded table, m=16, ef_construction=64,
// maintenance_work_mem=1GB, 6GB at 1M) and the rate of Adds into a table that already
// has the index; -v prints those three as log lines too. n=1000000 runs only
// with AGENTMEM_BENCH_1M=1.
func BenchmarkCompare(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			if n >= 1_000_000 && os.Getenv("AGENTMEM_BENCH_1M") == "" {
				b.Skip("set AGENTMEM_BENCH_1M=1 to run the million-vector comparison (hours of HNSW build on two cores)")
			}
			benchCompare(b, n)
		})
	}
}

const (
	benchDim = 384
	benchK   = 10
)

// extraBench holds the backends only some builds have (Faiss under -tags
// faiss): each gets the data, the queries and the exact answers.
var extraBench []func(b *testing.B, vecs, queries [][]float32, exact [][]vdb.Result)

func addAll(b *testing.B, db vdb.VectorDatabase, vecs [][]float32, batch int) time.Duration {
	b.Helper()
	t0 := time.Now()
	for lo := 0; lo < len(vecs); lo += batch {
		hi := min(lo+batch, len(vecs))
		if err := db.Add(b.Context(), testvec.IDs(lo, hi-lo), vecs[lo:hi]); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(t0)
}

// benchSearch runs the queries round-robin, reporting p50/p95 latency and
// recall@10 against exact.
func benchSearch(b *testing.B, db vdb.VectorDatabase, queries [][]float32, exact [][]vdb.Result) {
	var lat []time.Duration
	var hit, want int
	i := 0
	for b.Loop() {
		qi := i % len(queries)
		t0 := time.Now()
		res, err := db.Search(b.Context(), queries[qi], benchK)
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		for _, e := range exact[qi] {
			want++
			for _, r := range res {
				if r.ID == e.ID {
					hit++
					break
				}
			}
		}
		i++
	}
	b.ReportMetric(latency.PercentileMs(lat, 0.5), "p50-ms")
	b.ReportMetric(latency.PercentileMs(lat, 0.95), "p95-ms")
	b.ReportMetric(float64(hit)/float64(want), "recall@10")
}

func benchCompare(b *testing.B, n int) {
	ctx := b.Context()
	needPG(b)
	t0 := time.Now()
	centres := testvec.Unit(5, 1000, benchDim)
	vecs := testvec.Clustered(1, n, centres, 0.8)
	queries := testvec.Clustered(2, 200, centres, 0.8)
	b.Logf("generated %d vectors in %v", n, time.Since(t0).Round(time.Millisecond))

	mem, err := inmem.New(benchDim, inmem.WithCapacity(n))
	if err != nil {
		b.Fatal(err)
	}
	defer mem.Close()
	memLoad := addAll(b, mem, vecs, 10_000)
	exact := make([][]vdb.Result, len(queries))
	for i, q := range queries {
		if exact[i], err = mem.Search(ctx, q, benchK); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("inmem-exact", func(b *testing.B) {
		benchSearch(b, mem, queries, exact)
		b.ReportMetric(float64(n)/memLoad.Seconds(), "load-vec/s")
	})

	// pgvector: load into a table without index, scan it exactly, then
	// build the HNSW index over it.
	// The HNSW build wants its graph in maintenance_work_mem: about 1 GB
	// at 100k × 384 is ample, 1M needs ~2.5 GB (vectors and links).
	mwm := "1GB"
	if n >= 1_000_000 {
		mwm = "6GB"
	}
	ns := uniqueNS()
	pgExact := openSpec(b, benchDim, ns, "exact", "1", "maintenance_work_mem", mwm)
	pgLoad := addAll(b, pgExact, vecs, 10_000)
	b.Logf("pgvector: loaded %d vectors in %v (%.0f vectors/s)", n, pgLoad.Round(time.Millisecond), float64(n)/pgLoad.Seconds())
	b.Run("pgvector-exact", func(b *testing.B) {
		benchSearch(b, pgExact, queries, exact)
		b.ReportMetric(float64(n)/pgLoad.Seconds(), "load-vec/s")
	})
	t0 = time.Now()
	pgHNSW := openSpec(b, benchDim, ns, "maintenance_work_mem", mwm)
	build := time.Since(t0)
	b.Logf("pgvector: HNSW index (m=16, ef_construction=64) over %d vectors built in %v", n, build.Round(time.Millisecond))
	_ = pgHNSW
	for _, ef := range []int{40, 100, 200} {
		db := openSpec(b, benchDim, ns, "ef_search", fmt.Sprint(ef))
		b.Run(fmt.Sprintf("pgvector-hnsw/ef_search=%d", ef), func(b *testing.B) {
			benchSearch(b, db, queries, exact)
			b.ReportMetric(build.Seconds(), "build-s")
		})
	}
	// Adds into a table that already has the index: 10,000 more vectors.
	more := testvec.Clustered(3, 10_000, centres, 0.8)
	t0 = time.Now()
	for lo := 0; lo < len(more); lo += 1000 {
		if err := pgHNSW.Add(ctx, testvec.IDs(n+lo, 1000), more[lo:lo+1000]); err != nil {
			b.Fatal(err)
		}
	}
	inc := time.Since(t0)
	b.Logf("pgvector: %d Adds into the indexed table in %v (%.0f vectors/s)", len(more), inc.Round(time.Millisecond), float64(len(more))/inc.Seconds())

	for _, f := range extraBench {
		f(b, vecs, queries, exact)
	}
}
