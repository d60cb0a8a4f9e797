package longterm

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/inmem"
)

// bigBatch returns n new records in namespace ns, large enough together
// for AddBatch to index their keywords on a goroutine of its own
// (parallelTurns), one "marker" word in each, a minute apart.
func bigBatch(ns string, n int) []Record {
	recs := make([]Record, n)
	filler := strings.Repeat("the ferry to the island leaves at noon and returns at six. ", 8)
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	for i := range recs {
		recs[i] = Record{ID: fmt.Sprintf("%s-%d", ns, i), Namespace: ns, Speaker: "Ann",
			Text: fmt.Sprintf("note %d: marker%d. %s", i, i, filler), Time: t0.Add(time.Duration(i) * time.Minute)}
	}
	return recs
}

// TestAddBatch_NewRecordsAcrossNamespaces: a batch of new records in
// several namespaces (one vector add per namespace, keywords indexed
// beside it) is found by both paths, each record in its namespace, and
// so after a reopen.
func TestAddBatch_NewRecordsAcrossNamespaces(t *testing.T) {
	emb := newCounting(t, 64)
	dir := t.TempDir()
	m := openStore(t, dir, emb)
	// Build both namespaces' keyword indexes first, so that the batch
	// updates them rather than a later query building them.
	for _, ns := range []string{"a", "b"} {
		_, err := m.Query(t.Context(), Query{Text: "ferry", Namespace: ns, Mode: KeywordOnly})
		require.NoError(t, err)
	}
	batch := append(bigBatch("a", 40), bigBatch("b", 40)...)
	// Interleave the namespaces: each keeps its own order.
	for i := range 20 {
		batch[2*i+1], batch[40+2*i] = batch[40+2*i], batch[2*i+1]
	}
	ids, err := m.AddBatch(t.Context(), batch)
	require.NoError(t, err)
	require.Len(t, ids, len(batch))
	for i, r := range batch {
		assert.Equal(t, r.ID, ids[i])
	}
	check := func(m *Memory) {
		t.Helper()
		assert.Equal(t, 80, m.Len())
		for _, r := range []Record{batch[0], batch[1], batch[79]} {
			word := strings.Fields(r.Text)[2]
			for _, mode := range []Mode{KeywordOnly, VectorOnly} {
				hits, err := m.Query(t.Context(), Query{Text: word, Namespace: r.Namespace, Mode: mode, K: 3})
				require.NoError(t, err)
				require.NotEmpty(t, hits, "%s in %s, mode %v", word, r.Namespace, mode)
				assert.Equal(t, r.ID, hits[0].ID, "%s in %s, mode %v", word, r.Namespace, mode)
			}
		}
	}
	check(m)
	require.NoError(t, m.Close())
	m = openStore(t, dir, emb)
	defer m.Close()
	check(m)
}

// TestAddBatch_NewRecordsRefusedStoreNothing: when one namespace's index
// refuses a batch of new records, none of the batch is stored in any
// namespace or index, the error names the record, and the records before
// the batch are found as before.
func TestAddBatch_NewRecordsRefusedStoreNothing(t *testing.T) {
	emb := newCounting(t, 64)
	m := openStore(t, t.TempDir(), emb, WithBackend("test-refusing"))
	defer m.Close()
	first := bigBatch("ok", 3)
	_, err := m.AddBatch(t.Context(), first)
	require.NoError(t, err)
	_, err = m.Query(t.Context(), Query{Text: "ferry", Namespace: "ok", Mode: KeywordOnly})
	require.NoError(t, err)

	batch := bigBatch("ok", 60)[3:]
	batch[40].Namespace = "refused"
	_, err = m.AddBatch(t.Context(), batch)
	require.ErrorContains(t, err, "index cannot take vectors")
	require.ErrorContains(t, err, batch[40].ID)
	assert.Equal(t, 3, m.Len())
	for _, mode := range []Mode{KeywordOnly, VectorOnly} {
		hits, err := m.Query(t.Context(), Query{Text: "marker10 ferry", Namespace: "ok", Mode: mode})
		require.NoError(t, err)
		for _, h := range hits {
			assert.Contains(t, []string{"ok-0", "ok-1", "ok-2"}, h.ID, "mode %v", mode)
		}
	}
	// The same records are taken once the refused one is left out.
	batch = append(batch[:40], batch[41:]...)
	_, err = m.AddBatch(t.Context(), batch)
	require.NoError(t, err)
	assert.Equal(t, 3+len(batch), m.Len())
	hits, err := m.Query(t.Context(), Query{Text: "marker30", Namespace: "ok", Mode: KeywordOnly, K: 1})
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Equal(t, "ok-30", hits[0].ID)
}

// TestAddBatch_ReusedEmbeddingBuffer: AddBatch embeds into a buffer it
// reuses for the next batch; every record keeps its own vector, in the
// index and in the log (a reopened store finds each record by its own
// text on the vector path alone).
func TestAddBatch_ReusedEmbeddingBuffer(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	emb := newCounting(t, 64)
	m := openStore(t, dir, emb)
	texts := [][]string{
		{"The lake house key is under the blue mat.", "Carol drives the rental van.", "The survey closes on Friday."},
		{"Biscuit the puppy loves the lake.", "Ticket OPS-4711 is closed.", "Sunny and mild all week."},
		{"Board games and the coffee grinder."},
	}
	for b, batch := range texts {
		recs := make([]Record, len(batch))
		for i, s := range batch {
			recs[i] = Record{ID: fmt.Sprintf("b%d-%d", b, i), Text: s}
		}
		_, err := m.AddBatch(ctx, recs)
		require.NoError(t, err)
	}
	check := func(m *Memory, stage string) {
		for b, batch := range texts {
			for i, s := range batch {
				hits, err := m.Query(ctx, Query{Text: s, Mode: VectorOnly, K: 1})
				require.NoError(t, err)
				require.Len(t, hits, 1)
				assert.Equal(t, fmt.Sprintf("b%d-%d", b, i), hits[0].ID, "%s: %q", stage, s)
				assert.InDelta(t, 1, hits[0].Score, 1e-5, "%s: %q finds its own vector", stage, s)
			}
		}
	}
	check(m, "live")
	require.NoError(t, m.Close())
	m = openStore(t, dir, emb)
	t.Cleanup(func() { m.Close() })
	check(m, "reopened")
}

// blockingDB is a backend whose Add, in namespace "slow", waits for a
// value on release, and in namespace "boom" panics.
type blockingDB struct {
	*inmem.DB
	ns      string
	entered chan<- struct{}
	release <-chan struct{}
}

func (b blockingDB) Add(ctx context.Context, ids []int64, vecs [][]float32) error {
	switch b.ns {
	case "slow":
		b.entered <- struct{}{}
		<-b.release
	case "boom":
		panic("backend bug")
	}
	return b.DB.Add(ctx, ids, vecs)
}

// TestCommit_PanicFailsTheGroupNotHangs: when a write panics inside the
// group commit, the calls committed with it return an error instead of
// waiting forever, the panic reaches the writer that caused it, and the
// memory refuses writes (and snapshots) from then on while reads go on.
// blockingRuns numbers TestCommit_PanicFailsTheGroupNotHangs's runs.
var blockingRuns atomic.Int64

func TestCommit_PanicFailsTheGroupNotHangs(t *testing.T) {
	ctx := t.Context()
	entered, release := make(chan struct{}), make(chan struct{})
	// A backend of this run's own (a registry holds a name once; a
	// *testing.T's address may come back in a later run of -count).
	spec := fmt.Sprintf("test-blocking-%d", blockingRuns.Add(1))
	vdb.Register(spec, func(_ context.Context, cfg vdb.Config) (vdb.VectorDatabase, error) {
		db, err := inmem.New(cfg.Dim)
		return blockingDB{DB: db, ns: cfg.Namespace, entered: entered, release: release}, err
	})
	dir := t.TempDir()
	emb := newCounting(t, 32)
	m := openStore(t, dir, emb, WithBackend(spec))
	_, err := m.Add(ctx, Record{ID: "before", Namespace: "ok", Text: "stored before the panic"})
	require.NoError(t, err)
	require.NoError(t, m.Err())

	queued := func(n int) func() bool {
		return func() bool {
			m.qmu.Lock()
			defer m.qmu.Unlock()
			return len(m.queue) == n
		}
	}
	// A slow write holds the lead while "boom" and then "after" queue up,
	// so that the next leader commits both in one group.
	go func() { _, _ = m.Add(ctx, Record{ID: "slow", Namespace: "slow", Text: "slow write"}) }()
	<-entered
	boom := make(chan any, 1)
	go func() {
		defer func() { boom <- recover() }()
		_, _ = m.Add(ctx, Record{ID: "boom", Namespace: "boom", Text: "this write panics"})
	}()
	require.Eventually(t, queued(1), 5*time.Second, time.Millisecond)
	after := make(chan error, 1)
	go func() {
		_, err := m.Add(ctx, Record{ID: "after", Namespace: "ok", Text: "committed in the same group"})
		after <- err
	}()
	require.Eventually(t, queued(2), 5*time.Second, time.Millisecond)
	close(release)

	assert.Equal(t, "backend bug", <-boom, "the panic reaches the call that caused it")
	select {
	case err := <-after:
		require.Error(t, err)
		assert.ErrorContains(t, err, "a write panicked (backend bug)")
	case <-time.After(5 * time.Second):
		t.Fatal("a call committed with the panicking one is still waiting")
	}
	_, err = m.Add(ctx, Record{ID: "later", Namespace: "ok", Text: "refused"})
	assert.ErrorContains(t, err, "writes are refused until the memory is reopened")
	assert.Equal(t, err, m.Err(), "Err says why")
	assert.ErrorContains(t, m.Forget(ctx, "before"), "writes are refused")
	assert.ErrorContains(t, m.Snapshot(ctx), "writes are refused")
	hits, err := m.Query(ctx, Query{Text: "stored before the panic", Namespace: "ok", K: 1})
	require.NoError(t, err, "reads go on")
	require.Len(t, hits, 1)
	assert.Equal(t, "before", hits[0].ID)
	require.NoError(t, m.Close())

	// Reopened with a backend that works, the log is the truth: what was
	// acknowledged is there; nothing panics.
	m = openStore(t, dir, emb)
	t.Cleanup(func() { m.Close() })
	got, ok := m.Get("before")
	require.True(t, ok)
	assert.Equal(t, "stored before the panic", got.Text)
	_, ok = m.Get("slow")
	assert.True(t, ok, "the slow write was acknowledged before the panic")
}
