package window_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/short"
	"github.com/agentmem/agentmem/memory/window"
	"github.com/agentmem/agentmem/memory/window/tokens"
	_ "github.com/agentmem/agentmem/vdb/inmem"
)

// fakeMemory is a memory.Memory that records segments and can be made to fail.
type fakeMemory struct {
	mu       sync.Mutex
	segments []string
	fail     error
}

var _ memory.Memory = (*fakeMemory)(nil)

func (m *fakeMemory) Update(_ context.Context, segment string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	m.segments = append(m.segments, segment)
	return nil
}

func (m *fakeMemory) Search(context.Context, string) ([]memory.Hit, error) { return nil, nil }

func (m *fakeMemory) all() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.segments...)
}

func (m *fakeMemory) setFail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fail = err
}

// words counts whitespace-separated words: an easy counter to reason about.
var words = tokens.Func(func(s string) int { return len(strings.Fields(s)) })

func round(i int) window.Round {
	return window.Round{User: fmt.Sprintf("question %d", i), Assistant: fmt.Sprintf("answer %d", i)}
}

func TestWindow_EvictsOldestWholeRoundsByCount(t *testing.T) {
	var got []string
	var w *window.Window
	w, err := window.New(window.WithMaxRounds(3), window.WithOnEvict(func(_ context.Context, r window.Round) error {
		// The window's lock is released: calling back into it must not deadlock.
		_ = w.Len()
		got = append(got, r.User)
		return nil
	}))
	require.NoError(t, err)
	for i := range 5 {
		require.NoError(t, w.Append(t.Context(), round(i)))
	}
	assert.Equal(t, []string{"question 0", "question 1"}, got, "evicted oldest first")
	rs := w.Rounds()
	require.Len(t, rs, 3)
	for i, r := range rs {
		assert.Equal(t, round(i+2).User, r.User)
		assert.Equal(t, round(i+2).Assistant, r.Assistant, "never half a round")
		assert.False(t, r.Time.IsZero(), "time set on append")
	}
}

func TestWindow_EvictsByTokenBudget(t *testing.T) {
	mem := &fakeMemory{}
	w, err := window.New(window.WithMaxTokens(100), window.WithCounter(words), window.WithEvictTo(mem))
	require.NoError(t, err)
	// Each round: 10 + 10 words + 2×4 overhead = 28 tokens; 3 fit in 100.
	long := strings.Repeat("w ", 10)
	for i := range 6 {
		require.NoError(t, w.Append(t.Context(), window.Round{User: fmt.Sprint(i, " ", long[2:]), Assistant: long}))
	}
	assert.Equal(t, 3, w.Len())
	assert.Equal(t, 84, w.Tokens())
	assert.LessOrEqual(t, w.Tokens(), w.MaxTokens())
	segs := mem.all()
	require.Len(t, segs, 3, "nothing said is lost, only moved")
	for i, s := range segs {
		assert.True(t, strings.HasPrefix(s, fmt.Sprintf("User: %d ", i)), s)
		assert.Contains(t, s, "\nAssistant: ")
	}
}

func TestWindow_OversizedRoundKeptTruncated(t *testing.T) {
	mem := &fakeMemory{}
	w, err := window.New(window.WithMaxTokens(window.MinTokens), window.WithEvictTo(mem))
	require.NoError(t, err)
	huge := window.Round{User: "Summarise this log.", Assistant: strings.Repeat("The service restarted after an out-of-memory kill. ", 40)}
	require.NoError(t, w.Append(t.Context(), huge))
	rs := w.Rounds()
	require.Len(t, rs, 1, "kept, not lost")
	r := rs[0]
	assert.Positive(t, r.Truncated)
	assert.Equal(t, huge.User, r.User, "the short part stays whole")
	assert.Contains(t, r.Assistant, tokens.Marker(r.Truncated)[:len("…[truncated")])
	assert.True(t, strings.HasSuffix(r.Assistant, "]"), r.Assistant)
	assert.LessOrEqual(t, w.Tokens(), w.MaxTokens())
	require.Equal(t, []string{huge.Text()}, mem.all(), "the whole round moved to long-term memory at once")

	// When the truncated round is evicted later it is not written twice.
	require.NoError(t, w.Append(t.Context(), round(1)))
	require.NoError(t, w.Append(t.Context(), window.Round{User: "next", Assistant: strings.Repeat("long answer ", 24)}))
	assert.Equal(t, []string{huge.Text(), round(1).Text()}, mem.all())
}

func TestWindow_EvictErrorKeepsRoundsPending(t *testing.T) {
	mem := &fakeMemory{}
	w, err := window.New(window.WithMaxRounds(1), window.WithEvictTo(mem))
	require.NoError(t, err)
	require.NoError(t, w.Append(t.Context(), round(0)))

	down := errors.New("store unreachable")
	mem.setFail(down)
	err = w.Append(t.Context(), round(1))
	require.ErrorIs(t, err, window.ErrEvict)
	require.ErrorIs(t, err, down)
	err = w.Append(t.Context(), round(2))
	require.ErrorIs(t, err, window.ErrEvict)
	assert.Equal(t, 2, w.Pending())
	assert.Equal(t, []window.Round{round(2)}, stripTimes(w.Rounds()), "the new round is appended anyway")

	mem.setFail(nil)
	require.NoError(t, w.Settle(t.Context()))
	assert.Zero(t, w.Pending())
	assert.Equal(t, []string{round(0).Text(), round(1).Text()}, mem.all(), "settled in order, once")

	// A cancelled context settles nothing.
	require.NoError(t, w.Append(t.Context(), round(3)))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err = w.Append(ctx, round(4))
	require.ErrorIs(t, err, window.ErrEvict)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, w.Pending())
}

func stripTimes(rs []window.Round) []window.Round {
	for i := range rs {
		rs[i].Time = time.Time{}
	}
	return rs
}

func TestWindow_BadInput(t *testing.T) {
	w, err := window.New()
	require.NoError(t, err)
	for _, r := range []window.Round{{}, {User: "  ", Assistant: "a"}, {User: "q", Assistant: "\n"}} {
		require.ErrorIs(t, w.Append(t.Context(), r), window.ErrEmptyRound)
	}
	assert.Zero(t, w.Len())

	for name, opt := range map[string]window.Option{
		"rounds 0":    window.WithMaxRounds(0),
		"tokens 10":   window.WithMaxTokens(10),
		"nil counter": window.WithCounter(nil),
		"nil memory":  window.WithEvictTo(nil),
	} {
		_, err := window.New(opt)
		assert.ErrorIs(t, err, window.ErrInvalidOption, name)
	}
}

func TestWindow_CopiesMeta(t *testing.T) {
	w, err := window.New()
	require.NoError(t, err)
	meta := map[string]string{"tool": "grep"}
	require.NoError(t, w.Append(t.Context(), window.Round{User: "q", Assistant: "a", Meta: meta}))
	meta["tool"] = "changed"
	rs := w.Rounds()
	assert.Equal(t, "grep", rs[0].Meta["tool"])
	rs[0].Meta["tool"] = "changed again"
	assert.Equal(t, "grep", w.Rounds()[0].Meta["tool"])
}

func TestWindow_Concurrent(t *testing.T) {
	mem := &fakeMemory{}
	w, err := window.New(window.WithMaxRounds(5), window.WithMaxTokens(200), window.WithEvictTo(mem))
	require.NoError(t, err)
	const goroutines, each = 8, 40
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				assert.NoError(t, w.Append(t.Context(), round(g*1000+i)))
				_ = w.Rounds()
				_ = w.Tokens()
			}
		})
	}
	wg.Wait()
	require.NoError(t, w.Settle(t.Context()))
	assert.Equal(t, goroutines*each, len(mem.all())+w.Len(), "every round is in the window or in memory")
	seen := map[string]bool{}
	for _, s := range mem.all() {
		assert.False(t, seen[s], "settled once: %s", s)
		seen[s] = true
	}
}

func TestWindow_StateRoundTrip(t *testing.T) {
	mem := &fakeMemory{fail: errors.New("down")}
	w, err := window.New(window.WithMaxRounds(3), window.WithEvictTo(mem))
	require.NoError(t, err)
	for i := range 5 {
		_ = w.Append(t.Context(), round(i))
	}
	require.Equal(t, 2, w.Pending())

	path := filepath.Join(t.TempDir(), "window.json")
	require.NoError(t, window.SaveFile(path, w, nil))

	mem2 := &fakeMemory{}
	w2, err := window.New(window.WithMaxRounds(2), window.WithEvictTo(mem2))
	require.NoError(t, err)
	require.NoError(t, window.LoadFile(path, w2, nil))
	assert.Equal(t, stripTimes(w.Rounds())[1:], stripTimes(w2.Rounds()), "a smaller window keeps the newest")
	assert.Equal(t, 3, w2.Pending(), "the saved pending rounds and the one the smaller window evicts")
	require.NoError(t, w2.Settle(t.Context()))
	assert.Equal(t, []string{round(0).Text(), round(1).Text(), round(2).Text()}, mem2.all())
}

func TestLoadFile_Errors(t *testing.T) {
	dir := t.TempDir()
	w, _ := window.New()
	tr, _ := window.NewTrack()

	err := window.LoadFile(filepath.Join(dir, "missing.json"), w, tr)
	require.ErrorIs(t, err, fs.ErrNotExist)

	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	require.ErrorIs(t, window.LoadFile(write("v9.json", `{"version": 9, "window": {"rounds": []}}`), w, tr), window.ErrVersion)
	err = window.LoadFile(write("v0.json", `{"window": {"rounds": []}}`), w, tr)
	require.ErrorIs(t, err, window.ErrCorrupt, "a file without a version is damaged, not from a newer build")
	require.NotErrorIs(t, err, window.ErrVersion)
	require.ErrorIs(t, window.LoadFile(write("torn.json", `{"version": 1, "window": {"rou`), w, tr), window.ErrCorrupt)
	err = window.LoadFile(write("empty-round.json", `{"version": 1, "window": {"rounds": [{"user": "q", "assistant": ""}]}}`), w, tr)
	require.ErrorIs(t, err, window.ErrCorrupt)
	assert.Contains(t, err.Error(), "empty-round.json", "names the file")
	err = window.LoadFile(write("bad-step.json", `{"version": 1, "window": {"rounds": [{"user": "q", "assistant": "a"}]}, "track": {"steps": [{"id": 1, "goal": "g", "status": "maybe"}]}}`), w, tr)
	require.ErrorIs(t, err, window.ErrCorrupt)
	assert.Zero(t, w.Len(), "nothing restored from an invalid file")
}

func ExampleWindow() {
	ctx := context.Background()
	w, _ := window.New(
		window.WithMaxRounds(2),
		window.WithOnEvict(func(_ context.Context, r window.Round) error {
			fmt.Println("settled:", r.User)
			return nil
		}),
	)
	for _, q := range []string{"first", "second", "third"} {
		_ = w.Append(ctx, window.Round{User: q, Assistant: "ok"})
	}
	for _, r := range w.Rounds() {
		fmt.Println("in window:", r.User)
	}
	// Output:
	// settled: first
	// in window: second
	// in window: third
}

// TestWindow_EvictIntoShortMemory wires the window to a real
// short.Memory with the offline hash embedder: a round that leaves the
// window is found again by a related question.
func TestWindow_EvictIntoShortMemory(t *testing.T) {
	emb, err := hash.New(hash.DefaultDim)
	require.NoError(t, err)
	mem, err := short.New(t.Context(), emb)
	require.NoError(t, err)
	t.Cleanup(func() { _ = mem.Close() })
	w, err := window.New(window.WithMaxRounds(2), window.WithEvictTo(mem))
	require.NoError(t, err)
	conv := []window.Round{
		{User: "My project is called Falcon and the staging database is on port 5433.", Assistant: "Noted: Falcon, staging database on port 5433."},
		{User: "Let's plan the migration of 14 tables.", Assistant: "Step one: add the new columns as nullable."},
		{User: "How big should the backfill batches be?", Assistant: "Batches of 10,000 rows, ordered by primary key."},
	}
	for _, r := range conv {
		require.NoError(t, w.Append(t.Context(), r))
	}
	require.Equal(t, 2, w.Len())
	hits, err := mem.Search(t.Context(), "which port is the Falcon staging database on?")
	require.NoError(t, err)
	require.NotEmpty(t, hits, "the evicted round settled into long-term memory")
	assert.Equal(t, conv[0].Text(), hits[0].Text)
}

func BenchmarkWindow_Append(b *testing.B) {
	for _, n := range []int{20, 200} {
		b.Run(fmt.Sprintf("maxRounds=%d", n), func(b *testing.B) {
			w, _ := window.New(window.WithMaxRounds(n), window.WithMaxTokens(1<<20),
				window.WithOnEvict(func(context.Context, window.Round) error { return nil }))
			r := window.Round{User: "How big should the backfill batches be?", Assistant: strings.Repeat("Batches of 10,000 rows, ordered by primary key. ", 8)}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := w.Append(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestWindow_CapsProperty appends random rounds (English and Chinese, some
// larger than the whole budget) and checks after every append: both caps
// hold, the newest round is always kept, every other kept round is whole,
// and every round is either still in the window or was handed on.
func TestWindow_CapsProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	text := func(n int) string {
		var b strings.Builder
		for i := range n {
			if r.IntN(2) == 0 {
				b.WriteString("记忆窗口平滑遗忘"[r.IntN(8)*3:][:3])
			} else {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString([]string{"round", "window", "budget", "evict", "memory"}[r.IntN(5)])
			}
		}
		return b.String()
	}
	for trial := range 50 {
		var moved []string
		maxRounds, maxTokens := 1+r.IntN(10), window.MinTokens+r.IntN(2000)
		w, err := window.New(window.WithMaxRounds(maxRounds), window.WithMaxTokens(maxTokens),
			window.WithOnEvict(func(_ context.Context, rd window.Round) error { moved = append(moved, rd.User); return nil }))
		require.NoError(t, err)
		var all []window.Round
		for i := range 40 {
			rd := window.Round{User: fmt.Sprintf("q%d %s", i, text(1+r.IntN(50))), Assistant: text(1 + r.IntN(600))}
			all = append(all, rd)
			require.NoError(t, w.Append(t.Context(), rd))
			rs := w.Rounds()
			require.LessOrEqual(t, len(rs), maxRounds, "trial %d", trial)
			require.LessOrEqual(t, w.Tokens(), maxTokens, "trial %d", trial)
			require.NotEmpty(t, rs)
			newest := rs[len(rs)-1]
			require.True(t, strings.HasPrefix(newest.User, fmt.Sprintf("q%d ", i)) || newest.Truncated > 0, "the newest round is kept")
			for _, k := range rs[:len(rs)-1] {
				if k.Truncated == 0 {
					require.Contains(t, all, window.Round{User: k.User, Assistant: k.Assistant}, "whole rounds only")
				}
			}
			require.Equal(t, i+1, len(rs)+countNotTruncatedMoved(moved, rs), "trial %d: nothing lost", trial)
		}
	}
}

// countNotTruncatedMoved counts the moved rounds that are not (also) still
// in the window: a truncated round's whole text moves on at once while its
// cut version stays.
func countNotTruncatedMoved(moved []string, kept []window.Round) int {
	in := map[string]bool{}
	for _, k := range kept {
		if k.Truncated > 0 {
			in[strings.Fields(k.User)[0]] = true
		}
	}
	n := 0
	for _, m := range moved {
		if !in[strings.Fields(m)[0]] {
			n++
		}
	}
	return n
}
