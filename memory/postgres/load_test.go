package postgres_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/postgres"
)

// hasIndex reports whether m's store has its HNSW index.
func hasIndex(t *testing.T, m *postgres.Memory) bool {
	t.Helper()
	var ok bool
	require.NoError(t, m.Pool().QueryRow(t.Context(), `SELECT to_regclass('chunks_hnsw') IS NOT NULL`).Scan(&ok))
	return ok
}

func loadRecords(n int) []memory.Record {
	recs := make([]memory.Record, n)
	for i := range recs {
		recs[i] = memory.Record{ID: fmt.Sprintf("l%d", i), Namespace: fmt.Sprintf("ns%d", i%3),
			Text: fmt.Sprintf("load note %d about cargo %d. The second sentence names crate %d.", i, i%17, i*7)}
	}
	return recs
}

// TestLoad: a load at least as large as the store builds the HNSW index
// once at its end; every record is stored and found, the store verifies,
// and progress counts the batches. A batch that fails keeps the batches
// committed before it, and the index is built all the same.
func TestLoad(t *testing.T) {
	ctx := t.Context()
	m := open(t, storeURL(t), postgres.WithBulkLoad(100))
	require.True(t, hasIndex(t, m))
	recs := loadRecords(250)
	var progress []int
	ids, err := m.Load(ctx, recs, 100, func(n int) { progress = append(progress, n) })
	require.NoError(t, err)
	assert.Equal(t, []int{100, 200, 250}, progress)
	require.Len(t, ids, 250)
	assert.Equal(t, "l249", ids[249])
	assert.Equal(t, 250, m.Len())
	assert.True(t, hasIndex(t, m))
	checkStats(t, m)
	var analyzed int
	require.NoError(t, m.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_stat_user_tables
		WHERE schemaname = current_schema() AND relname IN ('records', 'chunks', 'posting_blocks') AND last_analyze IS NOT NULL`).Scan(&analyzed))
	assert.Equal(t, 3, analyzed, "a load ends with ANALYZE of the tables it wrote")
	var pending int
	require.NoError(t, m.Pool().QueryRow(ctx, `SELECT count(*) FROM chunks WHERE pending`).Scan(&pending))
	assert.Zero(t, pending, "a load's chunks are in the index")
	hits, err := m.Query(ctx, memory.Query{Text: "crate 1379", Namespace: "ns2"})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "l197", hits[0].ID)

	bad := loadRecords(600)
	bad[450].Text = "  "
	ids, err = m.Load(ctx, bad, 200, nil)
	require.ErrorIs(t, err, memory.ErrEmptyText)
	assert.Contains(t, err.Error(), "stored 400 of 600 records")
	assert.Nil(t, ids)
	assert.Equal(t, 400, m.Len(), "l0…l249 replaced, l250…l399 added")
	assert.True(t, hasIndex(t, m), "built after the failed batch")
	checkStats(t, m)

	_, err = m.Load(ctx, recs, 0, nil)
	assert.ErrorIs(t, err, memory.ErrInvalidArgument)
}

// TestLoadPacksTails: a load packs its namespaces' tails into posting
// blocks every SetLoadMerge records and at its end, from the postings it
// holds; a record another writer adds to a namespace between the load's
// batches, or one of the load's records that it replaces, makes the pack
// read the tail from the records instead. Each way the blocks hold
// exactly the postings up to merged_seq, no tail holds SetBlocks'
// records at the end, and the keyword path finds the records.
func TestLoadPacksTails(t *testing.T) {
	defer postgres.SetBlocks(4, 8)()
	defer postgres.SetLoadMerge(30)()
	for _, tc := range []struct {
		name  string
		write func(m *postgres.Memory, stored int) error
	}{
		{"alone", nil},
		{"another writer", func(m *postgres.Memory, stored int) error {
			_, err := m.AddBatch(t.Context(), []memory.Record{{ID: fmt.Sprintf("w%d", stored), Namespace: "ns1", Text: fmt.Sprintf("writer note %d about cargo", stored)}})
			return err
		}},
		{"replaced", func(m *postgres.Memory, stored int) error {
			_, err := m.AddBatch(t.Context(), []memory.Record{{ID: fmt.Sprintf("l%d", stored-2), Namespace: "ns1", Text: fmt.Sprintf("replaced note %d about cargo", stored)}})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			m := open(t, storeURL(t), postgres.WithBulkLoad(100))
			_, err := m.Load(ctx, loadRecords(20), 20, nil) // a tail before the load
			require.NoError(t, err)
			var werr error
			_, err = m.Load(ctx, loadRecords(250), 20, func(stored int) {
				if tc.write != nil && werr == nil && stored < 250 {
					werr = tc.write(m, stored)
				}
			})
			require.NoError(t, err)
			require.NoError(t, werr)
			require.NoError(t, postgres.CheckBlocks(ctx, m))
			var unpacked int
			require.NoError(t, m.Pool().QueryRow(ctx, `SELECT count(*) FROM namespaces WHERE tail_docs >= 8`).Scan(&unpacked))
			assert.Zero(t, unpacked, "every tail packed at the load's end, as far as a write packs it")
			checkStats(t, m)
			hits, err := m.Query(ctx, memory.Query{Text: "crate 1379", Namespace: "ns2"})
			require.NoError(t, err)
			require.NotEmpty(t, hits)
			assert.Equal(t, "l197", hits[0].ID)
		})
	}
}

// TestIndexAfter: a store below WithIndexAfter's records has no HNSW
// index; its writes store nothing pending and its searches scan the
// chunks exactly, with the hits and scores of an exact=1 store. A load
// that brings it to the size builds the index at its end; so does the
// background fold once small writes do; and an Open of a store at the
// size without the index builds it, and an invalid index is built again.
func TestIndexAfter(t *testing.T) {
	ctx := t.Context()
	url := storeURL(t)
	m := open(t, url, postgres.WithIndexAfter(200), postgres.WithBulkLoad(100))
	exact := open(t, storeURL(t, "exact", "1"))
	recs := loadRecords(250)
	for _, s := range []*postgres.Memory{m, exact} {
		_, err := s.Load(ctx, recs[:150], 100, nil)
		require.NoError(t, err)
		for _, r := range recs[150:160] {
			_, err := s.Add(ctx, r)
			require.NoError(t, err)
		}
	}
	assert.False(t, hasIndex(t, m), "160 records, below 200")
	assert.False(t, postgres.Indexed(m))
	pending, _ := chunkStates(t, m)
	assert.Zero(t, pending, "nothing to fold into")
	for _, q := range []memory.Query{
		{Text: "crate 1036", Namespace: "ns1", Mode: memory.VectorOnly, K: 5},
		{Text: "cargo 3 crate", Mode: memory.Hybrid, K: 8},
		{Text: "load note 42", Mode: memory.VectorOnly, K: 10},
	} {
		got, err := m.Query(ctx, q)
		require.NoError(t, err)
		want, err := exact.Query(ctx, q)
		require.NoError(t, err)
		require.NotEmpty(t, want, q.Text)
		hitsAlike(t, want, got, q.Text)
	}

	// A load to 250 records: the index is built at its end.
	_, err := m.Load(ctx, recs[160:], 100, nil)
	require.NoError(t, err)
	assert.True(t, hasIndex(t, m))
	assert.True(t, postgres.Indexed(m))
	hits, err := m.Query(ctx, memory.Query{Text: "crate 1379", Namespace: "ns2"})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "l197", hits[0].ID)
	checkStats(t, m)

	// Small writes: the background fold builds it once they reach the size.
	small := open(t, storeURL(t), postgres.WithIndexAfter(40), postgres.WithFoldAfter(1))
	for _, r := range recs[:45] {
		_, err := small.Add(ctx, r)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return hasIndex(t, small) && postgres.Indexed(small) }, 30*time.Second, 20*time.Millisecond)

	// An Open of a store at the size without the index builds it.
	bulkURL := storeURL(t)
	bulk := open(t, withParams(bulkURL, "exact", "1"))
	_, err = bulk.Load(ctx, recs[:50], 100, nil)
	require.NoError(t, err)
	require.NoError(t, bulk.Close())
	below := open(t, bulkURL, postgres.WithIndexAfter(51))
	assert.False(t, hasIndex(t, below), "50 records, below 51")
	require.NoError(t, below.Close())
	at := open(t, bulkURL, postgres.WithIndexAfter(50))
	assert.True(t, hasIndex(t, at))

	// An index left invalid (as by a concurrent build that failed) is
	// built again: by an Open, and by the background fold.
	invalidate := func(m *postgres.Memory) {
		var super bool
		require.NoError(t, m.Pool().QueryRow(ctx, `SELECT rolsuper FROM pg_roles WHERE rolname = current_user`).Scan(&super))
		require.True(t, super, "marking an index invalid needs a superuser (scripts/pg-test.sh's clusters run as postgres)")
		_, err := m.Pool().Exec(ctx, `UPDATE pg_index SET indisvalid = false WHERE indexrelid = to_regclass('chunks_hnsw')`)
		require.NoError(t, err)
		require.False(t, validIndex(t, m))
	}
	invalidate(at)
	require.NoError(t, at.Close())
	again := open(t, bulkURL, postgres.WithIndexAfter(50))
	assert.True(t, validIndex(t, again), "rebuilt by Open")
	invalidate(small)
	postgres.RecheckIndex(small)
	require.Eventually(t, func() bool { return validIndex(t, small) }, 30*time.Second, 20*time.Millisecond, "rebuilt in the background")
}

// TestIndexAfterChunks: a store below WithIndexAfter's records gets its
// HNSW index once its namespaces large enough to search through it (here
// of more than 10 records) hold more chunks than WithVectorCache lets a
// process keep (their searches then reach the server): at the end of the
// load that passes them, and in the background after small writes once
// ANALYZE (a load's, or autovacuum's) has counted them. Namespaces small
// enough to be scanned exactly whatever their number get none.
func TestIndexAfterChunks(t *testing.T) {
	ctx := t.Context()
	recs := loadRecords(60) // two chunks each, three namespaces of 20
	big := postgres.WithBigNamespace(10)
	fits := open(t, storeURL(t), postgres.WithIndexAfter(1000), postgres.WithVectorCache(200), big)
	_, err := fits.Load(ctx, recs, 30, nil)
	require.NoError(t, err)
	assert.False(t, hasIndex(t, fits), "120 chunks, within a copy of 200")

	smallNS := open(t, storeURL(t), postgres.WithIndexAfter(1000), postgres.WithVectorCache(100))
	_, err = smallNS.Load(ctx, recs, 30, nil)
	require.NoError(t, err)
	assert.False(t, hasIndex(t, smallNS), "120 chunks past a copy of 100, but in namespaces scanned exactly")

	var log bytes.Buffer
	past := open(t, storeURL(t), postgres.WithIndexAfter(1000), postgres.WithVectorCache(100), big,
		postgres.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	_, err = past.Load(ctx, recs, 30, nil)
	require.NoError(t, err)
	assert.True(t, hasIndex(t, past), "120 chunks, past a copy of 100")
	assert.True(t, postgres.Indexed(past))
	// The build, which writers wait for, is announced (minutes at a
	// million chunks).
	assert.Contains(t, log.String(), "level=WARN msg=\"postgres: building the HNSW index, once")
	assert.Contains(t, log.String(), "records=60 chunks=120")

	small := open(t, storeURL(t), postgres.WithIndexAfter(1000), postgres.WithVectorCache(100), big, postgres.WithFoldAfter(1))
	for _, r := range recs {
		_, err := small.Add(ctx, r)
		require.NoError(t, err)
	}
	_, err = small.Pool().Exec(ctx, `ANALYZE chunks`)
	require.NoError(t, err)
	postgres.RecheckIndex(small)
	require.Eventually(t, func() bool { return hasIndex(t, small) && postgres.Indexed(small) }, 30*time.Second, 20*time.Millisecond)
}

// validIndex reports whether m's store has a valid HNSW index.
func validIndex(t *testing.T, m *postgres.Memory) bool {
	t.Helper()
	var ok bool
	require.NoError(t, m.Pool().QueryRow(t.Context(), `SELECT coalesce((SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass('chunks_hnsw')), false)`).Scan(&ok))
	return ok
}

// TestIndexAfterURL: the URL's index_after sets WithIndexAfter (over the
// option), and a value that is not a count of records is refused.
func TestIndexAfterURL(t *testing.T) {
	ctx := t.Context()
	recs := loadRecords(60)
	below := open(t, storeURL(t, "index_after", "100"), postgres.WithIndexAfter(0))
	_, err := below.Load(ctx, recs, 30, nil)
	require.NoError(t, err)
	assert.False(t, hasIndex(t, below), "60 records, below the URL's 100")
	at := open(t, storeURL(t, "index_after", "50"))
	_, err = at.Load(ctx, recs, 30, nil)
	require.NoError(t, err)
	assert.True(t, hasIndex(t, at), "60 records, at the URL's 50")
	for _, v := range []string{"-1", "many", "1e9", ""} {
		_, err := postgres.Open(ctx, storeURL(t, "index_after", v), hashEmb(t, 256), postgres.WithCreate())
		assert.ErrorIs(t, err, memory.ErrInvalidArgument, "index_after=%q", v)
	}
}

// hitsAlike asserts that got are want's hits with their scores (within
// 1e-6), in the same order but for hits whose scores differ by less: a
// search of a namespace's copy in process (int8 codes rescored in
// float32) and the server's exact scan may round a near tie apart either
// way.
func hitsAlike(t *testing.T, want, got []memory.Hit, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for j := range got {
		assert.InDelta(t, want[j].Score, got[j].Score, 1e-6, "%q hit %d", what, j)
		if want[j].ID == got[j].ID {
			continue
		}
		// A near tie: the hit is one of want's of that score.
		tied := false
		for i := range want {
			tied = tied || want[i].ID == got[j].ID && math.Abs(float64(want[i].Score-got[j].Score)) < 1e-6
		}
		assert.True(t, tied, "%q hit %d: %s, want %s", what, j, got[j].ID, want[j].ID)
	}
}
