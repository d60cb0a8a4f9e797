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

// BenchmarkHNSWRecall measures what the HNSW index finds: it loads
// AGENTMEM_BENCH_N records (default 10,000; more than exactRecords, so
// that a search of the namespace goes through the index) into one
// namespace with Load, which builds the index at its end, and runs
// BenchmarkStores' 200 queries in vector and in hybrid mode on a Memory
// without a vector copy (WithVectorCache(0): every search asks the
// server), reporting each mode's p50 and recall@10 against the same
// queries with an exact vector search of the same schema (exact=1): the
// share of the exact top 10's records that the indexed top 10 holds.
func BenchmarkHNSWRecall(b *testing.B) {
	n := benchN(b)
	recs := benchRecords(n)
	queries := benchQueries(recs)
	ctx := context.Background()
	emb := hashEmb(b, 512)
	url := storeURL(b)
	opts := []postgres.Option{postgres.WithVectorCache(0)}
	pg := openWith(b, url, emb, opts...)
	_, err := pg.Load(ctx, recs, 1000, nil)
	require.NoError(b, err)
	require.True(b, postgres.Indexed(pg))
	modes := []memory.Mode{memory.VectorOnly, memory.Hybrid}
	names := []string{"vector", "hybrid"}
	ask := func(m *postgres.Memory, mode memory.Mode, q string) []string {
		hits, err := m.Query(ctx, memory.Query{Text: q, Namespace: "bench", K: 10, Mode: mode})
		require.NoError(b, err)
		return hitIDs(hits)
	}
	exact := openWith(b, withParams(url, "exact", "1"), emb, opts...)
	want := make([][][]string, len(modes))
	for i, mode := range modes {
		for _, q := range queries {
			want[i] = append(want[i], ask(exact, mode, q))
		}
	}
	b.ResetTimer()
	for range b.N {
		for i, mode := range modes {
			hit, of := 0, 0
			var took []time.Duration
			for j, q := range queries {
				t := time.Now()
				got := ask(pg, mode, q)
				took = append(took, time.Since(t))
				hit += found(want[i][j], got)
				of += len(want[i][j])
			}
			slices.Sort(took)
			b.ReportMetric(ms(took[len(took)/2]), names[i]+"-p50-ms")
			b.ReportMetric(float64(hit)/float64(max(of, 1)), names[i]+"-recall@10-vs-exact")
		}
	}
}
