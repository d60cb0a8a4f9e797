package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/postgres"
)

// BenchmarkTurns measures hybrid search right after writes, as an agent
// uses its memory: on AGENTMEM_BENCH_N records (default 10,000) loaded as
// BenchmarkVsDir loads them, and searched once through (so that
// PostgreSQL's copies of the namespace are read), it repeats 200 times
// {add one record; run a hybrid query (K 10)} on a directory store and on
// PostgreSQL, the two taking turns, and reports both stores' search p50
// and p95 and their ratios (pg/dir), the p50 ratio of 200 queries with no
// write between them run just before (warm-), the searches PostgreSQL answered
// from its vector copy, how many of its keyword caches were grown from the
// one before and how many times its searches read records their cache
// lacked, and PostgreSQL's hybrid recall@10 against the
// same queries, after the same writes, with an exact vector search of the
// same schema (exact=1, no vector copy).
func BenchmarkTurns(b *testing.B) {
	n := benchN(b)
	const turns = 200
	recs := benchRecords(n + turns)
	queries := benchQueries(recs)
	ctx := context.Background()
	emb := hashEmb(b, 512)
	opts := []postgres.Option{postgres.WithIndexAfter(postgres.DefaultIndexAfter)}
	p := func(l []time.Duration, q int) float64 { return ms(l[len(l)*q/100]) }
	for range b.N {
		b.StopTimer()
		url := storeURL(b)
		dir := openDir(b, emb)
		pg := openWith(b, url, emb, opts...)
		for i := 0; i < n; i += 1000 {
			_, err := dir.AddBatch(ctx, recs[i:min(i+1000, n)])
			require.NoError(b, err)
		}
		_, err := pg.Load(ctx, recs[:n], 1000, nil)
		require.NoError(b, err)
		exact := openWith(b, withParams(url, "exact", "1"), emb, append(opts, postgres.WithVectorCache(0))...)
		// In use already: searched once through, its copies read; then
		// once more, warm, for the figures without writes.
		queryLatencies(b, dir, queries)
		queryLatencies(b, pg, queries)
		postgres.VectorCacheSearches(pg)
		postgres.LinkFills(pg)
		warmDir, warmPG := takeTurns(b, dir, pg, queries[:turns])
		slices.Sort(warmDir)
		slices.Sort(warmPG)
		before, grows, reads := postgres.VectorCacheSearches(pg), postgres.CacheGrows(pg), postgres.DocReads(pg)
		b.StartTimer()
		var dirQ, pgQ []time.Duration
		hit, of := 0, 0
		for i, r := range recs[n:] {
			q := memory.Query{Text: queries[i%len(queries)], Namespace: "bench", K: 10}
			_, err := dir.Add(ctx, r)
			require.NoError(b, err)
			t := time.Now()
			_, err = dir.Query(ctx, q)
			require.NoError(b, err)
			dirQ = append(dirQ, time.Since(t))
			_, err = pg.Add(ctx, r)
			require.NoError(b, err)
			t = time.Now()
			hits, err := pg.Query(ctx, q)
			require.NoError(b, err)
			pgQ = append(pgQ, time.Since(t))
			b.StopTimer()
			want, err := exact.Query(ctx, q)
			require.NoError(b, err)
			hit += found(hitIDs(want), hitIDs(hits))
			of += len(want)
			b.StartTimer()
		}
		b.StopTimer()
		copies := postgres.VectorCacheSearches(pg) - before
		grows, reads = postgres.CacheGrows(pg)-grows, postgres.DocReads(pg)-reads
		require.NoError(b, exact.Close())
		require.NoError(b, pg.Close())
		slices.Sort(dirQ)
		slices.Sort(pgQ)
		b.ReportMetric(p(dirQ, 50), "dir-hybrid-p50-ms")
		b.ReportMetric(p(pgQ, 50), "pg-hybrid-p50-ms")
		b.ReportMetric(p(dirQ, 95), "dir-hybrid-p95-ms")
		b.ReportMetric(p(pgQ, 95), "pg-hybrid-p95-ms")
		b.ReportMetric(p(pgQ, 50)/p(dirQ, 50), "hybrid-p50-pg/dir")
		b.ReportMetric(p(pgQ, 95)/p(dirQ, 95), "hybrid-p95-pg/dir")
		b.ReportMetric(p(warmPG, 50)/p(warmDir, 50), "warm-p50-pg/dir")
		b.ReportMetric(float64(copies), "pg-vector-copy-searches")
		b.ReportMetric(float64(grows), "pg-keyword-cache-grows")
		b.ReportMetric(float64(reads), "pg-record-reads")
		b.ReportMetric(float64(hit)/float64(max(of, 1)), "recall@10-vs-exact")
		b.StartTimer()
	}
}
