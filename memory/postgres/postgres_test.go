package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/postgres"
	"github.com/agentmem/agentmem/server"
)

var _ server.Store = (*postgres.Memory)(nil)

var t0 = time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)

func TestRecords(t *testing.T) {
	ctx := t.Context()
	m := open(t, storeURL(t))

	id, err := m.Add(ctx, memory.Record{Text: "The flight LH401 leaves Frankfurt at 10:05.", Namespace: "alice", Speaker: "Alice", Tags: []string{"travel"}, Time: t0})
	require.NoError(t, err)
	require.NotEmpty(t, id)
	got, ok := m.Get(id)
	require.True(t, ok)
	assert.Equal(t, memory.Record{ID: id, Text: "The flight LH401 leaves Frankfurt at 10:05.", Namespace: "alice", Speaker: "Alice", Tags: []string{"travel"}, Time: t0}, got)

	ids, err := m.AddBatch(ctx, []memory.Record{
		{ID: "b1", Text: "Bob's phone number is 138-0013-8000.", Namespace: "bob", Time: t0.Add(time.Minute)},
		{ID: "b2", Text: "Bob likes green tea in the morning.", Namespace: "bob", Time: t0.Add(2 * time.Minute)},
		{ID: "d1", Text: "A note without a namespace.", Time: t0.Add(3 * time.Minute)},
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"b1", "b2", "d1"}, ids)
	assert.Equal(t, 4, m.Len())
	d1, ok := m.Get("d1")
	require.True(t, ok)
	assert.Equal(t, postgres.DefaultNamespace, d1.Namespace)

	// Replacing an id keeps one record, with the new text.
	_, err = m.Add(ctx, memory.Record{ID: "b2", Text: "Bob switched to black coffee.", Namespace: "bob", Time: t0.Add(4 * time.Minute)})
	require.NoError(t, err)
	assert.Equal(t, 4, m.Len())
	b2, _ := m.Get("b2")
	assert.Equal(t, "Bob switched to black coffee.", b2.Text)

	for _, mode := range []memory.Mode{memory.Hybrid, memory.KeywordOnly, memory.VectorOnly} {
		hits, err := m.Query(ctx, memory.Query{Text: "LH401 Frankfurt flight", Mode: mode, K: 2})
		require.NoError(t, err, mode)
		require.NotEmpty(t, hits, mode)
		assert.Equal(t, id, hits[0].ID, mode)
		assert.Equal(t, "alice", hits[0].Namespace)
		assert.Equal(t, []string{"travel"}, hits[0].Tags)
		assert.NotEmpty(t, hits[0].Snippets)
	}
	// A code finds its record by its whole form and by its digits.
	for _, q := range []string{"13800138000", "138-0013-8000"} {
		hits, err := m.Query(ctx, memory.Query{Text: q, Mode: memory.KeywordOnly})
		require.NoError(t, err)
		require.NotEmpty(t, hits, q)
		assert.Equal(t, "b1", hits[0].ID, q)
	}
	// Namespace scoping: nothing of alice's in bob's.
	hits, err := m.Query(ctx, memory.Query{Text: "LH401", Namespace: "bob", Mode: memory.KeywordOnly})
	require.NoError(t, err)
	assert.Empty(t, hits)
	hits, err = m.Query(ctx, memory.Query{Text: "coffee", Namespace: "nobody"})
	require.NoError(t, err)
	assert.Empty(t, hits)
	// The old text of a replaced record is gone from both paths.
	hits, err = m.Query(ctx, memory.Query{Text: "green tea", Namespace: "bob", Mode: memory.KeywordOnly})
	require.NoError(t, err)
	assert.Empty(t, hits)
	// Time range.
	hits, err = m.Query(ctx, memory.Query{Text: "Bob", From: t0.Add(3 * time.Minute)})
	require.NoError(t, err)
	for _, h := range hits {
		assert.False(t, h.Time.Before(t0.Add(3*time.Minute)), h.ID)
	}
	// Punctuation only: nothing, no error.
	hits, err = m.Query(ctx, memory.Query{Text: "?!"})
	require.NoError(t, err)
	assert.Empty(t, hits)

	// List: oldest first, filtered and paged, total before paging.
	recs, total, err := m.List(ctx, memory.ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, 4, total)
	assert.Equal(t, []string{id, "b1", "d1", "b2"}, recIDs(recs))
	recs, total, err = m.List(ctx, memory.ListOptions{Namespace: "bob", Offset: 1, Limit: 5})
	require.NoError(t, err)
	assert.Equal(t, 2, total)
	assert.Equal(t, []string{"b2"}, recIDs(recs))
	recs, total, err = m.List(ctx, memory.ListOptions{From: t0.Add(time.Minute), To: t0.Add(4 * time.Minute)})
	require.NoError(t, err)
	assert.Equal(t, 2, total)
	assert.Equal(t, []string{"b1", "d1"}, recIDs(recs))

	require.NoError(t, m.Forget(ctx, "b1"))
	assert.ErrorIs(t, m.Forget(ctx, "b1"), memory.ErrNotFound)
	_, ok = m.Get("b1")
	assert.False(t, ok)
	hits, err = m.Query(ctx, memory.Query{Text: "13800138000", Mode: memory.KeywordOnly})
	require.NoError(t, err)
	// The forgotten record's words are gone, from its neighbours' scores
	// too (as in memory/longterm): b2 no longer scores through it.
	assert.Empty(t, hits)
	assert.Equal(t, 3, m.Len())
	checkStats(t, m)

	// Bad input.
	_, err = m.Add(ctx, memory.Record{Text: "  "})
	assert.ErrorIs(t, err, memory.ErrEmptyText)
	_, err = m.AddBatch(ctx, []memory.Record{{Text: "fine"}, {Text: "bad \xff"}})
	assert.ErrorIs(t, err, memory.ErrInvalidArgument)
	assert.Equal(t, 3, m.Len(), "a refused batch stores nothing")
	_, err = m.Query(ctx, memory.Query{Text: "x", K: -1})
	assert.ErrorIs(t, err, memory.ErrInvalidArgument)
	_, err = m.Query(ctx, memory.Query{Text: "x", Neighbours: memory.MaxNeighbours + 1})
	assert.ErrorIs(t, err, memory.ErrInvalidArgument)
	_, _, err = m.List(ctx, memory.ListOptions{Offset: -1})
	assert.ErrorIs(t, err, memory.ErrInvalidArgument)

	require.NoError(t, m.Close())
	require.NoError(t, m.Close())
	_, err = m.Query(ctx, memory.Query{Text: "coffee"})
	assert.ErrorIs(t, err, memory.ErrClosed)
	_, err = m.Add(ctx, memory.Record{Text: "late"})
	assert.ErrorIs(t, err, memory.ErrClosed)
}

func recIDs(recs []memory.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

// checkStats checks that the statistics kept by the writes agree with the
// rows: documents and lengths per namespace, speakers, no orphan chunks or
// postings.
func checkStats(t *testing.T, m *postgres.Memory) {
	t.Helper()
	problems, err := m.Verify(t.Context())
	require.NoError(t, err)
	assert.Empty(t, problems)
}

func TestTwoOpensSeeEachOther(t *testing.T) {
	ctx := t.Context()
	url := storeURL(t)
	a := open(t, url)
	b := open(t, url)
	_, err := a.Add(ctx, memory.Record{ID: "x", Text: "the red kite nests in the old oak", Namespace: "n"})
	require.NoError(t, err)
	hits, err := b.Query(ctx, memory.Query{Text: "red kite", Namespace: "n"})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "x", hits[0].ID)
	require.NoError(t, b.Forget(ctx, "x"))
	_, ok := a.Get("x")
	assert.False(t, ok)
	assert.Zero(t, a.Len())
}

// Concurrent writers in two handles (separate pools, as two processes)
// write overlapping ids into shared namespaces: every id is stored once,
// and the statistics agree with the rows.
func TestConcurrentWriters(t *testing.T) {
	ctx := t.Context()
	url := storeURL(t)
	handles := []*postgres.Memory{open(t, url), open(t, url)}
	const writers, perWriter, ids = 8, 30, 60
	var wg sync.WaitGroup
	errc := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := handles[w%2]
			for i := range perWriter {
				n := (w*7 + i) % ids
				batch := []memory.Record{
					{ID: fmt.Sprintf("r%d", n), Text: fmt.Sprintf("writer %d wrote record %d about topic %d", w, n, n%5), Namespace: fmt.Sprintf("ns%d", n%3), Speaker: fmt.Sprintf("S%d", w%3)},
					{ID: fmt.Sprintf("r%d", (n+1)%ids), Text: fmt.Sprintf("writer %d rewrote record %d", w, (n+1)%ids), Namespace: fmt.Sprintf("ns%d", (n+w)%3)},
				}
				if _, err := m.AddBatch(ctx, batch); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		require.NoError(t, err)
	}
	assert.Equal(t, ids, handles[0].Len())
	recs, total, err := handles[1].List(ctx, memory.ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, ids, total)
	seen := map[string]bool{}
	for _, r := range recs {
		assert.False(t, seen[r.ID], "duplicate %s", r.ID)
		seen[r.ID] = true
	}
	checkStats(t, handles[0])
}

// A connection killed in the middle of a batch leaves nothing of it: the
// batch is one transaction.
func TestConnectionLostMidBatch(t *testing.T) {
	ctx := t.Context()
	url := storeURL(t, "application_name", "pgstore_midbatch")
	m := open(t, url, postgres.WithExact())
	_, err := m.Add(ctx, memory.Record{ID: "before", Text: "a record written before the batch"})
	require.NoError(t, err)

	admin, err := pgx.Connect(ctx, needPG(t))
	require.NoError(t, err)
	defer admin.Close(context.Background())

	recs := make([]memory.Record, 4000)
	for i := range recs {
		recs[i] = memory.Record{ID: fmt.Sprintf("batch%d", i), Text: fmt.Sprintf("record %d of a large batch. It has two sentences, the second about item %d.", i, i*7)}
	}
	killed := make(chan int, 1)
	go func() {
		// Terminate the writer's backend once its transaction is under way.
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			var n int
			err := admin.QueryRow(context.Background(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE application_name = 'pgstore_midbatch' AND xact_start IS NOT NULL AND state <> 'idle' AND query ILIKE 'copy%'`).Scan(&n)
			if err == nil && n > 0 {
				killed <- n
				return
			}
			time.Sleep(time.Millisecond)
		}
		killed <- 0
	}()
	_, err = m.AddBatch(ctx, recs)
	require.Positive(t, <-killed, "the batch's connection was not seen in COPY")
	require.Error(t, err)
	assert.ErrorIs(t, err, postgres.ErrUnavailable)
	t.Log(err)

	// The store is intact: nothing of the batch, the earlier record kept,
	// and the same handle works again (the pool replaced the connection).
	assert.Equal(t, 1, m.Len())
	checkStats(t, m)
	_, err = m.AddBatch(ctx, recs[:10])
	require.NoError(t, err)
	assert.Equal(t, 11, m.Len())
}

func TestNamedErrors(t *testing.T) {
	ctx := t.Context()
	emb := hashEmb(t, 256)

	_, err := postgres.Open(ctx, "postgres://%zz", emb)
	assert.ErrorIs(t, err, memory.ErrInvalidArgument, "bad URL")
	_, err = postgres.Open(ctx, withParams(needPG(t), "schema", "Bad-Name"), emb)
	assert.ErrorIs(t, err, memory.ErrInvalidArgument, "bad schema name")

	down := "postgres://postgres@/agentmem_test?host=" + t.TempDir() + "&port=5999&connect_timeout=2"
	_, err = postgres.Open(ctx, down, emb, postgres.WithCreate())
	assert.ErrorIs(t, err, postgres.ErrUnavailable, "server down")
	t.Log(err)

	url := storeURL(t)
	_, err = postgres.Open(ctx, url, emb)
	assert.ErrorIs(t, err, fs.ErrNotExist, "no store without WithCreate")
	_, err = postgres.ReadManifest(ctx, url)
	assert.ErrorIs(t, err, fs.ErrNotExist)

	m, err := postgres.Open(ctx, url, emb, postgres.WithCreate())
	require.NoError(t, err)
	man, err := postgres.ReadManifest(ctx, url)
	require.NoError(t, err)
	tok, err := keyword.NewTokenizer()
	require.NoError(t, err)
	assert.Equal(t, postgres.Manifest{Schema: m.Schema(), Version: postgres.SchemaVersion, Embedder: emb.Name(), Dim: 256,
		Tokenizer: keyword.TokenizerName(tok)}, man)

	// Another dimension, another embedder name: named, with both.
	_, err = postgres.Open(ctx, url, hashEmb(t, 128))
	require.ErrorIs(t, err, memory.ErrEmbedderMismatch)
	assert.Contains(t, err.Error(), "hash:256")
	assert.Contains(t, err.Error(), "hash:128")

	// A schema newer than this build.
	_, err = m.Pool().Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, 'from the future')`, postgres.SchemaVersion+1)
	require.NoError(t, err)
	m.Close()
	_, err = postgres.Open(ctx, url, emb)
	require.ErrorIs(t, err, memory.ErrVersion)
	assert.Contains(t, err.Error(), "upgrade agentmem")
	_, err = postgres.Open(ctx, url, emb, postgres.WithTopK(0))
	assert.ErrorIs(t, err, memory.ErrInvalidArgument)
	_, err = postgres.Open(ctx, url, emb, postgres.WithMarginFusion(0, 0))
	assert.ErrorIs(t, err, memory.ErrInvalidArgument)
}

// Concurrent first opens of one schema create it once.
func TestConcurrentCreate(t *testing.T) {
	url := storeURL(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := postgres.Open(t.Context(), url, hashEmb(t, 256), postgres.WithCreate())
			if err == nil {
				m.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
}

const helperEnv = "AGENTMEM_PGSTORE_HELPER_URL"

// TestKill9Helper is the child of TestKill9LosesNoAcknowledgedWrite: it
// adds records one at a time and prints each id once Add has returned.
func TestKill9Helper(t *testing.T) {
	url := os.Getenv(helperEnv)
	if url == "" {
		t.Skip("helper process only")
	}
	m, err := postgres.Open(context.Background(), url, hashEmb(t, 256))
	require.NoError(t, err)
	for i := 0; ; i++ {
		id := fmt.Sprintf("k%d", i)
		// Small concurrent batches too: group commits in flight at the kill.
		if _, err := m.AddBatch(context.Background(), []memory.Record{
			{ID: id, Text: fmt.Sprintf("acknowledged record number %d", i)},
			{ID: id + "b", Text: fmt.Sprintf("its companion number %d", i)},
		}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(id)
	}
}

func TestKill9LosesNoAcknowledgedWrite(t *testing.T) {
	url := storeURL(t)
	m := open(t, url) // creates the schema
	cmd := exec.Command(os.Args[0], "-test.run=^TestKill9Helper$")
	cmd.Env = append(os.Environ(), helperEnv+"="+url)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var acked []string
	buf := make([]byte, 0, 1<<16)
	for len(acked) < 200 {
		chunk := make([]byte, 4096)
		n, err := out.Read(chunk)
		buf = append(buf, chunk[:n]...)
		for {
			i := strings.IndexByte(string(buf), '\n')
			if i < 0 {
				break
			}
			if line := string(buf[:i]); strings.HasPrefix(line, "k") {
				acked = append(acked, line)
			}
			buf = buf[i+1:]
		}
		if err != nil {
			break
		}
	}
	require.NoError(t, cmd.Process.Kill()) // SIGKILL
	_ = cmd.Wait()
	require.GreaterOrEqual(t, len(acked), 200, "the helper stopped early")
	for _, id := range acked {
		_, ok := m.Get(id)
		require.True(t, ok, "acknowledged %s lost", id)
		_, ok = m.Get(id + "b")
		require.True(t, ok, "acknowledged %sb lost", id)
	}
	assert.Zero(t, m.Len()%2, "a batch was half-written")
	checkStats(t, m)
	if errors.Is(err, nil) {
		t.Logf("%d acknowledged batches, %d records after the kill", len(acked), m.Len())
	}
}

// TestBulkLoad: a batch at least WithBulkLoad's size and as large as the
// store rebuilds the HNSW index (dropped and built again in its
// transaction) and finds what a store loaded record by record finds; a
// smaller batch keeps the index (its chunks are written pending).
func TestBulkLoad(t *testing.T) {
	ctx := t.Context()
	recs := parityRecords()
	bulk := open(t, storeURL(t), postgres.WithBulkLoad(5), postgres.WithMaintenanceWorkMem(128))
	one := open(t, storeURL(t))
	indexOID := func() (oid uint32) {
		require.NoError(t, bulk.Pool().QueryRow(ctx, `SELECT coalesce((SELECT 'chunks_hnsw'::regclass::oid), 0)`).Scan(&oid))
		return oid
	}
	before := indexOID()
	require.NotZero(t, before, "Open creates the index")
	_, err := bulk.AddBatch(ctx, recs[:10])
	require.NoError(t, err)
	rebuilt := indexOID()
	assert.NotEqual(t, before, rebuilt, "a batch of 10 into an empty store rebuilds the index")
	_, err = bulk.AddBatch(ctx, recs[10:])
	require.NoError(t, err)
	assert.Equal(t, rebuilt, indexOID(), "a batch of 3 is written pending, the index kept")
	for _, r := range recs {
		_, err := one.Add(ctx, r)
		require.NoError(t, err)
	}
	checkStats(t, bulk)
	for _, q := range []string{"who drives the van", "lake weather", "OPS-4711"} {
		for _, mode := range []memory.Mode{memory.Hybrid, memory.VectorOnly} {
			// All namespaces: through the HNSW index.
			want, err := one.Query(ctx, memory.Query{Text: q, Mode: mode, K: 5})
			require.NoError(t, err)
			got, err := bulk.Query(ctx, memory.Query{Text: q, Mode: mode, K: 5})
			require.NoError(t, err)
			require.NotEmpty(t, got)
			assert.Equal(t, hitIDs(want), hitIDs(got), "%q %s", q, mode)
		}
	}

	_, err = postgres.Open(ctx, storeURL(t), hashEmb(t, 256), postgres.WithBulkLoad(-1))
	assert.ErrorIs(t, err, memory.ErrInvalidArgument)
	_, err = postgres.Open(ctx, storeURL(t), hashEmb(t, 256), postgres.WithMaintenanceWorkMem(0))
	assert.ErrorIs(t, err, memory.ErrInvalidArgument)
	assert.ErrorContains(t, err, "maintenance_work_mem (MB) 0 is not in [1, 2097151]")
	_, err = postgres.Open(ctx, storeURL(t), hashEmb(t, 256), postgres.WithEfSearch(1001))
	assert.ErrorIs(t, err, memory.ErrInvalidArgument)
}

// TestQuery_TiesCutByID: records that tie on every score are cut at k by
// their id, as memory/longterm cuts them, although only the records that
// can make the top k are read. (Without the episode weight: the top
// conversations, which lend their records, are chosen among equals by the
// order they were written.)
func TestQuery_TiesCutByID(t *testing.T) {
	ctx := t.Context()
	m, err := postgres.Open(ctx, storeURL(t), hashEmb(t, 256), postgres.WithCreate(), postgres.WithEpisodeWeight(0))
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	day := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	var recs []memory.Record
	for i, id := range []string{"e", "d", "c", "b", "a"} {
		// Days apart: no neighbours, no shared conversation.
		recs = append(recs, memory.Record{ID: id, Time: day.AddDate(0, 0, 3*i), Text: "The parcel arrived at the depot."})
	}
	recs = append(recs, memory.Record{ID: "z", Time: day.AddDate(0, 0, 30), Text: "A parcel."})
	_, err = m.AddBatch(ctx, recs)
	require.NoError(t, err)
	for _, mode := range []memory.Mode{memory.Hybrid, memory.KeywordOnly, memory.VectorOnly} {
		hits, err := m.Query(ctx, memory.Query{Text: "parcel at the depot", Mode: mode, K: 2})
		require.NoError(t, err)
		require.Len(t, hits, 2, mode.String())
		assert.Equal(t, []string{"a", "b"}, []string{hits[0].ID, hits[1].ID}, mode.String())
		assert.NotEmpty(t, hits[0].Text, "the record was read")
	}
}

// TestSearch_AsOfNow: Search is asked now (an agent asking during a
// conversation): its "yesterday" is the day before the clock's, without
// today's talk, where a Query without AsOf counts back from the newest
// record (today's).
func TestSearch_AsOfNow(t *testing.T) {
	ctx := t.Context()
	m := open(t, storeURL(t))
	now := time.Now()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	morning := today
	if now.Add(-time.Minute).After(today) {
		morning = now.Add(-time.Minute)
	}
	_, err := m.AddBatch(ctx, []memory.Record{
		{ID: "y1", Speaker: "Ann", Time: today.Add(-14 * time.Hour), Text: "Can you help me draft a cover letter for Acme?"},
		{ID: "y2", Speaker: "Bot", Time: today.Add(-14*time.Hour + time.Minute), Text: "Open with the Spark pipeline you built."},
		{ID: "t1", Speaker: "Ann", Time: morning, Text: "Good morning, one more question."},
	})
	require.NoError(t, err)
	hits, err := m.Search(ctx, "What did we talk about yesterday?")
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"y1", "y2"}, hitIDs(hits))
	hits, err = m.Query(ctx, memory.Query{Text: "What did we talk about yesterday?"})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"y1", "y2", "t1"}, hitIDs(hits), "the 60 hours up to the newest record")
}
