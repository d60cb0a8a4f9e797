package longterm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/internal/embedtest"
	"github.com/agentmem/agentmem/keyword"
)

// conversations returns records of three namespaces, each two
// conversations (episodes) a day apart, with speakers.
func conversations() []Record {
	at := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	lines := []struct{ speaker, text string }{
		{"Ana", "I signed up for the Lisbon half marathon in October."},
		{"Tom", "Great! How is the training going?"},
		{"Ana", "Running three times a week along the river, 8 km each."},
		{"Tom", "My sister's wedding is in Porto, at the old monastery."},
		{"Ana", "Will you give a speech at the wedding?"},
		{"Tom", "Yes, it is about the summer we got lost in the mountains."},
	}
	var recs []Record
	for ns := range 3 {
		for ep := range 2 {
			for i, l := range lines {
				recs = append(recs, Record{
					ID:        fmt.Sprintf("n%d-e%d-%d", ns, ep, i),
					Namespace: fmt.Sprint("ns", ns), Speaker: l.speaker,
					Time: at.Add(time.Duration(ep)*24*time.Hour + time.Duration(i)*time.Minute),
					Text: fmt.Sprintf("%s (%d/%d)", l.text, ns, ep),
				})
			}
		}
	}
	return recs
}

// rankings returns what a set of keyword and hybrid queries find in every
// namespace, with scores and neighbours.
func rankings(t *testing.T, m *Memory) []string {
	t.Helper()
	var out []string
	for _, q := range []string{"What race is Ana training for?", "wedding speech", "Where is the wedding?", "river running", "mountains summer lost"} {
		for _, mode := range []Mode{KeywordOnly, Hybrid} {
			for ns := range 3 {
				hits, err := m.Query(t.Context(), Query{Text: q, Namespace: fmt.Sprint("ns", ns), Mode: mode, K: 5, Neighbours: 2})
				require.NoError(t, err)
				for _, h := range hits {
					out = append(out, fmt.Sprintf("%s|%v|%s %.9f %v %v", q, mode, h.ID, h.Score, recordIDs(h.Before), recordIDs(h.After)))
				}
			}
		}
	}
	return out
}

// TestSnapshot_TurnIndexRanksAsLive: a reopened store loads the keyword
// path's turn index from its snapshot instead of building it, and ranks
// exactly as the memory did before it was closed — after forgets (which
// relink neighbours) and with records written after the snapshot replayed
// from the log into the loaded index.
func TestSnapshot_TurnIndexRanksAsLive(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	emb := newCounting(t, 64)
	m := openStore(t, dir, emb)
	recs := conversations()
	_, err := m.AddBatch(ctx, recs[:30])
	require.NoError(t, err)
	// Only ns0's index is built by a search; the snapshot builds the rest.
	_, err = m.Query(ctx, Query{Text: "wedding", Namespace: "ns0"})
	require.NoError(t, err)
	require.NoError(t, m.Forget(ctx, "n0-e0-2"))                                                            // a middle record: its neighbours are relinked
	require.NoError(t, m.Forget(ctx, "n1-e1-5"))                                                            // the newest of ns1
	_, err = m.Add(ctx, Record{ID: "n0-e0-1", Namespace: "ns0", Text: "Replaced: training is going well."}) // a replacement
	require.NoError(t, err)
	require.NoError(t, m.Snapshot(ctx))
	live := rankings(t, m)
	require.NoError(t, m.Close())

	meta := readSnapMeta(t, dir)
	require.NotEmpty(t, meta.Turns, "a long-term store's snapshot keeps its turn index")
	require.FileExists(t, filepath.Join(dir, meta.Turns))

	var logs bytes.Buffer
	m = openStore(t, dir, emb, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	assert.True(t, m.turnIdx().built("ns0") && m.turnIdx().built("ns1") && m.turnIdx().built("ns2"), "loaded, not left to build")
	assert.Equal(t, live, rankings(t, m), "reopened from the snapshot: the same results, scores and neighbours")
	assert.NotContains(t, logs.String(), "turn index not used")

	// Records written after the snapshot are replayed into the loaded
	// index: crash without a snapshot and compare with the live memory.
	_, err = m.AddBatch(ctx, recs[30:])
	require.NoError(t, err)
	// A record written just after ns1's newest (n1-e1-4, since n1-e1-5
	// was forgotten) follows it in its conversation.
	newest, ok := m.Get("n1-e1-4")
	require.True(t, ok)
	_, err = m.Add(ctx, Record{ID: "n1-e1-6", Namespace: "ns1", Speaker: "Ana", Time: newest.Time.Add(2 * time.Minute), Text: "The wedding photos are online."})
	require.NoError(t, err)
	require.NoError(t, m.Forget(ctx, "n2-e0-3"))
	live = rankings(t, m)
	crash(m)
	m = openStore(t, dir, emb)
	t.Cleanup(func() { m.Close() })
	assert.Equal(t, live, rankings(t, m), "snapshot plus replayed tail: the same results")

	// And the same as an index built from the records, without the file.
	built := t.TempDir()
	require.NoError(t, os.CopyFS(built, os.DirFS(dir)))
	require.NoError(t, os.Remove(filepath.Join(built, meta.Turns)))
	b := openStore(t, built, emb, WithReadOnly(), WithLogger(discardLogger))
	t.Cleanup(func() { b.Close() })
	assert.Equal(t, live, rankings(t, b), "built from the records: the same results")
}

// TestSnapshot_TurnIndexNotUsed: a turn index that does not fit is not
// used; the index is built from the records, and searches rank as a store
// whose snapshot has none.
func TestSnapshot_TurnIndexNotUsed(t *testing.T) {
	ctx := t.Context()
	emb := newCounting(t, 64)
	proto := t.TempDir()
	m := openStore(t, proto, emb)
	_, err := m.AddBatch(ctx, conversations())
	require.NoError(t, err)
	require.NoError(t, m.Close())
	meta := readSnapMeta(t, proto)
	require.NotEmpty(t, meta.Turns)

	rank := func(dir string, opts ...Option) ([]string, string) {
		var logs bytes.Buffer
		m := openStore(t, dir, emb, append(opts, WithReadOnly(), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))...)
		defer m.Close()
		return rankings(t, m), logs.String()
	}
	copyOf := func(change func(dir string)) string {
		dir := t.TempDir()
		require.NoError(t, os.CopyFS(dir, os.DirFS(proto)))
		change(filepath.Join(dir, meta.Turns))
		return dir
	}
	noTurns := copyOf(func(path string) { require.NoError(t, os.Remove(path)) })
	want, logs := rank(noTurns)
	assert.Contains(t, logs, "turn index not used", "a missing file is reported")

	for name, change := range map[string]func(path string){
		"flipped byte": func(path string) {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			b[len(b)/2] ^= 0x10
			require.NoError(t, os.WriteFile(path, b, 0o600))
		},
		"truncated": func(path string) {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, b[:len(b)/3], 0o600))
		},
	} {
		dir := copyOf(change)
		got, logs := rank(dir)
		assert.Equal(t, want, got, name)
		assert.Contains(t, logs, "turn index not used", name)

		// Verify says so as a warning: the file is a cache, nothing is
		// lost, the store is sound.
		rep, err := Verify(ctx, dir, emb, WithLogger(discardLogger))
		require.NoError(t, err, name)
		assert.Empty(t, rep.Problems, name)
		require.Len(t, rep.Warnings, 1, name)
		assert.Contains(t, rep.Warnings[0], meta.Turns, name)
	}
	rep, err := Verify(ctx, proto, emb, WithLogger(discardLogger))
	require.NoError(t, err)
	assert.Empty(t, rep.Warnings, "a usable index: no warning")

	// Written without an index header, opened with one: the loaded index
	// would not hold the header's words.
	header := WithIndexHeader(func(r Record) string { return r.Speaker + ": " })
	want, _ = rank(noTurns, header)
	got, logs := rank(copyOf(func(string) {}), header)
	assert.Equal(t, want, got)
	assert.Contains(t, logs, "index header")
}

// TestSnapshot_ShortKindHasNoTurnIndex: a short-term store searches by
// vector only, so its snapshot keeps no turn index.
func TestSnapshot_ShortKindHasNoTurnIndex(t *testing.T) {
	dir := t.TempDir()
	m := openStore(t, dir, embedtest.CountingHash(t, 64), WithKind("short"))
	_, err := m.AddBatch(t.Context(), conversations()[:5])
	require.NoError(t, err)
	require.NoError(t, m.Close())
	assert.Empty(t, readSnapMeta(t, dir).Turns)
	assert.False(t, m.turnIdx().built("ns0"), "the snapshot built no turn index")
}

// readSnapMeta reads the snapshot metadata of the store in dir.
func readSnapMeta(t *testing.T, dir string) snapMeta {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, snapMetaFile))
	require.NoError(t, err)
	var meta snapMeta
	require.NoError(t, json.Unmarshal(b, &meta))
	return meta
}

// TestSnapshot_AutomaticKeepsBuiltTurnIndexes: an automatic snapshot, in a
// writer's path, keeps the turn indexes that searches have built and
// builds no others; Close builds and keeps them all.
func TestSnapshot_AutomaticKeepsBuiltTurnIndexes(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	emb := newCounting(t, 64)
	m := openStore(t, dir, emb, WithSnapshotEvery(10))
	recs := conversations()
	_, err := m.AddBatch(ctx, recs[:6])
	require.NoError(t, err)
	_, err = m.Query(ctx, Query{Text: "wedding", Namespace: "ns0"})
	require.NoError(t, err)
	_, err = m.AddBatch(ctx, recs[6:30]) // ns0, ns1 and ns2: past 10 writes
	require.NoError(t, err)
	require.NotEmpty(t, readSnapMeta(t, dir).Turns, "the automatic snapshot keeps ns0's index")
	assert.True(t, m.turnIdx().built("ns0"))
	assert.False(t, m.turnIdx().built("ns1"), "an automatic snapshot builds no index")
	live := rankings(t, m)
	crash(m)

	m = openStore(t, dir, emb, WithSnapshotEvery(0))
	assert.True(t, m.turnIdx().built("ns0"), "loaded")
	assert.False(t, m.turnIdx().built("ns1"), "left to the first search")
	assert.Equal(t, live, rankings(t, m))
	require.NoError(t, m.Snapshot(ctx)) // as Close does: every namespace
	require.NoError(t, m.Close())
	m = openStore(t, dir, emb, WithReadOnly())
	t.Cleanup(func() { m.Close() })
	for _, ns := range []string{"ns0", "ns1", "ns2"} {
		assert.True(t, m.turnIdx().built(ns), ns)
	}
	assert.Equal(t, live, rankings(t, m))
}

// TestSnapshot_CloseKeepsWhatAutomaticLeftOut: a writer whose last
// snapshot was an automatic one that left out turn indexes (an import of
// a round number of records) writes a complete one on Close, though few
// records changed since.
func TestSnapshot_CloseKeepsWhatAutomaticLeftOut(t *testing.T) {
	dir := t.TempDir()
	emb := newCounting(t, 64)
	m := openStore(t, dir, emb, WithSnapshotEvery(30))
	_, err := m.AddBatch(t.Context(), conversations()[:30])
	require.NoError(t, err)
	gen := readSnapMeta(t, dir).Gen
	require.NoError(t, m.Close())
	meta := readSnapMeta(t, dir)
	assert.Equal(t, gen+1, meta.Gen, "Close wrote a snapshot")
	m = openStore(t, dir, emb, WithReadOnly())
	defer m.Close()
	for _, ns := range []string{"ns0", "ns1", "ns2"} {
		assert.True(t, m.turnIdx().built(ns), ns)
	}

	// A process that only searches writes nothing on Close.
	m2 := openStore(t, dir, emb)
	_, err = m2.Query(t.Context(), Query{Text: "wedding"})
	require.NoError(t, err)
	require.NoError(t, m2.Close())
	assert.Equal(t, meta.Gen, readSnapMeta(t, dir).Gen)
}

// TestSnapshot_WriterCompletesMissingTurnIndex: a store whose snapshot has
// no turn index (the previous release's, or one whose file was lost) gets
// one from the next writer's Close, though it wrote little; a reader
// changes nothing.
func TestSnapshot_WriterCompletesMissingTurnIndex(t *testing.T) {
	dir := t.TempDir()
	emb := newCounting(t, 64)
	m := openStore(t, dir, emb)
	_, err := m.AddBatch(t.Context(), conversations())
	require.NoError(t, err)
	require.NoError(t, m.Close())
	meta := readSnapMeta(t, dir)
	require.NoError(t, os.Remove(filepath.Join(dir, meta.Turns)))

	r := openStore(t, dir, emb, WithReadOnly(), WithLogger(discardLogger))
	require.NoError(t, r.Close())
	assert.Equal(t, meta.Gen, readSnapMeta(t, dir).Gen, "a reader writes no snapshot")

	w := openStore(t, dir, emb, WithLogger(discardLogger))
	_, err = w.Add(t.Context(), Record{ID: "one-more", Namespace: "ns0", Text: "One more turn."})
	require.NoError(t, err)
	require.NoError(t, w.Close())
	after := readSnapMeta(t, dir)
	assert.Greater(t, after.Gen, meta.Gen)
	require.NotEmpty(t, after.Turns)
	assert.FileExists(t, filepath.Join(dir, after.Turns))
}

// TestTurnIndex_BuiltTogether: a search of every namespace builds the
// namespaces' indexes in one pass over the records (getAll); each ranks as
// the index a search of its namespace alone builds (get).
func TestTurnIndex_BuiltTogether(t *testing.T) {
	ctx := t.Context()
	emb := newCounting(t, 64)
	alone, together := openStore(t, t.TempDir(), emb), openStore(t, t.TempDir(), emb)
	for _, m := range []*Memory{alone, together} {
		_, err := m.AddBatch(ctx, conversations())
		require.NoError(t, err)
	}
	_, err := together.Query(ctx, Query{Text: "wedding"})
	require.NoError(t, err)
	assert.True(t, together.turnIdx().built("ns0") && together.turnIdx().built("ns1") && together.turnIdx().built("ns2"), "one search of every namespace builds them all")
	assert.False(t, alone.turnIdx().built("ns1"), "no search yet")
	assert.Equal(t, rankings(t, alone), rankings(t, together))
}

// TestSnapshot_TurnIndexOfAnotherTokenizer: a snapshot whose turn index
// another tokenizer cut (a store written before an upgrade) is not used,
// and the warning says why and what ends it: a writer's close saves the
// index again, after which opening warns no more.
func TestSnapshot_TurnIndexOfAnotherTokenizer(t *testing.T) {
	ctx := t.Context()
	emb := newCounting(t, 64)
	dir := t.TempDir()
	plurals, err := keyword.NewTokenizer(keyword.WithStemming(keyword.PluralsOnly))
	require.NoError(t, err)
	m := openStore(t, dir, emb, WithTokenizer(plurals))
	_, err = m.AddBatch(ctx, conversations())
	require.NoError(t, err)
	require.NoError(t, m.Close())

	open := func(opts ...Option) string {
		var logs bytes.Buffer
		m := openStore(t, dir, emb, append(opts, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))...)
		rankings(t, m)
		require.NoError(t, m.Close())
		return logs.String()
	}
	for range 2 {
		logs := open(WithReadOnly())
		assert.Contains(t, logs, "another version's tokenizer cut its terms")
		assert.Contains(t, logs, "until a command that writes (add, import, serve) closes the store")
	}
	open() // a writer: its close saves the index
	assert.NotContains(t, open(WithReadOnly()), "turn index not used")
}
