package postgres_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/internal/cputime"
	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/longterm"
	"github.com/agentmem/agentmem/memory/postgres"
)

// benchRecords makes n conversation-like records in one namespace from a
// Zipf-distributed vocabulary, with codes and names sprinkled in.
func benchRecords(n int) []memory.Record {
	r := rand.New(rand.NewPCG(1, 2))
	vocab := make([]string, 5000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%xq%d", i*7919%65536, i%97)
	}
	z := rand.NewZipf(r, 1.1, 1, uint64(len(vocab)-1))
	recs := make([]memory.Record, n)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range recs {
		var sb strings.Builder
		for s := range 2 + r.IntN(3) {
			for range 6 + r.IntN(10) {
				sb.WriteString(vocab[z.Uint64()])
				sb.WriteByte(' ')
			}
			if s == 0 && r.IntN(4) == 0 {
				fmt.Fprintf(&sb, "ticket INC-%d ", r.IntN(100000))
			}
			sb.WriteString(". ")
		}
		recs[i] = memory.Record{ID: "r" + strconv.Itoa(i), Text: sb.String(), Namespace: "bench",
			Speaker: []string{"User", "Assistant"}[i%2], Time: t0.Add(time.Duration(i) * time.Minute)}
	}
	return recs
}

// benchN is AGENTMEM_BENCH_N, the benchmarks' number of records (default
// 10,000).
func benchN(b testing.TB) int {
	n := 10000
	if v := os.Getenv("AGENTMEM_BENCH_N"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(b, err)
	}
	return n
}

// benchQueries draws 200 queries of 3 words from recs.
func benchQueries(recs []memory.Record) []string {
	r := rand.New(rand.NewPCG(3, 4))
	queries := make([]string, 200)
	for i := range queries {
		words := strings.Fields(recs[r.IntN(len(recs))].Text)
		queries[i] = strings.Join([]string{words[r.IntN(len(words))], words[r.IntN(len(words))], words[r.IntN(len(words))]}, " ")
	}
	return queries
}

// openDir opens a directory store (memory/longterm on disk) in a temporary
// directory, closed when the benchmark ends: the peer of the PostgreSQL
// store in the benchmarks.
func openDir(b *testing.B, emb embed.Embedder) *longterm.Memory {
	m, err := longterm.Open(context.Background(), b.TempDir(), emb)
	require.NoError(b, err)
	b.Cleanup(func() { m.Close() })
	return m
}

type benchStore interface {
	AddBatch(context.Context, []memory.Record) ([]string, error)
	Query(context.Context, memory.Query) ([]memory.Hit, error)
}

// queryLatencies runs the hybrid queries (K 10) over namespace bench and
// returns their latencies, sorted.
func queryLatencies(b *testing.B, m benchStore, queries []string) []time.Duration {
	lat := make([]time.Duration, len(queries))
	for i, q := range queries {
		t := time.Now()
		_, err := m.Query(context.Background(), memory.Query{Text: q, Namespace: "bench", K: 10})
		require.NoError(b, err)
		lat[i] = time.Since(t)
	}
	slices.Sort(lat)
	return lat
}

// found counts the ids of want that got holds.
func found(want, got []string) int {
	n := 0
	for _, id := range want {
		if slices.Contains(got, id) {
			n++
		}
	}
	return n
}

// exactAnswers returns the ids that the hybrid queries (K 10, namespace
// bench) find over the schema of url with an exact vector search
// (exact=1, no vector copy), and their p50 in ms (0 when read): read from
// path if it holds them, else searched and, when path is not empty,
// written there for the next runs of a kept load.
func exactAnswers(b *testing.B, url string, emb embed.Embedder, opts []postgres.Option, queries []string, path string) ([][]string, float64) {
	want := make([][]string, len(queries))
	if path != "" {
		if data, err := os.ReadFile(path); err == nil && json.Unmarshal(data, &want) == nil {
			return want, 0
		}
	}
	exact := openWith(b, withParams(url, "exact", "1"), emb, append(opts, postgres.WithVectorCache(0))...)
	lat := make([]time.Duration, len(queries))
	for i, q := range queries {
		t := time.Now()
		hits, err := exact.Query(context.Background(), memory.Query{Text: q, Namespace: "bench", K: 10})
		require.NoError(b, err)
		lat[i] = time.Since(t)
		want[i] = hitIDs(hits)
	}
	require.NoError(b, exact.Close())
	if path != "" {
		data, err := json.Marshal(want)
		require.NoError(b, err)
		require.NoError(b, os.WriteFile(path, data, 0o644))
	}
	slices.Sort(lat)
	return want, ms(lat[len(lat)/2])
}

// takeTurns runs the hybrid queries (K 10) over namespace bench on dir
// and on pg, the two taking turns query by query, and returns their
// latencies, in the queries' order.
func takeTurns(b *testing.B, dir, pg benchStore, queries []string) (dirQ, pgQ []time.Duration) {
	return takeTurnsIn(b, dir, pg, "bench", queries)
}

// takeTurnsIn is takeTurns over namespace ns ("" all).
func takeTurnsIn(b *testing.B, dir, pg benchStore, ns string, queries []string) (dirQ, pgQ []time.Duration) {
	for _, q := range queries {
		for _, s := range []struct {
			m   benchStore
			lat *[]time.Duration
		}{{dir, &dirQ}, {pg, &pgQ}} {
			t := time.Now()
			_, err := s.m.Query(context.Background(), memory.Query{Text: q, Namespace: ns, K: 10})
			require.NoError(b, err)
			*s.lat = append(*s.lat, time.Since(t))
		}
	}
	return dirQ, pgQ
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkStores loads AGENTMEM_BENCH_N records (default 10,000) into a
// directory store (memory/longterm on disk) and into PostgreSQL, in
// batches of 500, and reports each one's ingest rate (records/s) and
// hybrid query p50, p95 and p99 over 200 queries of 3 words drawn from
// stored records. postgres keeps its HNSW index, so its batches are
// written pending and folded into the index in the background (past
// WithFoldAfter's 2,000 pending chunks) while the load and the queries
// run: its queries scan what is still pending; postgres-folded loads as
// postgres does, then folds everything (Fold, fold-s, not in the ingest
// rate) and queries through the index alone; postgres-bulk loads with exact=1 (no index), then reopens the
// store without it, which builds the index over the loaded chunks
// (index-build-s, not in the ingest rate), and queries through it;
// postgres-batch loads all records in one AddBatch, which (WithBulkLoad)
// copies them without the index and builds it in the same transaction (in
// the ingest rate).
func BenchmarkStores(b *testing.B) {
	n := benchN(b)
	recs := benchRecords(n)
	queries := benchQueries(recs)
	ctx := context.Background()
	emb := hashEmb(b, 512)
	var bulkURL string
	stores := []struct {
		name string
		// open opens the empty store; loaded, if set, returns the store
		// to query after the load.
		open   func(b *testing.B) benchStore
		loaded func(b *testing.B, m benchStore) benchStore
		batch  int // records per AddBatch (0: 500)
	}{
		{name: "dir", open: func(b *testing.B) benchStore { return openDir(b, emb) }},
		{name: "postgres", open: func(b *testing.B) benchStore { return openWith(b, storeURL(b), emb) }},
		{name: "postgres-folded", open: func(b *testing.B) benchStore { return openWith(b, storeURL(b), emb) },
			loaded: func(b *testing.B, m benchStore) benchStore {
				t := time.Now()
				require.NoError(b, m.(*postgres.Memory).Fold(ctx))
				b.ReportMetric(time.Since(t).Seconds(), "fold-s")
				return m
			}},
		{name: "postgres-bulk", open: func(b *testing.B) benchStore {
			bulkURL = storeURL(b)
			return openWith(b, withParams(bulkURL, "exact", "1"), emb)
		}, loaded: func(b *testing.B, m benchStore) benchStore {
			require.NoError(b, m.(*postgres.Memory).Close())
			t := time.Now()
			m = openWith(b, bulkURL, emb)
			b.ReportMetric(time.Since(t).Seconds(), "index-build-s")
			return m
		}},
		{name: "postgres-batch", open: func(b *testing.B) benchStore { return openWith(b, storeURL(b), emb) }, batch: n},
	}
	for _, st := range stores {
		b.Run(fmt.Sprintf("%s/%d", st.name, n), func(b *testing.B) {
			for range b.N {
				m := st.open(b)
				start := time.Now()
				batch := cmp.Or(st.batch, 500)
				for i := 0; i < n; i += batch {
					_, err := m.AddBatch(ctx, recs[i:min(i+batch, n)])
					require.NoError(b, err)
				}
				ingest := time.Since(start)
				if st.loaded != nil {
					m = st.loaded(b, m)
				}
				lat := queryLatencies(b, m, queries)
				b.ReportMetric(float64(n)/ingest.Seconds(), "records/s")
				b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
				b.ReportMetric(ms(lat[len(lat)*95/100]), "p95-ms")
				b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
			}
		})
	}
}

// BenchmarkEpisodes measures what the keyword path's episode step costs a
// query: AGENTMEM_BENCH_N records (default 10,000) in conversations of 20
// (a day apart), keyword-only queries of 3 words drawn from stored
// records, each run with the default episode weight and with episodes off
// (WithEpisodeWeight(0)), one after the other on one store so that the
// load of a shared machine weighs on both alike. It reports each one's
// p50 and the p50 of the per-query difference.
func BenchmarkEpisodes(b *testing.B) {
	n := benchN(b)
	recs := benchRecords(n)
	for i := range recs {
		recs[i].Time = recs[i].Time.Add(time.Duration(i/20) * 24 * time.Hour)
	}
	queries := benchQueries(recs)
	ctx := context.Background()
	url := storeURL(b, "exact", "1")
	on := open(b, url)
	for i := 0; i < n; i += 500 {
		_, err := on.AddBatch(ctx, recs[i:min(i+500, n)])
		require.NoError(b, err)
	}
	off := open(b, url, postgres.WithEpisodeWeight(0))
	run := func(m *postgres.Memory, q string) time.Duration {
		t := time.Now()
		_, err := m.Query(ctx, memory.Query{Text: q, Namespace: "bench", K: 10, Mode: memory.KeywordOnly})
		require.NoError(b, err)
		return time.Since(t)
	}
	p50 := func(d []time.Duration) float64 {
		d = slices.Clone(d)
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	for range b.N {
		var tOn, tOff, diff []time.Duration
		for _, q := range queries {
			a, z := run(on, q), run(off, q)
			tOn, tOff, diff = append(tOn, a), append(tOff, z), append(diff, a-z)
		}
		b.ReportMetric(p50(tOn), "episodes-p50-ms")
		b.ReportMetric(p50(tOff), "no-episodes-p50-ms")
		b.ReportMetric(p50(diff), "diff-p50-ms")
	}
}

// BenchmarkSingleAdds measures what an agent server pays per turn: a
// namespace loaded with AGENTMEM_BENCH_N records (default 10,000) in one
// AddBatch, then 200 more records written one Add at a time, reporting
// the p50 and p95 latency of those Adds (ms) in a directory store, in
// PostgreSQL with its HNSW index (the Adds' chunks written pending) and in
// PostgreSQL with exact=1 (no vector index), then the p50 of BenchmarkStores'
// hybrid queries (query-p50-ms; in PostgreSQL with the HNSW index again
// after Fold, folded-query-p50-ms).
func BenchmarkSingleAdds(b *testing.B) {
	n := benchN(b)
	recs := benchRecords(n + 200)
	queries := benchQueries(recs)
	ctx := context.Background()
	emb := hashEmb(b, 512)
	stores := []struct {
		name string
		open func(b *testing.B) benchStore
	}{
		{"dir", func(b *testing.B) benchStore { return openDir(b, emb) }},
		{"postgres", func(b *testing.B) benchStore { return openWith(b, storeURL(b), emb) }},
		{"postgres-exact", func(b *testing.B) benchStore { return openWith(b, storeURL(b, "exact", "1"), emb) }},
	}
	for _, st := range stores {
		b.Run(fmt.Sprintf("%s/%d", st.name, n), func(b *testing.B) {
			for range b.N {
				m := st.open(b)
				_, err := m.AddBatch(ctx, recs[:n])
				require.NoError(b, err)
				lat := make([]time.Duration, 0, 200)
				for _, r := range recs[n:] {
					t := time.Now()
					_, err := m.AddBatch(ctx, []memory.Record{r})
					require.NoError(b, err)
					lat = append(lat, time.Since(t))
				}
				slices.Sort(lat)
				b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
				b.ReportMetric(ms(lat[len(lat)*95/100]), "p95-ms")
				// Queries with the Adds' chunks pending (the background
				// fold starts past 2,000 of them), then folded.
				b.ReportMetric(ms(queryLatencies(b, m, queries)[len(queries)/2]), "query-p50-ms")
				if pg, ok := m.(*postgres.Memory); ok && st.name == "postgres" {
					require.NoError(b, pg.Fold(ctx))
					b.ReportMetric(ms(queryLatencies(b, m, queries)[len(queries)/2]), "folded-query-p50-ms")
				}
			}
		})
	}
}

// BenchmarkMigrateFromV5 measures what opening a store of schema version
// 5 costs (AGENTMEM_BENCH_N records, default 10,000, in one namespace):
// migration 6 rebuilds the HNSW index as a partial one, in the migration's
// transaction, while writers wait, and migration 10 converts the vectors
// (hash:512, a lexical embedder's) to sparsevec and builds it again.
// Reported: migrate-s, the Open.
func BenchmarkMigrateFromV5(b *testing.B) {
	benchMigrate(b, func(ctx context.Context, schema string) error { return downgradeToV5(ctx, needPG(b), schema) })
}

// BenchmarkMigrateFromV9 is BenchmarkMigrateFromV5 from schema version 9:
// migration 10 alone, which rewrites the chunks table with the vectors as
// sparsevec and builds the HNSW index again, in the migration's
// transaction, while writers wait.
func BenchmarkMigrateFromV9(b *testing.B) {
	benchMigrate(b, func(ctx context.Context, schema string) error {
		conn, err := pgx.Connect(ctx, withParams(needPG(b), "search_path", schema+",public"))
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		return downgradeToV9(ctx, conn)
	})
}

// BenchmarkReindex measures the open of a store whose terms another
// tokenizer cut (one that adds a term to every text, so that every record
// changes: the worst case), AGENTMEM_BENCH_N records (default 10,000) in
// one namespace loaded as import loads them: every record's text cut
// again, every row rewritten, the namespace's statistics summed and its
// postings packed into blocks again. Reported: reindex-s (the Open) and
// changed-records.
func BenchmarkReindex(b *testing.B) {
	n := benchN(b)
	ctx := context.Background()
	emb := hashEmb(b, 512)
	tok, err := keyword.NewTokenizer()
	require.NoError(b, err)
	old := extraTermTokenizer{tok}
	recs := benchRecords(n)
	for range b.N {
		u := storeURL(b)
		m, err := postgres.Open(ctx, u, emb, postgres.WithCreate(), postgres.WithTokenizer(old))
		require.NoError(b, err)
		_, err = m.Load(ctx, recs, 1000, nil)
		require.NoError(b, err)
		_, err = m.Pool().Exec(ctx, `CREATE TABLE bench_terms AS SELECT seq, terms FROM records`)
		require.NoError(b, err)
		require.NoError(b, m.Close())
		t := time.Now()
		m, err = postgres.Open(ctx, u, emb)
		require.NoError(b, err)
		b.ReportMetric(time.Since(t).Seconds(), "reindex-s")
		var changed int
		require.NoError(b, m.Pool().QueryRow(ctx, `SELECT count(*) FROM records r JOIN bench_terms o USING (seq) WHERE r.terms <> o.terms`).Scan(&changed))
		b.ReportMetric(float64(changed), "changed-records")
		require.NoError(b, m.Close())
	}
}

// extraTermTokenizer cuts as the tokenizer it wraps and adds a term.
type extraTermTokenizer struct{ keyword.Tokenizer }

func (t extraTermTokenizer) Tokens(text string) []string {
	return append(t.Tokenizer.Tokens(text), "extraterm")
}

func (t extraTermTokenizer) Name() string { return "extra-term" }

// benchMigrate loads AGENTMEM_BENCH_N records into a new store (in one
// AddBatch, the HNSW index built at its end when due), turns the store
// into an older one with downgrade, and reports the time Open takes to
// migrate it (migrate-s).
func benchMigrate(b *testing.B, downgrade func(ctx context.Context, schema string) error) {
	n := benchN(b)
	ctx := context.Background()
	emb := hashEmb(b, 512)
	for range b.N {
		u := storeURL(b)
		m, err := postgres.Open(ctx, u, emb, postgres.WithCreate())
		require.NoError(b, err)
		_, err = m.AddBatch(ctx, benchRecords(n)) // a bulk load: no pending chunks
		require.NoError(b, err)
		schema := m.Schema()
		require.NoError(b, m.Close())
		require.NoError(b, downgrade(ctx, schema))
		t := time.Now()
		m, err = postgres.Open(ctx, u, emb)
		require.NoError(b, err)
		b.ReportMetric(time.Since(t).Seconds(), "migrate-s")
		require.NoError(b, m.Close())
	}
}

// BenchmarkVsDir loads the same AGENTMEM_BENCH_N records (default 10,000)
// into a directory store and into PostgreSQL, as `agentmem import` does
// (batches of 1,000: AddBatch for the directory, Load for PostgreSQL),
// then writes 100 single records into each and runs BenchmarkStores'
// 200 hybrid queries on each, the two stores taking turns query by
// query; it prints PostgreSQL's figures as ratios to the directory
// store's, the figures issue 25 sets targets for: ingest records/s
// (pg/dir, higher is better; ingest-pg/dir counts the directory's batches
// alone, import-pg/dir its close too, which writes its snapshot as
// `agentmem import` does before it exits), single-add p50 and hybrid p50
// and p95 (pg/dir, lower is better). PostgreSQL runs with the defaults a user
// gets (WithIndexAfter's among them: the package's tests set another).
func BenchmarkVsDir(b *testing.B) {
	n := benchN(b)
	recs := benchRecords(n + 100)
	queries := benchQueries(recs)
	ctx := context.Background()
	emb := hashEmb(b, 512)
	for range b.N {
		dirPath := b.TempDir()
		dir, err := longterm.Open(ctx, dirPath, emb)
		require.NoError(b, err)
		pg := openWith(b, storeURL(b), emb, postgres.WithIndexAfter(postgres.DefaultIndexAfter))
		t, cpu := time.Now(), cputime.Process()
		for i := 0; i < n; i += 1000 {
			_, err := dir.AddBatch(ctx, recs[i:min(i+1000, n)])
			require.NoError(b, err)
		}
		dirIngest, dirCPU := time.Since(t), cputime.Process()-cpu
		// agentmem import closes the directory before it exits, and the
		// close writes the snapshot the next open reads instead of
		// replaying the log (its keyword index among it, which the
		// batches leave to the first search): the import's whole time.
		t = time.Now()
		require.NoError(b, dir.Close())
		dirClose := time.Since(t)
		dir, err = longterm.Open(ctx, dirPath, emb)
		require.NoError(b, err)
		b.Cleanup(func() { dir.Close() })
		server, serverOK := serverCPU()
		t, cpu = time.Now(), cputime.Process()
		var batches time.Duration // until the last batch committed
		_, err = pg.Load(ctx, recs[:n], 1000, func(int) { batches = time.Since(t) })
		require.NoError(b, err)
		pgIngest, pgCPU := time.Since(t), cputime.Process()-cpu
		// CPU-seconds of the ingests: the directory store's, the Go
		// process's during Load and (with a cluster of pg-test.sh) the
		// server's.
		b.ReportMetric(dirCPU.Seconds(), "dir-cpu-s")
		b.ReportMetric(pgCPU.Seconds(), "pg-go-cpu-s")
		if s, ok := serverCPU(); ok && serverOK {
			b.ReportMetric((s - server).Seconds(), "pg-server-cpu-s")
		}
		var dirAdd, pgAdd []time.Duration
		for _, r := range recs[n:] {
			t := time.Now()
			_, err := dir.Add(ctx, r)
			require.NoError(b, err)
			dirAdd = append(dirAdd, time.Since(t))
			t = time.Now()
			_, err = pg.Add(ctx, r)
			require.NoError(b, err)
			pgAdd = append(pgAdd, time.Since(t))
		}
		dirQ, pgQ := takeTurns(b, dir, pg, queries)
		for _, l := range [][]time.Duration{dirAdd, pgAdd, dirQ, pgQ} {
			slices.Sort(l)
		}
		p := func(l []time.Duration, q int) float64 { return ms(l[len(l)*q/100]) }
		b.ReportMetric(float64(n)/dirIngest.Seconds(), "dir-records/s")
		b.ReportMetric(float64(n)/pgIngest.Seconds(), "pg-records/s")
		b.ReportMetric(dirIngest.Seconds()/pgIngest.Seconds(), "ingest-pg/dir")
		b.ReportMetric(dirClose.Seconds(), "dir-close-s")
		b.ReportMetric((dirIngest+dirClose).Seconds()/pgIngest.Seconds(), "import-pg/dir")
		b.ReportMetric(batches.Seconds(), "pg-batches-s")
		b.ReportMetric((pgIngest - batches).Seconds(), "pg-index-build-s")
		b.ReportMetric(p(dirAdd, 50), "dir-add-p50-ms")
		b.ReportMetric(p(pgAdd, 50), "pg-add-p50-ms")
		b.ReportMetric(p(pgAdd, 50)/p(dirAdd, 50), "add-p50-pg/dir")
		b.ReportMetric(p(dirQ, 50), "dir-hybrid-p50-ms")
		b.ReportMetric(p(pgQ, 50), "pg-hybrid-p50-ms")
		b.ReportMetric(p(pgQ, 50)/p(dirQ, 50), "hybrid-p50-pg/dir")
		b.ReportMetric(p(pgQ, 95)/p(dirQ, 95), "hybrid-p95-pg/dir")
		// How many of PostgreSQL's vector searches its copy of the
		// namespace's vectors answered (WithVectorCache).
		b.ReportMetric(float64(postgres.VectorCacheSearches(pg)), "pg-vector-copy-searches")
	}
}

// BenchmarkSmallBatches measures AddBatch calls of 2 to 64 records (an
// agent's turn or a few) on a namespace loaded as BenchmarkVsDir loads it
// (AGENTMEM_BENCH_N records, default 10,000): for each size, 30 batches
// into a directory store and 30 into PostgreSQL through add_record (one
// call per record in one transaction, SetFastBatch(size)) and 30 through
// the general path (SetFastBatch(0): COPY and a dozen statements), taking
// turns batch by batch. It reports each one's p50 (ms) per size and
// PostgreSQL's ratios to the directory store's. The sizes stay at most 64
// records: a batch of more than 256 chunks (85 of these records, of 2 to
// 4 chunks) is inserted into the HNSW index instead of pending, which
// costs seconds and would measure that rule instead of the paths.
func BenchmarkSmallBatches(b *testing.B) {
	n := benchN(b)
	sizes := []int{2, 4, 8, 16, 64}
	extra := 0
	for _, s := range sizes {
		extra += 3 * 30 * s
	}
	recs := benchRecords(n + extra)
	ctx := context.Background()
	emb := hashEmb(b, 512)
	for range b.N {
		dir := openDir(b, emb)
		pg := openWith(b, storeURL(b), emb)
		for i := 0; i < n; i += 1000 {
			_, err := dir.AddBatch(ctx, recs[i:min(i+1000, n)])
			require.NoError(b, err)
		}
		_, err := pg.Load(ctx, recs[:n], 1000, nil)
		require.NoError(b, err)
		next := n
		for _, size := range sizes {
			var dirT, fastT, generalT []time.Duration
			for range 30 {
				for _, s := range []struct {
					write func([]memory.Record) error
					lat   *[]time.Duration
				}{
					{func(r []memory.Record) error { _, err := dir.AddBatch(ctx, r); return err }, &dirT},
					{func(r []memory.Record) error {
						defer postgres.SetFastBatch(len(r))()
						_, err := pg.AddBatch(ctx, r)
						return err
					}, &fastT},
					{func(r []memory.Record) error {
						defer postgres.SetFastBatch(0)()
						_, err := pg.AddBatch(ctx, r)
						return err
					}, &generalT},
				} {
					t := time.Now()
					require.NoError(b, s.write(recs[next:next+size]))
					*s.lat = append(*s.lat, time.Since(t))
					next += size
				}
			}
			p50 := func(l []time.Duration) float64 { slices.Sort(l); return ms(l[len(l)/2]) }
			d, f, g := p50(dirT), p50(fastT), p50(generalT)
			b.ReportMetric(d, fmt.Sprintf("dir-%d-p50-ms", size))
			b.ReportMetric(f, fmt.Sprintf("pg-%d-p50-ms", size))
			b.ReportMetric(g, fmt.Sprintf("pg-general-%d-p50-ms", size))
			b.ReportMetric(f/d, fmt.Sprintf("pg/dir-%d", size))
			b.ReportMetric(g/d, fmt.Sprintf("pg-general/dir-%d", size))
		}
	}
}

// BenchmarkVsDirQueries measures BenchmarkVsDir's hybrid queries alone,
// on AGENTMEM_BENCH_N records (default 10,000) loaded as BenchmarkVsDir
// loads them, with PostgreSQL's default WithIndexAfter (its HNSW index
// from 20,000 records). With AGENTMEM_BENCH_KEEP=DIR the load is kept
// (the store directory in DIR, the schema bench_keep_N in the test
// cluster) and reused by the next runs on the same cluster, so that the
// queries of a large store can be measured again without loading it
// again. Each of b.N iterations opens a fresh Memory of PostgreSQL (its
// caches empty, as after a write) and runs the 200 queries on both
// stores twice, taking turns query by query: cold, while PostgreSQL's
// copies of the namespace are read in the background (its p50 and
// ratio reported as cold-), then warm, once those reads ended. It
// reports the warm round's p50 and p95 of both stores and their ratios
// (pg/dir), the heap the Memory holds then (pg-heap-MB: its copies of
// the namespace) and the directory store's (dir-heap-MB), and PostgreSQL's hybrid recall@10 against the same queries
// with an exact vector search of the same schema (exact=1, no vector
// copy): the share of the exact top 10's records that the hybrid top 10
// holds.
func BenchmarkVsDirQueries(b *testing.B) {
	n := benchN(b)
	recs := benchRecords(n)
	queries := benchQueries(recs)
	ctx := context.Background()
	emb := hashEmb(b, 512)
	dirPath, url := b.TempDir(), ""
	keep := os.Getenv("AGENTMEM_BENCH_KEEP")
	if keep == "" {
		url = storeURL(b)
	} else {
		dirPath = fmt.Sprintf("%s/dir-%d", keep, n)
		url = withParams(needPG(b), "schema", fmt.Sprintf("bench_keep_%d", n))
	}
	heap := func() float64 {
		var st runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&st)
		return float64(st.HeapAlloc) / (1 << 20)
	}
	opts := []postgres.Option{postgres.WithIndexAfter(postgres.DefaultIndexAfter)}
	pg := openWith(b, url, emb, opts...)
	heap0 := heap()
	dir, err := longterm.Open(ctx, dirPath, emb)
	require.NoError(b, err)
	b.Cleanup(func() { dir.Close() })
	dirHeap := heap() - heap0 // a kept load's; a new one's is measured after it
	if dir.Len() != n || pg.Len() != n {
		require.Zero(b, dir.Len(), "a kept store directory of another load")
		require.Zero(b, pg.Len(), "a kept schema of another load")
		for i := 0; i < n; i += 1000 {
			_, err := dir.AddBatch(ctx, recs[i:min(i+1000, n)])
			require.NoError(b, err)
		}
		dirHeap = heap() - heap0
		_, err := pg.Load(ctx, recs, 1000, nil)
		require.NoError(b, err)
	}
	require.NoError(b, pg.Close())
	// The exact search's answers, kept with the load (a minute at
	// 100,000 records).
	wantPath := ""
	if keep != "" {
		wantPath = filepath.Join(keep, fmt.Sprintf("exact-%d.json", n))
	}
	want, _ := exactAnswers(b, url, emb, opts, queries, wantPath)
	// round runs the queries on both stores, taking turns query by
	// query, and returns their latencies, sorted, and pg's recall.
	round := func(pg *postgres.Memory) (dirQ, pgQ []time.Duration, recall float64) {
		hit, of := 0, 0
		for i, q := range queries {
			t := time.Now()
			_, err := dir.Query(ctx, memory.Query{Text: q, Namespace: "bench", K: 10})
			require.NoError(b, err)
			dirQ = append(dirQ, time.Since(t))
			t = time.Now()
			hits, err := pg.Query(ctx, memory.Query{Text: q, Namespace: "bench", K: 10})
			require.NoError(b, err)
			pgQ = append(pgQ, time.Since(t))
			hit += found(want[i], hitIDs(hits))
			of += len(want[i])
		}
		slices.Sort(dirQ)
		slices.Sort(pgQ)
		return dirQ, pgQ, float64(hit) / float64(max(of, 1))
	}
	p := func(l []time.Duration, q int) float64 { return ms(l[len(l)*q/100]) }
	b.ResetTimer()
	for range b.N {
		// A fresh Memory: its first queries find its copies of the
		// namespace (vectors, links) missing and read them in the
		// background (cold), the next ones use them (warm).
		heap0 := heap()
		pg := openWith(b, url, emb, opts...)
		dirQ, pgQ, _ := round(pg)
		b.ReportMetric(p(pgQ, 50), "pg-cold-p50-ms")
		b.ReportMetric(p(pgQ, 50)/p(dirQ, 50), "cold-p50-pg/dir")
		b.ReportMetric(float64(postgres.VectorCacheSearches(pg)), "pg-cold-vector-copy-searches")
		before := postgres.VectorCacheSearches(pg) // waits for the reads
		dirQ, pgQ, recall := round(pg)
		copies := postgres.VectorCacheSearches(pg) - before
		// What the Memory keeps (its copies of the namespace).
		b.ReportMetric(heap()-heap0, "pg-heap-MB")
		b.ReportMetric(dirHeap, "dir-heap-MB")
		require.NoError(b, pg.Close())
		b.ReportMetric(p(dirQ, 50), "dir-hybrid-p50-ms")
		b.ReportMetric(p(pgQ, 50), "pg-hybrid-p50-ms")
		b.ReportMetric(p(dirQ, 95), "dir-hybrid-p95-ms")
		b.ReportMetric(p(pgQ, 95), "pg-hybrid-p95-ms")
		b.ReportMetric(p(pgQ, 50)/p(dirQ, 50), "hybrid-p50-pg/dir")
		b.ReportMetric(p(pgQ, 95)/p(dirQ, 95), "hybrid-p95-pg/dir")
		b.ReportMetric(recall, "recall@10-vs-exact")
		b.ReportMetric(float64(copies), "pg-vector-copy-searches")
	}
}

// BenchmarkAllNamespaces measures hybrid searches of every namespace (a
// query without one, as `agentmem search` asks by default) on
// AGENTMEM_BENCH_N records (default 10,000) in AGENTMEM_BENCH_NS
// namespaces (default 10) written in turns (record i in namespace i mod
// their number, so each one's seqs are spread),
// loaded into a directory store and into PostgreSQL as BenchmarkVsDir
// loads them: BenchmarkStores' 200 queries, searched once through on
// both (PostgreSQL's copies of the namespaces and its caches of their
// records read), then again, the two stores taking turns. It reports
// both stores' p50 and p95 of that round and their ratios (pg/dir), and
// the same of the queries asked in one namespace (one-). Before, it
// reopens PostgreSQL's Memory and times its first 30 searches of all
// namespaces, while its copies and caches are read (pg-cold-30-s).
func BenchmarkAllNamespaces(b *testing.B) {
	n := benchN(b)
	nss := 10
	if v := os.Getenv("AGENTMEM_BENCH_NS"); v != "" {
		var err error
		nss, err = strconv.Atoi(v)
		require.NoError(b, err, "AGENTMEM_BENCH_NS")
		require.Positive(b, nss, "AGENTMEM_BENCH_NS")
	}
	recs := benchRecords(n)
	for i := range recs {
		recs[i].Namespace = fmt.Sprintf("ns%02d", i%nss)
	}
	queries := benchQueries(recs)
	ctx := context.Background()
	emb := hashEmb(b, 512)
	p := func(l []time.Duration, q int) float64 { return ms(l[len(l)*q/100]) }
	for range b.N {
		b.StopTimer()
		dir := openDir(b, emb)
		url := storeURL(b)
		pg := openWith(b, url, emb, postgres.WithIndexAfter(postgres.DefaultIndexAfter))
		for i := 0; i < n; i += 1000 {
			_, err := dir.AddBatch(ctx, recs[i:min(i+1000, n)])
			require.NoError(b, err)
		}
		_, err := pg.Load(ctx, recs, 1000, nil)
		require.NoError(b, err)
		b.StartTimer()
		require.NoError(b, pg.Close())
		pg = openWith(b, url, emb, postgres.WithIndexAfter(postgres.DefaultIndexAfter))
		t := time.Now()
		for _, q := range queries[:30] {
			_, err := pg.Query(ctx, memory.Query{Text: q, K: 10})
			require.NoError(b, err)
		}
		b.ReportMetric(time.Since(t).Seconds(), "pg-cold-30-s")
		for _, scope := range []struct{ ns, prefix string }{{"", ""}, {"ns03", "one-"}} {
			round := func() (dirQ, pgQ []time.Duration) {
				dirQ, pgQ = takeTurnsIn(b, dir, pg, scope.ns, queries)
				slices.Sort(dirQ)
				slices.Sort(pgQ)
				return dirQ, pgQ
			}
			round()
			postgres.VectorCacheSearches(pg) // waits for the copies' reads
			postgres.LinkFills(pg)           // and the caches'
			dirQ, pgQ := round()
			b.ReportMetric(p(dirQ, 50), scope.prefix+"dir-hybrid-p50-ms")
			b.ReportMetric(p(pgQ, 50), scope.prefix+"pg-hybrid-p50-ms")
			b.ReportMetric(p(pgQ, 50)/p(dirQ, 50), scope.prefix+"hybrid-p50-pg/dir")
			b.ReportMetric(p(pgQ, 95)/p(dirQ, 95), scope.prefix+"hybrid-p95-pg/dir")
		}
	}
}
