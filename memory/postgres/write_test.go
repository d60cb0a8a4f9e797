package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/postgres"
)

// oneWriteRecords are records of two namespaces with speakers, tags, a
// validity, gaps that start new episodes and a replaced id.
func oneWriteRecords() []memory.Record {
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	var recs []memory.Record
	for i := range 30 {
		r := memory.Record{ID: fmt.Sprintf("w%d", i), Namespace: []string{"a", "b"}[i%2],
			Speaker: []string{"ana", "bo", ""}[i%3], Time: t0.Add(time.Duration(i) * time.Hour * time.Duration(1+i%4*3)),
			Text: fmt.Sprintf("turn %d: the ferry to pier %d leaves at %d o'clock. Bring the blue crate %d.", i, i%5, 6+i%12, i*11)}
		if i%7 == 0 {
			r.Tags = []string{"ferry", fmt.Sprint(i)}
		}
		if i%9 == 0 {
			r.ValidUntil = r.Time.Add(48 * time.Hour)
		}
		recs = append(recs, r)
	}
	// A replacement, written by the general path in both stores.
	return append(recs, memory.Record{ID: "w4", Namespace: "a", Time: t0.Add(200 * time.Hour), Text: "turn 4 again: the ferry is cancelled."})
}

// storeRows returns the rows of a store's tables that a write sets, keyed
// by record id and namespace name (not by generated ids).
func storeRows(t *testing.T, m *postgres.Memory) map[string][]string {
	t.Helper()
	queries := map[string]string{
		"records": `SELECT format('%s %s %s %s %s %s %s %s %s %s %s %s %s', r.id, n.name, r.text, r.time, r.speaker, r.tags, r.text_len,
			p.id, e.id, r.valid_from, r.valid_until, r.seen, r.text_key)
			FROM records r JOIN namespaces n ON n.id = r.ns LEFT JOIN records p ON p.seq = r.prev_seq LEFT JOIN records e ON e.seq = r.episode ORDER BY 1`, // an episode's first record may be gone
		"chunks": `SELECT format('%s %s %s %s %s %s %s %s %s', r.id, n.name, c.time, c.ord, c.start_byte, c.end_byte, c.text, c.embedding, c.valid_until)
			FROM chunks c JOIN records r ON r.seq = c.seq JOIN namespaces n ON n.id = c.ns ORDER BY 1`,
		"terms": `SELECT format('%s %s %s', r.id, r.terms, r.tfs) FROM records r ORDER BY 1`,
		"episodes": `SELECT format('%s %s %s %s', n.name, r.id, e.len, e.records) FROM episodes e JOIN namespaces n ON n.id = e.ns
			JOIN records r ON r.seq = e.episode ORDER BY 1`,
		"speakers": `SELECT format('%s %s %s', n.name, s.speaker, s.n) FROM speakers s JOIN namespaces n ON n.id = s.ns ORDER BY 1`,
		"namespaces": `SELECT format('%s %s %s %s %s %s %s %s', n.name, n.text_docs, n.text_len, r.id, n.last_time, n.episode_docs, n.ended, n.latest)
			FROM namespaces n LEFT JOIN records r ON r.seq = n.last_seq ORDER BY 1`,
	}
	out := map[string][]string{}
	for table, q := range queries {
		rows, err := m.Pool().Query(t.Context(), q)
		require.NoError(t, err, table)
		for rows.Next() {
			var s string
			require.NoError(t, rows.Scan(&s))
			out[table] = append(out[table], s)
		}
		require.NoError(t, rows.Err())
	}
	return out
}

// sameRows asserts that got's tables hold want's rows (storeRows), and
// that both stores' statistics agree with their rows (checkStats); it
// returns both stores' rows.
func sameRows(t *testing.T, want, got *postgres.Memory) (wantRows, gotRows map[string][]string) {
	t.Helper()
	w, g := storeRows(t, want), storeRows(t, got)
	for table := range w {
		assert.Equal(t, w[table], g[table], table)
	}
	checkStats(t, got)
	checkStats(t, want)
	return w, g
}

// TestSingleAddsLikeBatch: records written one Add at a time (most through
// add_record, in one statement; a replacement and the writes that pack a
// namespace's tail through the general path) leave the same rows and
// statistics as the same records written by one AddBatch, and both stores
// verify.
func TestSingleAddsLikeBatch(t *testing.T) {
	defer postgres.SetBlocks(4, 8)() // the tail is packed every few writes
	ctx := t.Context()
	one, batch := open(t, storeURL(t)), open(t, storeURL(t))
	recs := oneWriteRecords()
	for _, r := range recs {
		_, err := one.Add(ctx, r)
		require.NoError(t, err)
	}
	_, err := batch.AddBatch(ctx, recs[:len(recs)-1])
	require.NoError(t, err)
	_, err = batch.Add(ctx, recs[len(recs)-1])
	require.NoError(t, err)
	_, got := sameRows(t, batch, one)
	require.Len(t, got["records"], 30)
	require.NotEmpty(t, got["episodes"])
	hits, err := one.Query(ctx, memory.Query{Text: "blue crate 77", Namespace: "b"})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "w7", hits[0].ID)
}

// TestSmallBatchesLikeGeneralPath: small batches written through
// add_record (one transaction each, one call per record; a batch that
// meets a full tail, mixes namespaces or replaces a record through the
// general path) leave the same rows and statistics as the same batches
// written by the general path alone, and both stores verify.
func TestSmallBatchesLikeGeneralPath(t *testing.T) {
	defer postgres.SetBlocks(4, 8)() // the tail is packed every few writes
	ctx := t.Context()
	recs := oneWriteRecords()
	var batches [][]memory.Record
	for _, ns := range []string{"a", "b"} {
		var mine []memory.Record
		for _, r := range recs[:len(recs)-1] {
			if r.Namespace == ns {
				mine = append(mine, r)
			}
		}
		for i := 0; i < len(mine); i += 3 {
			batches = append(batches, mine[i:min(i+3, len(mine))])
		}
	}
	batches = append(batches,
		recs[len(recs)-3:],                // two namespaces and a replacement
		[]memory.Record{recs[1], recs[3]}, // replacements
		[]memory.Record{{ID: "n1", Namespace: "c", Text: "a new namespace, written twice", Time: recs[0].Time},
			{ID: "n1", Namespace: "c", Text: "a new namespace, the second version", Time: recs[0].Time},
			{ID: "n2", Namespace: "c", Text: "and one more", Time: recs[0].Time.Add(time.Minute)}})
	write := func(m *postgres.Memory) {
		for _, b := range batches {
			_, err := m.AddBatch(ctx, b)
			require.NoError(t, err)
		}
	}
	fast := open(t, storeURL(t))
	write(fast)
	general := open(t, storeURL(t))
	func() {
		defer postgres.SetFastBatch(0)()
		write(general)
	}()
	want, got := sameRows(t, general, fast)
	require.Len(t, want["records"], 32, "general")
	require.Len(t, got["records"], 32)
	hits, err := fast.Query(ctx, memory.Query{Text: "second version", Namespace: "c"})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "n1", hits[0].ID)
}

// indexDefs returns the definitions of the indexes of the store's chunks
// table, and of its constraints.
func indexDefs(t *testing.T, m *postgres.Memory) []string {
	t.Helper()
	rows, err := m.Pool().Query(t.Context(), `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'chunks'
		UNION ALL SELECT conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint
			WHERE conrelid = 'chunks'::regclass ORDER BY 1`, m.Schema())
	require.NoError(t, err)
	var defs []string
	for rows.Next() {
		var d string
		require.NoError(t, rows.Scan(&d))
		defs = append(defs, d)
	}
	require.NoError(t, rows.Err())
	return defs
}

// TestLoadDefersIndexes: a load builds the chunks indexes it dropped
// again, as they were; indexes dropped by a load that did not end (its
// process died) are built by the next Open.
func TestLoadDefersIndexes(t *testing.T) {
	ctx := t.Context()
	u := storeURL(t)
	m := open(t, u, postgres.WithBulkLoad(100))
	defs := indexDefs(t, m)
	require.GreaterOrEqual(t, len(defs), 6, "chunks' four indexes and the HNSW index, the primary key constraint")
	assert.Contains(t, defs, "chunks chunks_pkey PRIMARY KEY (id)")
	_, err := m.Load(ctx, loadRecords(250), 100, nil)
	require.NoError(t, err)
	assert.Equal(t, defs, indexDefs(t, m))
	checkStats(t, m)

	require.NoError(t, postgres.DeferIndexes(ctx, m, "chunks"))
	assert.Empty(t, indexDefs(t, m))
	problems, err := m.Verify(ctx)
	require.NoError(t, err)
	require.Len(t, problems, 1)
	assert.Contains(t, problems[0], "indexes dropped by a load that is running or did not finish (the next open builds them): 5 (first: chunks_hnsw)")
	require.NoError(t, m.Close())
	m = open(t, u)
	assert.Equal(t, defs, indexDefs(t, m))
	var left int
	require.NoError(t, m.Pool().QueryRow(ctx, `SELECT count(*) FROM deferred_indexes`).Scan(&left))
	assert.Zero(t, left)
	checkStats(t, m)
}
