package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/postgres"
)

// chunkStates returns how many chunks of m's store are pending and how
// many are not.
func chunkStates(t *testing.T, m *postgres.Memory) (pending, folded int) {
	t.Helper()
	require.NoError(t, m.Pool().QueryRow(context.Background(),
		`SELECT count(*) FILTER (WHERE pending), count(*) FILTER (WHERE NOT pending) FROM chunks`).Scan(&pending, &folded))
	return pending, folded
}

// TestPendingUntilFold: with the HNSW index, small writes store their
// chunks pending (outside the partial index), a query through the index
// finds them by its exact scan of the pending chunks, and Fold moves them
// all into the index, after which the same query gives the same hits and
// scores. A bulk load folds what was pending; exact=1 writes nothing
// pending.
func TestPendingUntilFold(t *testing.T) {
	ctx := t.Context()
	m := open(t, storeURL(t), postgres.WithFoldAfter(0), postgres.WithBulkLoad(0))
	var def string
	require.NoError(t, m.Pool().QueryRow(ctx, `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'chunks_hnsw'`, m.Schema()).Scan(&def))
	assert.Contains(t, def, "WHERE (NOT pending)", "the HNSW index is partial")

	recs := parityRecords()
	for _, r := range recs {
		_, err := m.Add(ctx, r)
		require.NoError(t, err)
	}
	pending, folded := chunkStates(t, m)
	assert.Equal(t, m.Chunks(), pending, "every chunk of a single write is pending")
	assert.Zero(t, folded)

	// All namespaces: the HNSW path, here with nothing in the index.
	queries := []memory.Query{
		{Text: "who is driving the rental van?", Mode: memory.VectorOnly, K: 3},
		{Text: "lake house key", Mode: memory.Hybrid, K: 5},
		{Text: "coffee grinder board games", Mode: memory.VectorOnly, K: 5, From: t0.Add(time.Hour)},
	}
	before := make([][]memory.Hit, len(queries))
	for i, q := range queries {
		hits, err := m.Query(ctx, q)
		require.NoError(t, err)
		require.NotEmpty(t, hits, q.Text)
		before[i] = hits
	}
	assert.Equal(t, "t3", before[0][0].ID, "a pending record is found by the vector path")
	assert.Equal(t, "t8", before[1][0].ID)
	for _, h := range before[2] {
		assert.False(t, h.Time.Before(t0.Add(time.Hour)), "the time range filters the pending chunks: %s", h.ID)
	}

	require.NoError(t, m.Fold(ctx))
	pending, folded = chunkStates(t, m)
	assert.Zero(t, pending, "Fold leaves nothing pending")
	assert.Equal(t, m.Chunks(), folded)
	for i, q := range queries {
		hits, err := m.Query(ctx, q)
		require.NoError(t, err)
		require.Len(t, hits, len(before[i]), q.Text)
		for j := range hits {
			assert.Equal(t, before[i][j].ID, hits[j].ID, "%q hit %d", q.Text, j)
			assert.InDelta(t, before[i][j].Score, hits[j].Score, 1e-6, "%q hit %d", q.Text, j)
		}
	}
	checkStats(t, m)

	// Replacing a folded record writes it pending again; forgetting one
	// deletes its chunks, whichever their state.
	_, err := m.Add(ctx, memory.Record{ID: "t3", Text: "Who is driving the rental van tomorrow?", Speaker: "Alice", Time: t0.Add(4 * time.Minute)})
	require.NoError(t, err)
	require.NoError(t, m.Forget(ctx, "t2"))
	var t3Pending, t2Chunks int
	require.NoError(t, m.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM chunks c JOIN records r USING (seq) WHERE r.id = 't3' AND c.pending),
		(SELECT count(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM records r WHERE r.seq = c.seq))`).Scan(&t3Pending, &t2Chunks))
	assert.Positive(t, t3Pending, "the replaced record is pending")
	assert.Zero(t, t2Chunks, "no chunk outlives its record")
	hits, err := m.Query(ctx, memory.Query{Text: "who is driving the rental van tomorrow?", Mode: memory.VectorOnly, K: 1})
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Equal(t, "t3", hits[0].ID, "found among folded chunks")
	checkStats(t, m)

	// A bulk load (here: any batch of 20 and at least the store's size)
	// builds the index over every chunk, the pending ones too.
	b := open(t, storeURL(t), postgres.WithFoldAfter(0), postgres.WithBulkLoad(20))
	_, err = b.AddBatch(ctx, recs[:5])
	require.NoError(t, err)
	pending, _ = chunkStates(t, b)
	require.Positive(t, pending)
	more := benchRecords(20)
	_, err = b.AddBatch(ctx, more)
	require.NoError(t, err)
	pending, folded = chunkStates(t, b)
	assert.Zero(t, pending, "a bulk load leaves nothing pending")
	assert.Equal(t, b.Chunks(), folded)

	// exact=1: no index, nothing pending.
	e := open(t, storeURL(t, "exact", "1"))
	_, err = e.AddBatch(ctx, recs[:5])
	require.NoError(t, err)
	pending, _ = chunkStates(t, e)
	assert.Zero(t, pending)

	_, err = postgres.Open(ctx, storeURL(t), hashEmb(t, 256), postgres.WithFoldAfter(-1))
	assert.ErrorIs(t, err, memory.ErrInvalidArgument)
	assert.ErrorContains(t, err, "fold threshold (chunks) -1 is not in")
}

// TestBackgroundFold: writes that take the store over WithFoldAfter's
// pending chunks start a fold in the background, which leaves fewer than
// that pending; a process that does not get the fold lock skips (and Fold
// waits for it); Close during a fold returns at once, the fold's current
// batch left pending.
func TestBackgroundFold(t *testing.T) {
	ctx := t.Context()
	u := storeURL(t)
	m := open(t, u, postgres.WithFoldAfter(6))
	for _, r := range parityRecords() {
		_, err := m.Add(ctx, r)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		pending, folded := chunkStates(t, m)
		return folded > 0 && pending < 6
	}, 20*time.Second, 20*time.Millisecond, "the background fold ran")
	checkStats(t, m)

	// Another session holds the fold lock: the background fold skips,
	// Fold waits.
	conn, err := pgx.Connect(ctx, needPG(t))
	require.NoError(t, err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, `SELECT pg_advisory_lock(hashtextextended($1, 0))`, postgres.FoldLockKey(m))
	require.NoError(t, err)
	skips := postgres.FoldSkips(m)
	for _, r := range benchRecords(10) {
		_, err := m.Add(ctx, r)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return postgres.FoldSkips(m) > skips }, 20*time.Second, 5*time.Millisecond,
		"the background fold tried and found the lock held")
	pending, _ := chunkStates(t, m)
	assert.GreaterOrEqual(t, pending, 6, "no fold while another session holds the lock")
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, m.Fold(short), context.DeadlineExceeded, "Fold waits for the lock")
	_, err = conn.Exec(ctx, `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, postgres.FoldLockKey(m))
	require.NoError(t, err)
	require.NoError(t, m.Fold(ctx))
	pending, _ = chunkStates(t, m)
	assert.Zero(t, pending)

	// Close during a fold: enough pending chunks for a fold of several
	// seconds (WithBulkLoad(0) and no limit on a write's pending chunks:
	// the batch is written pending).
	restore := postgres.SetPendingLimits(1<<30, 1<<40)
	defer restore()
	bigURL := storeURL(t)
	big := open(t, bigURL, postgres.WithFoldAfter(100), postgres.WithBulkLoad(0))
	recs := benchRecords(800)
	_, err = big.AddBatch(ctx, recs)
	require.NoError(t, err)
	total := big.Chunks()
	require.Eventually(t, func() bool {
		_, folded := chunkStates(t, big)
		return folded > 0
	}, 20*time.Second, 10*time.Millisecond, "the background fold started")
	start := time.Now()
	require.NoError(t, big.Close())
	took := time.Since(start)
	assert.Less(t, took, 3*time.Second, "Close cancels the fold")

	// Nothing lost; the fold lock is free (a new Memory folds the rest).
	again := open(t, bigURL, postgres.WithFoldAfter(0))
	pending, folded := chunkStates(t, again)
	t.Logf("Close took %v with %d of %d chunks folded", took, folded, total)
	assert.Positive(t, pending, "Close interrupted the fold")
	assert.Equal(t, total, pending+folded)
	assert.Equal(t, len(recs), again.Len())
	require.NoError(t, again.Fold(ctx))
	pending, _ = chunkStates(t, again)
	assert.Zero(t, pending)
	checkStats(t, again)
}

// TestPendingBounded: only small writes are deferred, and the pending
// chunks stay bounded when writes outpace the fold: a batch of more than
// the per-write limit, and any write once the store holds about the cap,
// goes into the index at once; after a fold small writes are deferred
// again. Queries find every record whatever its chunks' state.
func TestPendingBounded(t *testing.T) {
	ctx := t.Context()
	t.Cleanup(postgres.SetPendingLimits(4, 10))
	m := open(t, storeURL(t), postgres.WithFoldAfter(0), postgres.WithBulkLoad(0))
	recs := parityRecords()

	_, err := m.AddBatch(ctx, recs[:5])
	require.NoError(t, err)
	require.Greater(t, m.Chunks(), 4, "the batch has more chunks than a write defers")
	pending, _ := chunkStates(t, m)
	assert.Zero(t, pending, "a large batch goes into the index")

	// Single writes until the estimate reaches the cap, then beyond.
	var states []int
	for _, r := range recs[5:] {
		_, err := m.Add(ctx, r)
		require.NoError(t, err)
		p, _ := chunkStates(t, m)
		states = append(states, p)
	}
	t.Logf("pending chunks after each single write: %v", states)
	final := states[len(states)-1]
	assert.Positive(t, states[0], "a small write is deferred")
	assert.Less(t, final, 10+4, "pending chunks stay within the cap and one write: %v", states)
	assert.Equal(t, final, states[len(states)-2], "past the cap writes go into the index: %v", states)
	for _, r := range recs {
		hits, err := m.Query(ctx, memory.Query{Text: r.Text, Mode: memory.VectorOnly, K: 1})
		require.NoError(t, err)
		require.NotEmpty(t, hits)
		assert.Equal(t, r.ID, hits[0].ID, "%s is found by its own text", r.ID)
	}

	require.NoError(t, m.Fold(ctx))
	_, err = m.Add(ctx, memory.Record{ID: "late", Text: "A note written after the fold.", Time: t0.Add(time.Hour)})
	require.NoError(t, err)
	pending, _ = chunkStates(t, m)
	assert.Positive(t, pending, "after a fold small writes are deferred again")
	checkStats(t, m)
}
