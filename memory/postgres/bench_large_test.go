package postgres_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/postgres"
)

// BenchmarkLarge measures PostgreSQL alone on a store too large for the
// process's copies of its namespace (WithVectorCache; from 150,000
// records the vector path searches the server's HNSW index): issue 25's
// 1,000,000-record figures. It loads AGENTMEM_BENCH_N records (default
// 10,000) as `agentmem import` does (Load, batches of 1,000, production
// defaults) and reports the load's records/s and the seconds of its
// final index builds; then, on a fresh Memory, BenchmarkStores' 200
// hybrid queries twice (the first round reading the keyword caches),
// and reports the second round's p50 and p95 and its recall@10 against
// an exact vector search of the same schema (exact=1, no vector copy),
// with that exact search's own p50. AGENTMEM_BENCH_KEEP=DIR keeps the
// load (schema bench_large_N) and the exact answers (DIR/exact-large-N.json)
// for the next runs on the same cluster; AGENTMEM_BENCH_MAINT_MB sets
// WithMaintenanceWorkMem (a graph of N records of three 512-dimension
// chunks needs some 7.5 GB per million records to be built in memory).
func BenchmarkLarge(b *testing.B) {
	n := benchN(b)
	recs := benchRecords(n)
	queries := benchQueries(recs)
	ctx := context.Background()
	emb := hashEmb(b, 512)
	keep := os.Getenv("AGENTMEM_BENCH_KEEP")
	url := ""
	if keep == "" {
		url = storeURL(b)
	} else {
		url = withParams(needPG(b), "schema", fmt.Sprintf("bench_large_%d", n))
	}
	opts := []postgres.Option{postgres.WithIndexAfter(postgres.DefaultIndexAfter)}
	if v := os.Getenv("AGENTMEM_BENCH_MAINT_MB"); v != "" {
		mb, err := strconv.Atoi(v)
		require.NoError(b, err)
		opts = append(opts, postgres.WithMaintenanceWorkMem(mb))
	}
	setup := map[string]float64{} // reported after ResetTimer, which drops metrics
	pg := openWith(b, url, emb, opts...)
	if pg.Len() != n {
		require.Zero(b, pg.Len(), "a kept schema of another load")
		t := time.Now()
		var batches time.Duration // until the last batch committed
		_, err := pg.Load(ctx, recs, 1000, func(stored int) {
			batches = time.Since(t)
			if stored%100_000 < 1000 {
				b.Logf("%d records loaded in %.0f s", stored, batches.Seconds())
			}
		})
		require.NoError(b, err)
		load := time.Since(t)
		setup["load-records/s"] = float64(n) / load.Seconds()
		setup["load-index-build-s"] = (load - batches).Seconds()
	}
	require.NoError(b, pg.Close())
	wantPath := ""
	if keep != "" {
		wantPath = filepath.Join(keep, fmt.Sprintf("exact-large-%d.json", n))
	}
	want, exactP50 := exactAnswers(b, url, emb, opts, queries, wantPath)
	if exactP50 > 0 {
		setup["exact-p50-ms"] = exactP50
	}
	round := func(pg *postgres.Memory) (lat []time.Duration, recall float64) {
		hit, of := 0, 0
		for i, q := range queries {
			t := time.Now()
			hits, err := pg.Query(ctx, memory.Query{Text: q, Namespace: "bench", K: 10})
			require.NoError(b, err)
			lat = append(lat, time.Since(t))
			hit += found(want[i], hitIDs(hits))
			of += len(want[i])
		}
		slices.Sort(lat)
		return lat, float64(hit) / float64(max(of, 1))
	}
	p := func(l []time.Duration, q int) float64 { return ms(l[len(l)*q/100]) }
	b.ResetTimer()
	for range b.N {
		pg := openWith(b, url, emb, opts...)
		cold, _ := round(pg)
		warm, recall := round(pg)
		copies := postgres.VectorCacheSearches(pg)
		require.NoError(b, pg.Close())
		b.ReportMetric(p(cold, 50), "cold-p50-ms")
		b.ReportMetric(p(warm, 50), "hybrid-p50-ms")
		b.ReportMetric(p(warm, 95), "hybrid-p95-ms")
		b.ReportMetric(recall, "recall@10-vs-exact")
		b.ReportMetric(float64(copies), "vector-copy-searches")
		for unit, v := range setup {
			b.ReportMetric(v, unit)
		}
	}
}
