package longterm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/internal/embedtest"
)

func newMem(t *testing.T, opts ...Option) *Memory {
	t.Helper()
	m, err := New(t.Context(), newCounting(t, 256), append([]Option{everyMatch}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	return m
}

func ids(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func TestMemory_AddQuery_SmallToBig(t *testing.T) {
	ctx := t.Context()
	m := newMem(t)
	parent := "We talked about many things today. The weather was nice. " +
		"We decided to use PostgreSQL because of transactions. Then we had lunch."
	_, err := m.Add(ctx, Record{ID: "db", Text: parent, Speaker: "Caroline", Tags: []string{"decision"}})
	require.NoError(t, err)
	_, err = m.Add(ctx, Record{ID: "other", Text: "The cat sat on the mat all afternoon."})
	require.NoError(t, err)
	require.Equal(t, 2, m.Len())
	require.Greater(t, m.Chunks(), 2)

	for _, mode := range []Mode{Hybrid, VectorOnly, KeywordOnly} {
		t.Run(mode.String(), func(t *testing.T) {
			hits, err := m.Query(ctx, Query{Text: "PostgreSQL transactions", Mode: mode})
			require.NoError(t, err)
			require.NotEmpty(t, hits)
			h := hits[0]
			assert.Equal(t, "db", h.ID)
			assert.Equal(t, parent, h.Text, "search answers with the whole parent")
			assert.Equal(t, []string{"We decided to use PostgreSQL because of transactions."}, h.Snippets)
			assert.Equal(t, "Caroline", h.Speaker)
			assert.Equal(t, []string{"decision"}, h.Tags)
			assert.Equal(t, DefaultNamespace, h.Namespace)
			seen := map[string]bool{}
			for _, h := range hits {
				assert.False(t, seen[h.ID], "parents are deduplicated")
				seen[h.ID] = true
			}
		})
	}
}

func TestMemory_UpdateAndSearch(t *testing.T) {
	ctx := t.Context()
	m := newMem(t)
	require.NoError(t, m.Update(ctx, "The staging cluster logs show ERR_CONN_RESET every few minutes."))
	require.NoError(t, m.Update(ctx, "Lunch is at noon on Fridays."))
	hits, err := m.Search(ctx, "ERR_CONN_RESET")
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Contains(t, hits[0].Text, "ERR_CONN_RESET")
	assert.False(t, hits[0].Time.IsZero(), "Update stamps the time")
}

func TestMemory_Add_BadInput(t *testing.T) {
	ctx := t.Context()
	m := newMem(t)
	tests := []struct {
		name string
		rec  Record
		want error
	}{
		{"empty", Record{Text: ""}, ErrEmptyText},
		{"whitespace", Record{Text: " \t\n\u3000 "}, ErrEmptyText},
		{"punctuation only", Record{Text: "?!…。！"}, ErrEmptyText},
		{"invalid utf-8 text", Record{Text: "hello \xff world"}, ErrInvalidUTF8},
		{"invalid utf-8 id", Record{ID: "a\xc3", Text: "hello"}, ErrInvalidUTF8},
		{"invalid utf-8 tag", Record{Text: "hello", Tags: []string{"\xfe"}}, ErrInvalidUTF8},
		{"invalid utf-8 namespace", Record{Text: "hello", Namespace: "\xfe"}, ErrInvalidUTF8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := m.Add(ctx, tt.rec)
			require.ErrorIs(t, err, tt.want)
		})
	}
	assert.Zero(t, m.Len(), "nothing was stored")

	// A batch with one bad record stores nothing and names the record.
	_, err := m.AddBatch(ctx, []Record{{Text: "fine"}, {Text: "   "}})
	require.ErrorIs(t, err, ErrEmptyText)
	assert.Contains(t, err.Error(), "record 1")
	assert.Zero(t, m.Len())
}

func TestMemory_Add_OneMegabyte(t *testing.T) {
	ctx := t.Context()
	m := newMem(t)
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		fmt.Fprintf(&sb, "Sentence number %d talks about topic %d. 第%d句话。\n", i, i%97, i)
	}
	sb.WriteString("The secret code is ZX-9001.")
	big := sb.String()
	_, err := m.Add(ctx, Record{ID: "big", Text: big})
	require.NoError(t, err)
	assert.Greater(t, m.Chunks(), 1000, "a 1 MB memory is chunked")
	hits, err := m.Query(ctx, Query{Text: "ZX-9001", Mode: KeywordOnly})
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Equal(t, big, hits[0].Text)
	assert.Equal(t, []string{"The secret code is ZX-9001."}, hits[0].Snippets)
}

func TestMemory_Query_EdgeCases(t *testing.T) {
	ctx := t.Context()
	m := newMem(t)
	_, err := m.Add(ctx, Record{Text: "hello world", Namespace: "alice"})
	require.NoError(t, err)

	for _, q := range []string{"", "   ", "?!", "。。。！", "🙂"} {
		hits, err := m.Query(ctx, Query{Text: q})
		require.NoError(t, err, "query %q", q)
		assert.Empty(t, hits, "query %q", q)
	}
	hits, err := m.Query(ctx, Query{Text: "hello", Namespace: "nobody"})
	require.NoError(t, err, "an unknown namespace is not an error")
	assert.Empty(t, hits)

	hits, err = m.Query(ctx, Query{Text: "hello \xff"})
	require.NoError(t, err, "invalid UTF-8 in a query is repaired")
	assert.Len(t, hits, 1)

	for _, q := range []Query{
		{Text: "x", K: -1},
		{Text: "x", Mode: Mode(7)},
		{Text: "x", From: time.Unix(100, 0), To: time.Unix(50, 0)},
	} {
		_, err := m.Query(ctx, q)
		assert.ErrorIs(t, err, ErrInvalidQuery, "%+v", q)
	}
}

func TestMemory_NamespaceSmallInLargeStore(t *testing.T) {
	ctx := t.Context()
	m := newMem(t)
	var recs []Record
	for i := range 3000 {
		recs = append(recs, Record{Namespace: "big", Text: fmt.Sprintf("The project meeting number %d is about the budget.", i)})
	}
	for i := range 4 {
		recs = append(recs, Record{ID: fmt.Sprint("s", i), Namespace: "small", Text: fmt.Sprintf("Small talk %d, barely about a meeting.", i)})
	}
	_, err := m.AddBatch(ctx, recs)
	require.NoError(t, err)
	for _, mode := range []Mode{Hybrid, VectorOnly, KeywordOnly} {
		hits, err := m.Query(ctx, Query{Text: "project meeting budget", Namespace: "small", Mode: mode, K: 10})
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{"s0", "s1", "s2", "s3"}, ids(hits), mode.String())
	}
}

func TestMemory_TimeRange(t *testing.T) {
	ctx := t.Context()
	m := newMem(t)
	day := func(d int) time.Time { return time.Date(2024, 1, d, 12, 0, 0, 0, time.UTC) }
	var recs []Record
	// Many close matches outside the range, so the vector path must fetch
	// past them.
	for i := range 500 {
		recs = append(recs, Record{Time: day(1), Text: fmt.Sprintf("flight LH401 to Frankfurt, seat %d", i)})
	}
	recs = append(recs,
		Record{ID: "in1", Time: day(10), Text: "A flight, maybe to Frankfurt."},
		Record{ID: "in2", Time: day(11), Text: "Flights are expensive."},
		Record{ID: "edge", Time: day(20), Text: "Flight LH401 again."}, // To is exclusive
	)
	_, err := m.AddBatch(ctx, recs)
	require.NoError(t, err)
	for _, mode := range []Mode{Hybrid, VectorOnly} {
		hits, err := m.Query(ctx, Query{Text: "flight LH401 Frankfurt", From: day(5), To: day(20), Mode: mode, K: 10})
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{"in1", "in2"}, ids(hits), mode.String())
	}
	hits, err := m.Query(ctx, Query{Text: "LH401", From: day(5), Mode: KeywordOnly})
	require.NoError(t, err)
	assert.Equal(t, []string{"edge"}, ids(hits))
}

func TestMemory_UpsertAndForget(t *testing.T) {
	ctx := t.Context()
	m := newMem(t)
	_, err := m.Add(ctx, Record{ID: "x", Text: "The password hint is blue elephant."})
	require.NoError(t, err)
	_, err = m.Add(ctx, Record{ID: "x", Text: "The password hint is green giraffe."})
	require.NoError(t, err)
	assert.Equal(t, 1, m.Len())
	hits, err := m.Query(ctx, Query{Text: "elephant", Mode: KeywordOnly})
	require.NoError(t, err)
	assert.Empty(t, hits, "the replaced text is gone")

	require.NoError(t, m.Forget(ctx, "x"))
	require.ErrorIs(t, m.Forget(ctx, "x"), ErrNotFound)
	for _, mode := range []Mode{Hybrid, VectorOnly, KeywordOnly} {
		hits, err := m.Query(ctx, Query{Text: "password hint giraffe", Mode: mode})
		require.NoError(t, err)
		assert.Empty(t, hits, mode.String())
	}
	assert.Zero(t, m.Chunks())
}

func TestMemory_Fusion(t *testing.T) {
	ctx := t.Context()
	recs := []Record{
		{ID: "code", Text: "Order AB-77123 shipped."},
		{ID: "words", Text: "Your shipment of orders has been dispatched."},
	}
	for _, opt := range []Option{WithRRF(0), WithWeightedFusion(0.3, 0.7), WithScoreFusion(0.1, 0.9), WithMarginFusion(0.3, 0.7)} {
		m := newMem(t, opt)
		_, err := m.AddBatch(ctx, recs)
		require.NoError(t, err)
		hits, err := m.Query(ctx, Query{Text: "AB-77123", K: 2})
		require.NoError(t, err)
		require.NotEmpty(t, hits)
		assert.Equal(t, "code", hits[0].ID)
		assert.Equal(t, 1, hits[0].KeywordRank)
		for i := 1; i < len(hits); i++ {
			assert.GreaterOrEqual(t, hits[i-1].Score, hits[i].Score)
		}
	}
}

func TestMemory_MinScore(t *testing.T) {
	ctx := t.Context()
	m := newMem(t)
	_, err := m.Add(ctx, Record{Text: "completely unrelated words here"})
	require.NoError(t, err)
	hits, err := m.Query(ctx, Query{Text: "zebra", Mode: VectorOnly, MinScore: 0.9})
	require.NoError(t, err)
	assert.Empty(t, hits)
}

func TestMemory_Concurrent(t *testing.T) {
	ctx := t.Context()
	m := newMem(t)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				_, err := m.Add(ctx, Record{ID: fmt.Sprintf("g%d-%d", g, i), Text: fmt.Sprintf("goroutine %d wrote note %d", g, i)})
				assert.NoError(t, err)
				_, err = m.Query(ctx, Query{Text: "note goroutine"})
				assert.NoError(t, err)
				if i%10 == 0 {
					assert.NoError(t, m.Forget(ctx, fmt.Sprintf("g%d-%d", g, i)))
				}
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 4*45, m.Len())
}

// TestOpen_GroupCommit has concurrent writers share fsyncs on a store, then
// crashes it: every acknowledged record is in the log, with the children
// and vectors it was indexed with, in an order the replay agrees with.
func TestOpen_GroupCommit(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	emb := newCounting(t, 32)
	m := openStore(t, dir, emb, WithSnapshotEvery(0))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				_, err := m.Add(ctx, Record{ID: fmt.Sprintf("g%d-%d", g, i%20), Text: fmt.Sprintf("writer %d note %d. A second sentence %d.", g, i, i)})
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	want := make(map[string]Record, m.Len())
	for g := range 8 {
		for i := range 20 {
			id := fmt.Sprintf("g%d-%d", g, i)
			r, ok := m.Get(id)
			require.True(t, ok, id)
			want[id] = r
		}
	}
	chunks := m.Chunks()
	crash(m)

	m2 := openStore(t, dir, emb)
	defer m2.Close()
	assert.Equal(t, len(want), m2.Len(), "ids 20..24 replaced 0..4 in log order")
	assert.Equal(t, chunks, m2.Chunks())
	for id, r := range want {
		got, ok := m2.Get(id)
		require.True(t, ok, id)
		assert.Equal(t, r.Text, got.Text, id)
	}
	hits, err := m2.Query(ctx, Query{Text: "writer 3 note 24", Mode: VectorOnly, K: 1})
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Equal(t, "g3-4", hits[0].ID)
}

func TestMemory_Closed(t *testing.T) {
	ctx := t.Context()
	m := newMem(t)
	require.NoError(t, m.Close())
	require.NoError(t, m.Close(), "Close is idempotent")
	_, err := m.Add(ctx, Record{Text: "x"})
	assert.ErrorIs(t, err, ErrClosed)
	_, err = m.Query(ctx, Query{Text: "x"})
	assert.ErrorIs(t, err, ErrClosed)
	assert.ErrorIs(t, m.Compact(ctx), ErrClosed)
}

func TestMemory_NotDurable(t *testing.T) {
	m := newMem(t)
	assert.ErrorIs(t, m.Compact(t.Context()), ErrNotDurable)
	assert.ErrorIs(t, m.Snapshot(t.Context()), ErrNotDurable)
}

func TestMemory_WithBackend(t *testing.T) {
	ctx := t.Context()
	openedMu.Lock()
	clear(openedByNS) // another test's, or this one's in an earlier run (-count)
	openedMu.Unlock()
	m := newMem(t, WithBackend("test-counting"))
	_, err := m.AddBatch(ctx, []Record{{Text: "a b c", Namespace: "x"}, {Text: "d e f", Namespace: "y"}})
	require.NoError(t, err)
	openedMu.Lock()
	assert.Equal(t, map[string]int{"x": 1, "y": 1}, openedByNS, "one vector index per namespace, opened with its namespace")
	openedMu.Unlock()

	broken, err := New(ctx, newCounting(t, 8), WithBackend("test-broken"))
	require.NoError(t, err, "indexes are opened on first use")
	_, err = broken.Add(ctx, Record{Text: "a b c"})
	assert.ErrorContains(t, err, "no backend")

	_, err = New(ctx, newCounting(t, 8), WithBackend("no-such-backend"))
	require.NoError(t, err)
	_, err = New(ctx, newCounting(t, 8), WithBackend(""))
	assert.ErrorIs(t, err, ErrInvalidOption)
}

// --- durable store ---

func openStore(t *testing.T, dir string, emb *embedtest.Counting, opts ...Option) *Memory {
	t.Helper()
	m, err := Open(t.Context(), dir, emb, opts...)
	require.NoError(t, err)
	return m
}

// seededStore opens a new store in a temporary directory with a 64-dim
// counting embedder and seeds it with n records (seed); it returns the
// memory with its directory and embedder, to reopen it with.
func seededStore(t *testing.T, n int, opts ...Option) (m *Memory, dir string, emb *embedtest.Counting) {
	t.Helper()
	dir = t.TempDir()
	emb = newCounting(t, 64)
	m = openStore(t, dir, emb, opts...)
	seed(t, m, n)
	return m, dir, emb
}

// reopenAfterCrash crashes m (crash: no Close, no snapshot) and opens its
// directory again; the reopened memory is closed when the test ends.
func reopenAfterCrash(t *testing.T, m *Memory, dir string, emb *embedtest.Counting) *Memory {
	t.Helper()
	crash(m)
	m2 := openStore(t, dir, emb)
	t.Cleanup(func() { m2.Close() })
	return m2
}

func seed(t *testing.T, m *Memory, n int) {
	t.Helper()
	for i := range n {
		seed1(t, m, i)
	}
}

// seed1 adds seed's record i.
func seed1(t *testing.T, m *Memory, i int) {
	t.Helper()
	_, err := m.Add(t.Context(), Record{
		ID: fmt.Sprint("r", i), Namespace: fmt.Sprint("ns", i%3),
		Time: time.Unix(int64(1700000000+i), 0).UTC(),
		Text: fmt.Sprintf("Memory %d. The code for item %d is QX-%05d. 第%d条记忆。", i, i, i, i),
	})
	require.NoError(t, err)
}

func checkAll(t *testing.T, m *Memory, n int) {
	t.Helper()
	require.Equal(t, n, m.Len())
	for i := range n {
		r, ok := m.Get(fmt.Sprint("r", i))
		require.True(t, ok, "r%d", i)
		assert.Equal(t, fmt.Sprint("ns", i%3), r.Namespace)
	}
	hits, err := m.Query(t.Context(), Query{Text: fmt.Sprintf("QX-%05d", n-1), Namespace: fmt.Sprint("ns", (n-1)%3)})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, fmt.Sprint("r", n-1), hits[0].ID)
}

func TestOpen_ReopenDoesNotReembed(t *testing.T) {
	for _, snapshot := range []bool{true, false} {
		t.Run(fmt.Sprintf("snapshot=%v", snapshot), func(t *testing.T) {
			m, dir, emb := seededStore(t, 30)
			require.NoError(t, m.Forget(t.Context(), "r29"))
			if snapshot {
				require.NoError(t, m.Close())
			} else {
				crash(m) // the log alone must do
			}
			before := emb.Texts()

			m2 := openStore(t, dir, emb)
			defer m2.Close()
			assert.Equal(t, before, emb.Texts(), "reopening embeds nothing")
			checkAll(t, m2, 29)
			_, ok := m2.Get("r29")
			assert.False(t, ok, "forgotten stays forgotten")
			// Child ids keep increasing after reopen.
			_, err := m2.Add(t.Context(), Record{ID: "new", Text: "a new memory about zebras"})
			require.NoError(t, err)
			hits, err := m2.Query(t.Context(), Query{Text: "zebras"})
			require.NoError(t, err)
			require.NotEmpty(t, hits)
			assert.Equal(t, "new", hits[0].ID)
		})
	}
}

func TestOpen_SnapshotThenTail(t *testing.T) {
	m, dir, emb := seededStore(t, 10)
	require.NoError(t, m.Snapshot(t.Context()))
	for i := 10; i < 20; i++ {
		_, err := m.Add(t.Context(), Record{ID: fmt.Sprint("r", i), Namespace: fmt.Sprint("ns", i%3),
			Text: fmt.Sprintf("Memory %d. The code for item %d is QX-%05d.", i, i, i)})
		require.NoError(t, err)
	}
	// no Close: the snapshot covers 10, the log tail 10 more.
	m2 := reopenAfterCrash(t, m, dir, emb)
	checkAll(t, m2, 20)
}

func TestOpen_EmbedderMismatch(t *testing.T) {
	dir := t.TempDir()
	m := openStore(t, dir, newCounting(t, 64))
	seed(t, m, 2)
	require.NoError(t, m.Close())
	_, err := Open(t.Context(), dir, newCounting(t, 128))
	require.ErrorIs(t, err, ErrEmbedderMismatch)
	assert.Contains(t, err.Error(), "hash:64")
	assert.Contains(t, err.Error(), "hash:128")

	renamed := &renamedEmbedder{newCounting(t, 64)}
	_, err = Open(t.Context(), dir, renamed)
	require.ErrorIs(t, err, ErrEmbedderMismatch)
}

type renamedEmbedder struct{ *embedtest.Counting }

func (renamedEmbedder) Name() string { return "other:64" }

func logPath(dir string) string { return filepath.Join(dir, logFileName) }

func TestOpen_TornTail(t *testing.T) {
	tests := []struct {
		name string
		tail func(valid []byte) []byte // what a crash left after the valid log
	}{
		{"half frame header", func(v []byte) []byte { return []byte{0x10, 0x00, 0x00} }},
		{"frame cut short", func(v []byte) []byte {
			f := frame(nil, encodeForget(nil, "r0"))
			return f[:len(f)-2]
		}},
		{"zero filled", func(v []byte) []byte { return make([]byte, 4096) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, dir, emb := seededStore(t, 5)
			crash(m)
			valid, err := os.ReadFile(logPath(dir))
			require.NoError(t, err)
			damaged := append(valid, tt.tail(valid)...)
			require.NoError(t, os.WriteFile(logPath(dir), damaged, 0o644))

			var logs bytes.Buffer
			m2 := openStore(t, dir, emb, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			checkAll(t, m2, 5)
			assert.Contains(t, logs.String(), "repaired torn log tail")
			assert.Contains(t, logs.String(), logPath(dir))
			got, err := os.ReadFile(logPath(dir))
			require.NoError(t, err)
			assert.Equal(t, valid, got, "truncated back to the last whole record")
			broken, err := os.ReadFile(logPath(dir) + ".broken")
			require.NoError(t, err)
			assert.Equal(t, damaged, broken, "the damaged log is kept")
			seedMore(t, m2, 5, 8)
			require.NoError(t, m2.Close())
			m3 := openStore(t, dir, emb)
			defer m3.Close()
			checkAll(t, m3, 8)
		})
	}
}

func seedMore(t *testing.T, m *Memory, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		_, err := m.Add(t.Context(), Record{ID: fmt.Sprint("r", i), Namespace: fmt.Sprint("ns", i%3),
			Text: fmt.Sprintf("Memory %d. The code for item %d is QX-%05d.", i, i, i)})
		require.NoError(t, err)
	}
}

func TestOpen_FlippedByte(t *testing.T) {
	m, dir, emb := seededStore(t, 5)
	crash(m)
	valid, err := os.ReadFile(logPath(dir))
	require.NoError(t, err)

	// Find the second frame and flip a byte inside its payload, and (in a
	// second case) one inside its length.
	first := frameLen(valid, logHeaderSize)
	second := int64(logHeaderSize) + first
	for _, at := range []int64{second + frameHeader + 7, second + 1} {
		t.Run(fmt.Sprint("offset+", at-second), func(t *testing.T) {
			damaged := bytes.Clone(valid)
			damaged[at] ^= 0x40
			require.NoError(t, os.WriteFile(logPath(dir), damaged, 0o644))
			_, err := Open(t.Context(), dir, emb)
			require.ErrorIs(t, err, ErrCorrupt)
			assert.Contains(t, err.Error(), logPath(dir))
			assert.Contains(t, err.Error(), fmt.Sprintf("offset %d", second))
			got, _ := os.ReadFile(logPath(dir))
			assert.Equal(t, damaged, got, "a corrupt log is not modified")
		})
	}
	// Repairing the byte by hand brings everything back.
	require.NoError(t, os.WriteFile(logPath(dir), valid, 0o644))
	m2 := openStore(t, dir, emb)
	defer m2.Close()
	checkAll(t, m2, 5)
}

func frameLen(b []byte, off int64) int64 {
	return frameHeader + int64(uint32(b[off])|uint32(b[off+1])<<8|uint32(b[off+2])<<16|uint32(b[off+3])<<24)
}

// TestOpen_BadSnapshotIsAnError: a damaged snapshot is damage, named, not
// silently replaced (its files would be removed by the next snapshot);
// Repair rebuilds it from the log without re-embedding.
func TestOpen_BadSnapshotIsAnError(t *testing.T) {
	m, dir, emb := seededStore(t, 12)
	require.NoError(t, m.Close())
	matches, err := filepath.Glob(filepath.Join(dir, snapPrefix+"*.parents"))
	require.NoError(t, err)
	require.Len(t, matches, 1)
	b, err := os.ReadFile(matches[0])
	require.NoError(t, err)
	b[len(b)/2] ^= 1
	require.NoError(t, os.WriteFile(matches[0], b, 0o644))

	_, err = Open(t.Context(), dir, emb)
	require.ErrorIs(t, err, ErrCorrupt)
	assert.Contains(t, err.Error(), matches[0])

	before := emb.Texts()
	rep, err := Repair(t.Context(), dir, emb, WithLogger(discardLogger))
	require.NoError(t, err)
	assert.Equal(t, 12, rep.RecordsAfter)
	assert.Contains(t, rep.Rebuilt, "snapshot")
	m2 := openStore(t, dir, emb)
	defer m2.Close()
	assert.Equal(t, before, emb.Texts(), "repairing re-embeds nothing")
	checkAll(t, m2, 12)
}

func TestOpen_CorruptManifest(t *testing.T) {
	dir := t.TempDir()
	m := openStore(t, dir, newCounting(t, 64))
	require.NoError(t, m.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, manifestFile), []byte("{not json"), 0o644))
	_, err := Open(t.Context(), dir, newCounting(t, 64))
	require.ErrorIs(t, err, ErrCorrupt)
	assert.Contains(t, err.Error(), manifestFile)

	require.NoError(t, os.WriteFile(filepath.Join(dir, manifestFile), []byte(`{"format": 99}`), 0o644))
	_, err = Open(t.Context(), dir, newCounting(t, 64))
	require.ErrorIs(t, err, ErrVersion)
}

func TestReadManifest(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadManifest(dir)
	require.ErrorIs(t, err, os.ErrNotExist, "no store yet")

	m := openStore(t, dir, newCounting(t, 64))
	require.NoError(t, m.Close())
	man, err := ReadManifest(dir)
	require.NoError(t, err)
	assert.Equal(t, Manifest{Format: formatVersion, Embedder: "hash:64", Dim: 64, Backend: DefaultBackend, Kind: KindLong}, man)

	tests := []struct {
		name, data string
		want       error
		msg        string
	}{
		{"not json", "{not json", ErrCorrupt, manifestFile},
		{"short-term store", `{"format": "agentmem.short", "version": 1, "embedder": "hash:512", "dim": 512, "backend": "inmem"}`, ErrVersion, "agentmem migrate --store"},
		{"other format", `{"format": "x"}`, ErrCorrupt, "not a memory store's"},
		{"no format", `{"embedder": "hash:64", "dim": 64}`, ErrCorrupt, "no format version"},
		{"newer format", `{"format": 99}`, ErrVersion, "format 99"},
		{"no embedder", `{"format": 1, "dim": 64}`, ErrCorrupt, "embedder and dim are required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(d, manifestFile), []byte(tt.data), 0o644))
			_, err := ReadManifest(d)
			require.ErrorIs(t, err, tt.want)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

func TestOpen_KindAndOptions(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	m := openStore(t, dir, newCounting(t, 64), WithKind("short"))
	require.NoError(t, m.Close())
	_, err := Open(ctx, dir, newCounting(t, 64))
	require.ErrorIs(t, err, ErrInvalidOption)
	assert.ErrorContains(t, err, "holds a short-term memory store, opened as long-term")

	for name, opt := range map[string]Option{
		"top k zero": WithTopK(0), "top k negative": WithTopK(-1),
		"min score above 1": WithMinScore(1.5), "min score below -1": WithMinScore(-2),
		"unknown mode": WithMode(Mode(7)), "empty kind": WithKind(""),
		"margin weights both 0": WithMarginFusion(0, 0), "margin weight negative": WithMarginFusion(-0.1, 1),
		"score weight NaN": WithScoreFusion(math.NaN(), 1),
	} {
		_, err := New(ctx, newCounting(t, 8), opt)
		assert.ErrorIs(t, err, ErrInvalidOption, name)
	}
}

func TestOpen_RecordsBackendSpec(t *testing.T) {
	m, dir, emb := seededStore(t, 3)
	require.NoError(t, m.Close())
	m = openStore(t, dir, emb, WithBackend("test-other"))
	checkAll(t, m, 3)
	require.NoError(t, m.Close())
	man, err := ReadManifest(dir)
	require.NoError(t, err)
	assert.Equal(t, "test-other", man.Backend, "the manifest follows the backend the indexes are opened with")
}

func TestSnapshotVectorFiles(t *testing.T) {
	dir := t.TempDir()
	backend, files, err := SnapshotVectorFiles(dir)
	require.NoError(t, err, "no snapshot is not an error")
	assert.Empty(t, backend)
	assert.Nil(t, files)

	m := openStore(t, dir, newCounting(t, 64))
	for _, ns := range []string{"a", "b"} {
		_, err := m.Add(t.Context(), Record{Namespace: ns, Text: "memory in " + ns})
		require.NoError(t, err)
	}
	require.NoError(t, m.Close()) // writes a snapshot
	backend, files, err = SnapshotVectorFiles(dir)
	require.NoError(t, err)
	assert.Equal(t, DefaultBackend, backend)
	require.Len(t, files, 2)
	for ns, f := range files {
		assert.FileExists(t, f, ns)
		assert.Equal(t, dir, filepath.Dir(f))
	}

	require.NoError(t, os.WriteFile(filepath.Join(dir, snapMetaFile), []byte(`{"format": 7}`), 0o644))
	_, _, err = SnapshotVectorFiles(dir)
	require.ErrorIs(t, err, ErrVersion)
	require.NoError(t, os.WriteFile(filepath.Join(dir, snapMetaFile), []byte(`{`), 0o644))
	_, _, err = SnapshotVectorFiles(dir)
	require.ErrorIs(t, err, ErrCorrupt)
}

func TestCompact(t *testing.T) {
	m, dir, emb := seededStore(t, 10)
	_, err := m.Add(t.Context(), Record{ID: "secret", Text: "My bank PIN is 4711-SECRET."})
	require.NoError(t, err)
	require.NoError(t, m.Forget(t.Context(), "secret"))
	_, err = m.Add(t.Context(), Record{ID: "r3", Namespace: "ns0", Text: "Memory 3 rewritten. OLDVALUE gone."})
	require.NoError(t, err)
	before, err := os.ReadFile(logPath(dir))
	require.NoError(t, err)
	require.Contains(t, string(before), "4711-SECRET")

	require.NoError(t, m.Compact(t.Context()))
	after, err := os.ReadFile(logPath(dir))
	require.NoError(t, err)
	assert.NotContains(t, string(after), "4711-SECRET", "forgotten text is gone from disk")
	assert.Less(t, len(after), len(before))
	assert.Equal(t, 1, strings.Count(string(after), "Memory 3"), "only the latest version of r3 remains")

	// Still writable, and everything survives a crash (no Close) after it.
	_, err = m.Add(t.Context(), Record{ID: "r10", Namespace: "ns1", Text: "Memory 10. The code for item 10 is QX-00010."})
	require.NoError(t, err)
	m2 := reopenAfterCrash(t, m, dir, emb)
	assert.Equal(t, 11, m2.Len())
	_, ok := m2.Get("secret")
	assert.False(t, ok)
	r, _ := m2.Get("r3")
	assert.Contains(t, r.Text, "rewritten")
}

func TestMemory_IndexHeader(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	emb := newCounting(t, 64)
	m := openStore(t, dir, emb, WithIndexHeader(SpeakerHeader))
	_, err := m.AddBatch(ctx, []Record{
		{ID: "c", Speaker: "Caroline", Text: "Hi there. I went to the support group yesterday."},
		{ID: "m", Speaker: "Melanie", Text: "Hi there. I went to the pottery class yesterday."},
	})
	require.NoError(t, err)
	check := func(m *Memory) {
		hits, err := m.Query(ctx, Query{Text: "Caroline yesterday", Mode: KeywordOnly})
		require.NoError(t, err)
		require.NotEmpty(t, hits)
		assert.Equal(t, "c", hits[0].ID)
		assert.Equal(t, "Hi there. I went to the support group yesterday.", hits[0].Text, "the header is not stored")
		for _, s := range hits[0].Snippets {
			assert.NotContains(t, s, "Caroline:", "nor part of a snippet")
		}
	}
	check(m)
	// Reopened without a snapshot, the keyword index is rebuilt with the
	// header.
	crash(m)
	m2 := openStore(t, dir, emb, WithIndexHeader(SpeakerHeader))
	defer m2.Close()
	check(m2)
}

func TestOpen_Locked(t *testing.T) {
	dir := t.TempDir()
	emb := newCounting(t, 64)
	m := openStore(t, dir, emb)
	_, err := Open(t.Context(), dir, emb, WithLockWait(0))
	require.ErrorIs(t, err, ErrLocked)
	require.NoError(t, m.Close())
	m2 := openStore(t, dir, emb)
	require.NoError(t, m2.Close())
}

func TestMemory_LongParentDoesNotCrowdOut(t *testing.T) {
	ctx := t.Context()
	m := newMem(t)
	var sb strings.Builder
	for i := range 300 {
		fmt.Fprintf(&sb, "Alpha beta gamma note number %d.\n", i)
	}
	recs := []Record{{ID: "long", Text: sb.String()}}
	for i := range 5 {
		recs = append(recs, Record{ID: fmt.Sprint("short", i), Text: fmt.Sprintf("Alpha appears once here, in short memo %d about something else entirely.", i)})
	}
	_, err := m.AddBatch(ctx, recs)
	require.NoError(t, err)
	for _, mode := range []Mode{Hybrid, VectorOnly, KeywordOnly} {
		hits, err := m.Query(ctx, Query{Text: "alpha beta gamma", Mode: mode, K: 6})
		require.NoError(t, err)
		assert.Len(t, hits, 6, "%s: the long parent's 300 children must not hide the short ones", mode)
	}
}

func TestOpen_AutomaticSnapshot(t *testing.T) {
	m, dir, emb := seededStore(t, 10, WithSnapshotEvery(4)) // snapshots after the 4th and the 8th
	crash(m)
	var meta snapMeta
	b, err := os.ReadFile(filepath.Join(dir, snapMetaFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &meta))
	assert.Equal(t, 8, meta.Records)
	m2 := openStore(t, dir, emb)
	defer m2.Close()
	checkAll(t, m2, 10)
}

// TestOpen_AutomaticSnapshotsGrowWithStore: past 4× WithSnapshotEvery's
// count, automatic snapshots come once a quarter of the store's records
// have been written since the last one, so that loading a large store
// does not rewrite it every n records; the tail left to replay stays
// under max(n, a quarter of the store).
func TestOpen_AutomaticSnapshotsGrowWithStore(t *testing.T) {
	m, dir, emb := seededStore(t, 0, WithSnapshotEvery(10))
	var covered []int // records each automatic snapshot covered
	for i := range 100 {
		seed1(t, m, i)
		if _, err := os.Stat(filepath.Join(dir, snapMetaFile)); err == nil {
			if r := readSnapMeta(t, dir).Records; len(covered) == 0 || covered[len(covered)-1] != r {
				covered = append(covered, r)
			}
		}
		tail := i + 1
		if len(covered) > 0 {
			tail -= covered[len(covered)-1]
		}
		assert.LessOrEqual(t, tail, max(10, (i+1)/4), "after %d records", i+1)
	}
	// 10, 20, 30, 40, then a quarter of the store: 40+14 = 54 (14·4 ≥ 54),
	// 54+18 = 72, 72+24 = 96.
	assert.Equal(t, []int{10, 20, 30, 40, 54, 72, 96}, covered)
	crash(m)
	m2 := openStore(t, dir, emb)
	defer m2.Close()
	checkAll(t, m2, 100)
}

func TestOpen_WithoutSync(t *testing.T) {
	m, dir, emb := seededStore(t, 6, WithoutSync())
	require.NoError(t, m.Sync())
	m2 := reopenAfterCrash(t, m, dir, emb)
	checkAll(t, m2, 6)
}

func TestMemory_SnapshotAndCompactWhileSearching(t *testing.T) {
	ctx := t.Context()
	m, dir, emb := seededStore(t, 30)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			hits, err := m.Query(ctx, Query{Text: "QX-00007 memory", K: 3})
			assert.NoError(t, err)
			assert.NotEmpty(t, hits)
		}
	})
	for i := range 5 {
		require.NoError(t, m.Forget(ctx, fmt.Sprint("r", 20+i)))
		require.NoError(t, m.Snapshot(ctx))
		require.NoError(t, m.Compact(ctx))
	}
	close(stop)
	wg.Wait()
	require.NoError(t, m.Close())
	m2 := openStore(t, dir, emb)
	defer m2.Close()
	assert.Equal(t, 25, m2.Len())
}

func TestOpen_OtherBackendRebuildsFromLog(t *testing.T) {
	m, dir, emb := seededStore(t, 7)
	require.NoError(t, m.Close())
	before := emb.Texts()
	var logs bytes.Buffer
	m2 := openStore(t, dir, emb, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
		WithBackend("test-other"))
	assert.Equal(t, before, emb.Texts(), "vectors come from the log")
	assert.Contains(t, logs.String(), "snapshot of another backend not used")
	checkAll(t, m2, 7)
	require.NoError(t, m2.Close())
}

// TestClose_SnapshotsOnlyALargeTail: Close rewrites the snapshot when the
// records applied since the last one are a sizeable share of the store
// (closeSnapshotShare), not for one record added to a large store; the
// next Open replays that record from the log, without embedding it again.
func TestClose_SnapshotsOnlyALargeTail(t *testing.T) {
	ctx := t.Context()
	m, dir, emb := seededStore(t, 80)
	require.NoError(t, m.Close())
	gen := func() int64 {
		b, err := os.ReadFile(filepath.Join(dir, snapMetaFile))
		require.NoError(t, err)
		var meta snapMeta
		require.NoError(t, json.Unmarshal(b, &meta))
		return meta.Gen
	}
	first := gen()

	m = openStore(t, dir, emb)
	_, err := m.Add(ctx, Record{ID: "late", Text: "One more note about the quarterly budget."})
	require.NoError(t, err)
	require.NoError(t, m.Close())
	assert.Equal(t, first, gen(), "one record in 81: no new snapshot")

	embedded := emb.Texts()
	m = openStore(t, dir, emb)
	assert.Equal(t, 81, m.Len())
	r, ok := m.Get("late")
	require.True(t, ok, "replayed from the log")
	assert.Equal(t, "One more note about the quarterly budget.", r.Text)
	assert.Equal(t, embedded, emb.Texts(), "nothing embedded again")
	for i := range 20 { // the tail is now 21 records of 101
		_, err := m.Add(ctx, Record{ID: fmt.Sprint("more", i), Text: fmt.Sprintf("Follow-up note %d on the budget.", i)})
		require.NoError(t, err)
	}
	require.NoError(t, m.Close())
	assert.Greater(t, gen(), first, "a tail of a fifth of the store is snapshot")
}
