package longterm

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/engine"
	"github.com/agentmem/agentmem/memory/internal/ranking"
)

// newFilled returns an in-memory store (counting embedder, dimension 256)
// holding recs, closed when the test ends.
func newFilled(t *testing.T, recs []Record, opts ...Option) *Memory {
	t.Helper()
	m, err := New(t.Context(), newCounting(t, 256), append([]Option{everyMatch}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	_, err = m.AddBatch(t.Context(), recs)
	require.NoError(t, err)
	return m
}

func TestQuery_SpeakerFieldBeatsGreeting(t *testing.T) {
	ctx := t.Context()
	at := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	m := newFilled(t, []Record{
		{ID: "greet", Namespace: "c", Speaker: "Sam", Time: at, Text: "Hey Deborah!"},
		{ID: "trip", Namespace: "c", Speaker: "Deborah", Time: at, Text: "My hiking trip is to the Alps."},
		{ID: "other", Namespace: "c", Speaker: "Sam", Time: at, Text: "My trip to Rome was in March."},
	})
	hits, err := m.Query(ctx, Query{Text: "Where is Deborah going on her trip?", Namespace: "c", Mode: KeywordOnly, K: 3})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "trip", hits[0].ID, "what Deborah said, not the turn greeting her")
	// The greeting is found only through the next turn's field (the
	// answer after it), below the turns that say "trip" themselves.
	if i := slices.Index(ids(hits), "greet"); i >= 0 {
		assert.Equal(t, len(hits)-1, i, "%v", ids(hits))
	}
}

func TestQuery_NeighbourFindsTheAnswer(t *testing.T) {
	ctx := t.Context()
	at := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	m := newFilled(t, []Record{
		{ID: "q", Namespace: "c", Time: at, Speaker: "Ann", Text: "What's the deadline for Tom's decision?"},
		{ID: "a", Namespace: "c", Time: at.Add(time.Minute), Speaker: "Ben", Text: "By September 15, so I have a few weeks."},
		{ID: "later", Namespace: "c", Time: at.Add(30 * 24 * time.Hour), Speaker: "Ann", Text: "Unrelated: the weather is fine."},
	})
	hits, err := m.Query(ctx, Query{Text: "Tom decision deadline", Namespace: "c", Mode: KeywordOnly, K: 5})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "q"}, ids(hits), "the answer through its question (handed its score: another speaker's)")

	m2 := newFilled(t, []Record{{ID: "q", Namespace: "c", Time: at, Text: "Tom decision deadline?"}, {ID: "a", Namespace: "c", Time: at, Text: "September 15."}}, WithNeighbourWeight(0))
	hits, err = m2.Query(ctx, Query{Text: "Tom decision deadline", Namespace: "c", Mode: KeywordOnly})
	require.NoError(t, err)
	assert.Equal(t, []string{"q"}, ids(hits))
}

// TestQuery_NotesLendNothing: records written without a speaker are
// notes, never returned on the words of the notes written just before and
// after them, so a search for one fact does not return the facts noted in
// the same minutes, which share none of its words, whatever the minimum
// relevance. A turn of a conversation (a record with a speaker) is: the
// turn before an answer.
func TestQuery_NotesLendNothing(t *testing.T) {
	ctx := t.Context()
	at := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	m := newFilled(t, []Record{
		{ID: "flight", Namespace: "u", Time: at, Text: "My flight to Berlin leaves on March 3rd at 9am."},
		{ID: "peanuts", Namespace: "u", Time: at.Add(time.Minute), Text: "I'm allergic to peanuts."},
		{ID: "colour", Namespace: "u", Time: at.Add(2 * time.Minute), Text: "Their favourite colour is blue."},
		{ID: "q", Namespace: "c", Time: at, Speaker: "Ann", Text: "Where are you going this summer?"},
		{ID: "a", Namespace: "c", Time: at.Add(time.Minute), Speaker: "Ben", Text: "Hiking in Patagonia with my brother."},
		{ID: "note", Namespace: "c", Time: at.Add(2 * time.Minute), Text: "Book the train tickets."},
	})
	for _, mode := range []Mode{KeywordOnly, Hybrid} {
		hits, err := m.Query(ctx, Query{Text: "peanuts", Namespace: "u", Mode: mode, MinRelevance: -1})
		require.NoError(t, err)
		assert.Equal(t, []string{"peanuts"}, ids(hits), "a note's neighbours are not lent its words (%v)", mode)
	}
	hits, err := m.Query(ctx, Query{Text: "Patagonia", Namespace: "c", Mode: KeywordOnly, MinRelevance: -1})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "q"}, ids(hits), "a turn is found through the turn after it, a note is not")

	// A query that names a period scales the scores in it, the loan too:
	// still not a note's.
	hits, err = m.Query(ctx, Query{Text: "peanuts last week", Namespace: "u", Mode: KeywordOnly, AsOf: at.Add(72 * time.Hour), MinRelevance: -1})
	require.NoError(t, err)
	assert.Equal(t, []string{"peanuts"}, ids(hits), "a note is not returned on its neighbour's words, scaled by the time prior")
}

// TestQuery_NeighboursDoNotOvertakeTheMatch: a record whose own words
// match the query best stays first; its neighbours, which also share some
// of the words and each lend the other a share, fill only what their own
// words leave unexplained. (Added up in full, the neighbour's two lent
// shares put it first.)
func TestQuery_NeighboursDoNotOvertakeTheMatch(t *testing.T) {
	ctx := t.Context()
	at := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	texts := []string{
		"New kayak paddle for the lake trip, red or blue?",
		"Which new kayak paddle for the lake trip?",
		"The new kayak paddle for the lake trip is red.",
		"Good, see you then.",
		"Unrelated: the printer is out of toner.",
		"Lunch was good today.",
	}
	var recs []Record
	for i, text := range texts {
		recs = append(recs, Record{ID: fmt.Sprint("t", i), Namespace: "c", Time: at.Add(time.Duration(i) * time.Minute), Text: text})
	}
	m := newFilled(t, recs)
	hits, err := m.Query(ctx, Query{Text: "new kayak paddle lake trip red", Namespace: "c", Mode: KeywordOnly, K: 3})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "t2", hits[0].ID, "the record that says it all, first")
}

func TestQuery_PerNamespaceStatisticsAndForget(t *testing.T) {
	ctx := t.Context()
	var recs []Record
	for i := range 50 {
		recs = append(recs, Record{Namespace: "big", Text: "invoice number " + string(rune('a'+i%26)) + " for the cloud"})
	}
	recs = append(recs, Record{ID: "s1", Namespace: "small", Text: "The cloud invoice arrived."}, Record{ID: "s2", Namespace: "small", Text: "Lunch was nice."})
	m := newFilled(t, recs)
	hits, err := m.Query(ctx, Query{Text: "cloud invoice", Namespace: "small", Mode: KeywordOnly})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "s1", hits[0].ID) // s2 may follow as its neighbour
	// Writes after the namespace's index was built are seen.
	_, err = m.Add(ctx, Record{ID: "s3", Namespace: "small", Text: "Another cloud invoice, bigger."})
	require.NoError(t, err)
	require.NoError(t, m.Forget(ctx, "s1"))
	hits, err = m.Query(ctx, Query{Text: "cloud invoice", Namespace: "small", Mode: KeywordOnly})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "s3", hits[0].ID)
	assert.NotContains(t, ids(hits), "s1")
	hits, err = m.Query(ctx, Query{Text: "cloud invoice", Namespace: "empty"})
	require.NoError(t, err)
	assert.Empty(t, hits)
	hits, err = m.Query(ctx, Query{Text: "the of and", Namespace: "small", Mode: KeywordOnly})
	require.NoError(t, err)
	assert.Empty(t, hits, "a question of stop words only finds nothing")
}

// reverse is a Reranker that reverses the candidates.
type reverse struct{ seen int }

func (r *reverse) Rerank(_ context.Context, _ string, hits []Hit) ([]Hit, error) {
	r.seen = len(hits)
	out := slices.Clone(hits)
	slices.Reverse(out)
	return out, nil
}

func TestQuery_RerankerSeesCandidatesBeforeTheCut(t *testing.T) {
	ctx := t.Context()
	rr := &reverse{}
	var recs []Record
	for i := range 30 {
		recs = append(recs, Record{Text: "the blue car number " + string(rune('a'+i%26)) + string(rune('a'+i/26))})
	}
	m := newFilled(t, recs, WithReranker(rr, 20))
	hits, err := m.Query(ctx, Query{Text: "blue car", K: 3})
	require.NoError(t, err)
	assert.Equal(t, 20, rr.seen, "the reranker gets max(K, depth) candidates")
	assert.Len(t, hits, 3)
}

// A single-path search reports that path's own score: the cosine
// similarity for VectorOnly (as memory.Hit documents), the BM25 score
// relative to the query's best for KeywordOnly; hybrid fuses.
func TestQuery_SinglePathScores(t *testing.T) {
	ctx := t.Context()
	m := newFilled(t, []Record{
		{ID: "a", Namespace: "n", Text: "The staging database is db-stg-7 in Frankfurt."},
		{ID: "b", Namespace: "n", Text: "Lunch is at noon on Fridays."},
	})
	q := "The staging database is db-stg-7 in Frankfurt."
	vec, err := m.Query(ctx, Query{Text: q, Namespace: "n", Mode: VectorOnly, K: 2})
	require.NoError(t, err)
	require.NotEmpty(t, vec)
	assert.Equal(t, "a", vec[0].ID)
	assert.InDelta(t, 1.0, vec[0].Score, 1e-5, "the same text: cosine 1")
	emb, err := m.emb.Embed(ctx, []string{q, "Lunch is at noon on Fridays."})
	require.NoError(t, err)
	if len(vec) > 1 {
		var dot, na, nb float64
		for i := range emb[0] {
			dot += float64(emb[0][i]) * float64(emb[1][i])
			na += float64(emb[0][i]) * float64(emb[0][i])
			nb += float64(emb[1][i]) * float64(emb[1][i])
		}
		assert.InDelta(t, dot/math.Sqrt(na*nb), vec[1].Score, 1e-4, "the second hit's score is its cosine")
	}

	kw, err := m.Query(ctx, Query{Text: "db-stg-7 Frankfurt", Namespace: "n", Mode: KeywordOnly, K: 2})
	require.NoError(t, err)
	require.NotEmpty(t, kw)
	assert.Equal(t, "a", kw[0].ID)
	assert.InDelta(t, 1.0, kw[0].Score, 1e-6, "the best keyword match scores 1")
}

func TestQuery_EpisodeSpeaksForItsTurns(t *testing.T) {
	ctx := t.Context()
	day := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	recs := []Record{
		// Day 1: a conversation about the Maldives trip.
		{ID: "plan", Namespace: "c", Time: day, Text: "Let's plan the family trip to the Maldives."},
		{ID: "resort", Namespace: "c", Time: day.Add(time.Minute), Text: "Five-star resort with a seaplane transfer, all-inclusive."},
		{ID: "when", Namespace: "c", Time: day.Add(2 * time.Minute), Text: "I would book it for mid-May."},
		// Day 4: another conversation that says "book" louder.
		{ID: "dentist", Namespace: "c", Time: day.Add(72 * time.Hour), Text: "Book the dentist, book it."},
		{ID: "car", Namespace: "c", Time: day.Add(72*time.Hour + time.Minute), Text: "And the car needs its service."},
	}
	q := Query{Text: "booking the seaplane resort", Namespace: "c", Mode: KeywordOnly, K: 5}

	// Neighbour fields off: the episode alone lifts "when".
	noNeighbours := []Option{WithNeighbourWeight(0), WithNextWeight(0)}
	without := newFilled(t, recs, append(noNeighbours, WithEpisodeWeight(0))...)
	hits, err := without.Query(ctx, q)
	require.NoError(t, err)
	got := ids(hits)
	require.Contains(t, got, "when")
	require.Contains(t, got, "dentist")
	assert.Less(t, slices.Index(got, "dentist"), slices.Index(got, "when"), "without episodes the louder 'book' wins: %v", got)

	with := newFilled(t, recs, noNeighbours...)
	hits, err = with.Query(ctx, q)
	require.NoError(t, err)
	got = ids(hits)
	assert.Less(t, slices.Index(got, "when"), slices.Index(got, "dentist"), "the turn of the conversation about the resort wins: %v", got)
	assert.NotContains(t, got, "car", "a turn the query does not find stays out")

	// Forgetting the conversation's other turns takes their words out of
	// its episode: the resort conversation no longer speaks for "when".
	require.NoError(t, with.Forget(ctx, "plan"))
	require.NoError(t, with.Forget(ctx, "resort"))
	hits, err = with.Query(ctx, q)
	require.NoError(t, err)
	got = ids(hits)
	assert.Less(t, slices.Index(got, "dentist"), slices.Index(got, "when"), "after forgetting: %v", got)

	_, err = New(ctx, newCounting(t, 8), WithEpisodeWeight(-1))
	assert.ErrorIs(t, err, ErrInvalidOption)
}

func TestQuery_OneEpisodeChangesNoScore(t *testing.T) {
	// Records without a time are one conversation (each is stored at the
	// time of its Add): the episode has nothing to say, and hybrid scores
	// must not be squeezed by a bonus every found record shares.
	recs := []Record{
		{ID: "a", Namespace: "c", Text: "The repair order number is RP-20931."},
		{ID: "b", Namespace: "c", Text: "The warranty expired in May; the repair was paid."},
		{ID: "c", Namespace: "c", Text: "Order the bike chain tomorrow."},
	}
	q := Query{Text: "repair order", Namespace: "c", K: 3}
	with := newFilled(t, recs)
	without := newFilled(t, recs, WithEpisodeWeight(0))
	for _, mode := range []Mode{Hybrid, KeywordOnly} {
		q.Mode = mode
		a, err := with.Query(t.Context(), q)
		require.NoError(t, err)
		b, err := without.Query(t.Context(), q)
		require.NoError(t, err)
		require.Equal(t, ids(b), ids(a), "mode %v", mode)
		for i := range a {
			assert.InDelta(t, b[i].Score, a[i].Score, 1e-9, "mode %v hit %d", mode, i)
		}
	}
}

// TestQuery_FirstPersonPrefersTheUser: in a user/assistant log a question
// in the first person ("my puppy") is about the user, so what the user said
// outranks the assistant's longer echo of the same words; the same
// question in the third person, or spoken to the assistant, prefers
// neither side.
func TestQuery_FirstPersonPrefersTheUser(t *testing.T) {
	ctx := t.Context()
	at := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	m := newFilled(t, []Record{
		{ID: "u1", Namespace: "c", Speaker: "user", Time: at, Text: "We adopted a beagle puppy, his name is Biscuit."},
		{ID: "a1", Namespace: "c", Speaker: "assistant", Time: at.Add(time.Minute),
			Text: "Congratulations on the puppy! Biscuit is a great name for a beagle puppy; a puppy name like that suits a beagle."},
		{ID: "u2", Namespace: "c", Speaker: "user", Time: at.Add(2 * time.Minute), Text: "Any ideas for dinner tonight?"},
		{ID: "a2", Namespace: "c", Speaker: "assistant", Time: at.Add(3 * time.Minute), Text: "A lentil curry is quick and cheap."},
	})
	top := func(q string) string {
		hits, err := m.Query(ctx, Query{Text: q, Namespace: "c", Mode: KeywordOnly, K: 2})
		require.NoError(t, err)
		require.NotEmpty(t, hits)
		return hits[0].ID
	}
	assert.Equal(t, "a1", top("What is the beagle puppy's name?"), "no person: the turn with the most matches")
	assert.Equal(t, "a1", top("What did you say about the beagle puppy's name? Remind me."), "spoken to the assistant: no preference")
	assert.Equal(t, "u1", top("What is my beagle puppy's name?"), "about the asker: what the user said")
}

// TestQuery_Neighbours: a hit carries the records written just before and
// after it in its conversation, oldest first, up to Query.Neighbours on
// each side, and none across a conversation's end.
func TestQuery_Neighbours(t *testing.T) {
	ctx := t.Context()
	at := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	m := newFilled(t, []Record{
		{ID: "q1", Namespace: "c", Speaker: "user", Time: at, Text: "Please book a table for Friday."},
		{ID: "a1", Namespace: "c", Speaker: "assistant", Time: at.Add(time.Minute), Text: "Done: Luigi's, 8 pm, four people."},
		{ID: "q2", Namespace: "c", Speaker: "user", Time: at.Add(2 * time.Minute), Text: "Great, thanks!"},
		{ID: "next-day", Namespace: "c", Speaker: "user", Time: at.Add(26 * time.Hour), Text: "Another question about plants."},
		{ID: "elsewhere", Namespace: "d", Speaker: "user", Time: at.Add(90 * time.Second), Text: "Unrelated note."},
	})
	hits, err := m.Query(ctx, Query{Text: "Luigi's", Namespace: "c", Mode: KeywordOnly, K: 1, Neighbours: 1})
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Equal(t, "a1", hits[0].ID)
	assert.Equal(t, []string{"q1"}, recordIDs(hits[0].Before), "the question it answers")
	assert.Equal(t, []string{"q2"}, recordIDs(hits[0].After))
	assert.Equal(t, "Please book a table for Friday.", hits[0].Before[0].Text)
	assert.Equal(t, "user", hits[0].Before[0].Speaker)

	// q1 asks by a request, not a question: a question's answer would take
	// its place (engine.WithAnswerHandOff).
	hits, err = m.Query(ctx, Query{Text: "book a table", Namespace: "c", Mode: KeywordOnly, K: 1, Neighbours: 5})
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Equal(t, "q1", hits[0].ID)
	assert.Empty(t, hits[0].Before, "the conversation starts here")
	assert.Equal(t, []string{"a1", "q2"}, recordIDs(hits[0].After), "not the next day's conversation, not another namespace")

	hits, err = m.Query(ctx, Query{Text: "Luigi's", Namespace: "c", K: 1})
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Nil(t, hits[0].Before, "none unless asked")
	assert.Nil(t, hits[0].After)

	for _, n := range []int{-1, memory.MaxNeighbours + 1} {
		_, err = m.Query(ctx, Query{Text: "Luigi's", Neighbours: n})
		assert.ErrorIs(t, err, ErrInvalidQuery, "Neighbours %d", n)
	}
}

func recordIDs(rs []Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// TestForget_RelinksNeighbours: forgetting a record makes the records
// before and after it neighbours, and the next record written follows the
// newest record that stays; the links are the same live and after a
// reopen, which builds them from the remaining records.
func TestForget_RelinksNeighbours(t *testing.T) {
	ctx := t.Context()
	at := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	emb := newCounting(t, 64)
	m := openStore(t, dir, emb)
	_, err := m.AddBatch(ctx, []Record{
		{ID: "q1", Namespace: "c", Speaker: "user", Time: at, Text: "Can you book a table for Friday?"},
		{ID: "a1", Namespace: "c", Speaker: "assistant", Time: at.Add(time.Minute), Text: "Done: Luigi's, 8 pm, four people."},
		{ID: "q2", Namespace: "c", Speaker: "user", Time: at.Add(2 * time.Minute), Text: "Great, thanks!"},
		{ID: "a2", Namespace: "c", Speaker: "assistant", Time: at.Add(3 * time.Minute), Text: "Enjoy the dinner."},
	})
	require.NoError(t, err)
	// A first query builds the namespace's turn index: the forgets below
	// change it in place.
	_, err = m.Query(ctx, Query{Text: "table", Namespace: "c"})
	require.NoError(t, err)
	require.NoError(t, m.Forget(ctx, "a1"))
	require.NoError(t, m.Forget(ctx, "a2"))
	_, err = m.Add(ctx, Record{ID: "q3", Namespace: "c", Speaker: "user", Time: at.Add(4 * time.Minute), Text: "Also a cake, please."})
	require.NoError(t, err)

	links := func(m *Memory) (before, after []string) {
		hits, err := m.Query(ctx, Query{Text: "thanks", Namespace: "c", Mode: KeywordOnly, K: 1, Neighbours: 5})
		require.NoError(t, err)
		require.Len(t, hits, 1)
		require.Equal(t, "q2", hits[0].ID)
		return recordIDs(hits[0].Before), recordIDs(hits[0].After)
	}
	before, after := links(m)
	assert.Equal(t, []string{"q1"}, before, "q1 and q2 are neighbours once a1 between them is forgotten")
	assert.Equal(t, []string{"q3"}, after, "q3, written after the newest record (a2) was forgotten, follows q2")
	require.NoError(t, m.Close())

	m = openStore(t, dir, emb)
	t.Cleanup(func() { m.Close() })
	before2, after2 := links(m)
	assert.Equal(t, before, before2, "reopened: the same links")
	assert.Equal(t, after, after2, "reopened: the same links")
}

// TestQuery_FirstResultsDoNotDependOnK: asking for more results does not
// reorder the first ones (ranking.Depth): what neighbours and
// conversations lend a record and the fusion's calibration are computed
// over the same candidates for every K up to ranking.MinDepth/4.
func TestQuery_FirstResultsDoNotDependOnK(t *testing.T) {
	ctx := t.Context()
	m := newMem(t)
	rng := rand.New(rand.NewPCG(7, 9))
	words := strings.Fields("run race river wedding speech porto lisbon train week summer mountain lost sister dog walk park book club read night cook pasta garden rain trip flight hotel beach swim coffee work project deadline team meeting budget plan")
	at := time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)
	var recs []Record
	for i := range 600 {
		n := 4 + rng.IntN(12)
		var b strings.Builder
		for range n {
			b.WriteString(words[rng.IntN(len(words))] + " ")
		}
		recs = append(recs, Record{ID: fmt.Sprintf("r%03d", i), Speaker: []string{"Ana", "Tom"}[i%2],
			Time: at.Add(time.Duration(i) * 37 * time.Minute), Text: b.String()})
	}
	_, err := m.AddBatch(ctx, recs)
	require.NoError(t, err)
	for _, q := range []string{"wedding speech in porto", "What did Ana read at the book club?", "river run before work", "budget plan for the trip"} {
		for _, mode := range []Mode{Hybrid, KeywordOnly, VectorOnly} {
			few, err := m.Query(ctx, Query{Text: q, Mode: mode, K: 5})
			require.NoError(t, err)
			many, err := m.Query(ctx, Query{Text: q, Mode: mode, K: ranking.MinDepth / 4})
			require.NoError(t, err)
			require.Len(t, few, 5)
			assert.Equal(t, ids(few), ids(many[:5]), "%q, %v", q, mode)
		}
	}
}

func TestQuery_TimePriorAndExpansion(t *testing.T) {
	ctx := t.Context()
	at := time.Date(2023, 6, 20, 10, 0, 0, 0, time.UTC)
	recs := []Record{
		{ID: "may", Namespace: "c", Time: time.Date(2023, 5, 8, 9, 0, 0, 0, time.UTC), Text: "We went hiking in the hills."},
		{ID: "june", Namespace: "c", Time: at.AddDate(0, 0, -3), Text: "We went hiking by the lake."},
		{ID: "fly", Namespace: "c", Time: at, Text: "My flight to Lisbon leaves at noon."},
	}
	m := newFilled(t, recs, WithTimePrior(1))
	hits, err := m.Query(ctx, Query{Text: "Where did we go hiking on 8 May 2023?", Namespace: "c", Mode: KeywordOnly})
	noErr(t, err)
	assert.Equal(t, "may", hits[0].ID, "the named day first")
	hits, err = m.Query(ctx, Query{Text: "Where did we go hiking three days ago?", Namespace: "c", Mode: KeywordOnly})
	noErr(t, err)
	assert.Equal(t, "june", hits[0].ID, "three days before the newest record")

	related := func(w string) []string {
		if w == "plane" {
			return []string{"flight", "aircraft"}
		}
		return nil
	}
	m2 := newFilled(t, recs, WithQueryExpansion(related, 0.5), WithFeedback(2, 5, 0.2))
	hits, err = m2.Query(ctx, Query{Text: "When does the plane leave?", Namespace: "c", Mode: KeywordOnly})
	noErr(t, err)
	assert.Contains(t, ids(hits), "fly", "found through a related word")
	plain := newFilled(t, recs)
	hits, err = plain.Query(ctx, Query{Text: "When does the plane go?", Namespace: "c", Mode: KeywordOnly})
	noErr(t, err)
	assert.NotContains(t, ids(hits), "fly", "not found without expansion")
}

// TestQuery_NamedDay: a query that names a calendar day finds that day's
// records though they share none of its words (the day lends to them),
// prefers a match said that day to the same match said the day after (in
// the time prior's margin, half its boost), and a scope that leaves the
// day's records out gets none of them; WithTimePrior(0) turns it off.
func TestQuery_NamedDay(t *testing.T) {
	ctx := t.Context()
	day := func(d, h int) time.Time { return time.Date(2023, 5, d, h, 0, 0, 0, time.UTC) }
	recs := []Record{
		// Each its own conversation (more than 12 hours apart): no
		// neighbour lends to another.
		{ID: "garden", Namespace: "c", Speaker: "Ann", Time: day(7, 10), Text: "We planted tomatoes in the garden."},
		{ID: "spain", Namespace: "c", Speaker: "Ann", Time: day(8, 1), Text: "I want to visit Madrid and Granada next month."},
		{ID: "trip8", Namespace: "c", Speaker: "Ann", Time: day(8, 23), Text: "The trip budget is tight."},
		{ID: "trip9", Namespace: "c", Speaker: "Ann", Time: day(9, 20), Text: "Trip budget. Trip."},
		{ID: "bike", Namespace: "c", Speaker: "Ann", Time: day(20, 10), Text: "The bike needs new brakes for the trip."},
	}
	m := newFilled(t, recs, WithTimePrior(1))
	hits, err := m.Query(ctx, Query{Text: "What did I tell you about my trip on May 8th?", Namespace: "c", Mode: KeywordOnly})
	noErr(t, err)
	got := ids(hits)
	require.Contains(t, got, "spain", "the named day's record, no word shared")
	assert.Equal(t, "trip8", got[0], "the words matched on the day itself")
	assert.Less(t, slices.Index(got, "trip8"), slices.Index(got, "trip9"), "the day after counts half, though it says \"trip\" twice")
	assert.NotContains(t, got, "garden", "the day before, no word shared: not lent to")

	hits, err = m.Query(ctx, Query{Text: "What did I tell you about my trip on May 8th?", Namespace: "c", Mode: KeywordOnly,
		From: day(9, 0)})
	noErr(t, err)
	assert.NotContains(t, ids(hits), "spain", "out of the scope")

	// A day of more records than a search's depth (ranking.Depth, 200)
	// is not one conversation: nothing is lent.
	var big []Record
	for i := range 250 {
		big = append(big, Record{ID: fmt.Sprintf("note%d", i), Namespace: "c", Speaker: "Ann", Time: day(8, 2).Add(time.Duration(i) * time.Minute),
			Text: fmt.Sprintf("Note %d: nothing else.", i)})
	}
	crowded := newFilled(t, append(slices.Clone(recs), big...), WithTimePrior(1))
	hits, err = crowded.Query(ctx, Query{Text: "What did I tell you about my trip on May 8th?", Namespace: "c", Mode: KeywordOnly})
	noErr(t, err)
	assert.NotContains(t, ids(hits), "spain", "a crowded day lends nothing")
	assert.Contains(t, ids(hits), "trip8", "the words still find it")

	off := newFilled(t, recs, WithTimePrior(0))
	hits, err = off.Query(ctx, Query{Text: "What did I tell you about my trip on May 8th?", Namespace: "c", Mode: KeywordOnly})
	noErr(t, err)
	assert.NotContains(t, ids(hits), "spain", "no time prior: no day's loan")
}

// TestQuery_NamedDayWeakMatch: a record of the named day that the
// query's words find only weakly (a "you") gains the day's loan too: it
// ranks above the day's records that match nothing, instead of keeping
// its weak score below them (MemoryBank's "Why was I in a bad mood on April 30th, and what question
// did I ask you?").
func TestQuery_NamedDayWeakMatch(t *testing.T) {
	ctx := t.Context()
	day := func(d, h int) time.Time { return time.Date(2023, 5, d, h, 0, 0, 0, time.UTC) }
	recs := []Record{
		// More than 12 hours apart: each its own conversation.
		{ID: "home8", Namespace: "c", Speaker: "Ann", Time: day(8, 0), Text: "Some trouble at home made me anxious and tired."},
		{ID: "ask8", Namespace: "c", Speaker: "Ann", Time: day(8, 13), Text: "How do you view emotional release?"},
		{ID: "mood9", Namespace: "c", Speaker: "Ann", Time: day(9, 12), Text: "A bad mood again today, a really bad mood."},
		{ID: "tea20", Namespace: "c", Speaker: "Ann", Time: day(20, 10), Text: "Would you like some tea?"},
	}
	m := newFilled(t, recs, WithTimePrior(1))
	hits, err := m.Query(ctx, Query{Text: "Why was I in a bad mood on May 8th, and what question did I ask you?", Namespace: "c", Mode: KeywordOnly})
	noErr(t, err)
	got := ids(hits)
	require.Contains(t, got, "ask8")
	require.Contains(t, got, "home8", "the named day's record, no word shared")
	assert.Equal(t, "mood9", got[0], "the day after's strong match keeps its place")
	assert.Less(t, slices.Index(got, "ask8"), slices.Index(got, "home8"), "a weak match of the day above its silent record")
	if i := slices.Index(got, "tea20"); i >= 0 {
		assert.Less(t, slices.Index(got, "ask8"), i, "and above the same weak match said another day")
	}
}

// TestQuery_Recap: a recap question ("what did we talk about on May
// 8th?") shares no word with its answer, the talk of that day: it returns
// that day's records, relevant by the default minimum, in either mode, and
// nothing the vector path matched on its filler words; a question about
// something said that day is not a recap; a day of more records than a
// search's depth is not one conversation, and lends nothing.
func TestQuery_Recap(t *testing.T) {
	ctx := t.Context()
	day := func(d, h, m int) time.Time { return time.Date(2023, 5, d, h, m, 0, 0, time.UTC) }
	recs := []Record{
		{ID: "a1", Namespace: "c", Speaker: "Ann", Time: day(7, 10, 0), Text: "We planted tomatoes in the garden."},
		{ID: "b1", Namespace: "c", Speaker: "Ann", Time: day(8, 9, 0), Text: "Can you help me draft a cover letter for Acme?"},
		{ID: "b2", Namespace: "c", Speaker: "Bot", Time: day(8, 9, 1), Text: "Open with the Spark pipeline you built."},
		{ID: "b3", Namespace: "c", Speaker: "Ann", Time: day(8, 9, 2), Text: "Also remind me to call the dentist on Friday."},
		{ID: "c1", Namespace: "c", Speaker: "Ann", Time: day(20, 10, 0), Text: "The bike needs new brakes."},
	}
	m := newFilled(t, recs, WithTimePrior(1))
	for _, mode := range []Mode{KeywordOnly, Hybrid} {
		for _, q := range []string{"What did we talk about on May 8th?", "Can you remind me what we talked about on May 8th?"} {
			hits, err := m.Query(ctx, Query{Text: q, Namespace: "c", Mode: mode})
			noErr(t, err)
			assert.Equal(t, []string{"b1", "b2", "b3"}, ids(hits), "%v %q: the day's talk, and only it, as it went", mode, q)
			for _, h := range hits {
				// The day's records are all it asks: relevance reads
				// its words as held (not the 0.2 of filler words that
				// no record holds).
				assert.Greater(t, h.Relevance, float32(0.5), "%v %q: %s", mode, q, h.ID)
			}
		}
	}
	hits, err := m.Query(ctx, Query{Text: "What did I plant on May 8th?", Namespace: "c", Mode: KeywordOnly, MinRelevance: -1})
	noErr(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "a1", hits[0].ID, "not a recap: the words find the day before's planting")

	off := newFilled(t, append(slices.Clone(recs), Record{ID: "v1", Namespace: "c", Speaker: "Bot", Time: day(20, 10, 1), Text: "Did it, on it."}), WithTimePrior(0))
	hits, err = off.Query(ctx, Query{Text: "What did we talk about on May 8th?", Namespace: "c", Mode: KeywordOnly})
	noErr(t, err)
	assert.NotContains(t, ids(hits), "b2", "no time prior: no recap")
	hits, err = off.Query(ctx, Query{Text: "What did we talk about on May 8th?", Namespace: "c", Mode: Hybrid, MinRelevance: -1})
	noErr(t, err)
	assert.Contains(t, ids(hits), "v1", "no recap answered by its period: what the vector path alone found stays")

	var big []Record
	for i := range 250 {
		big = append(big, Record{ID: fmt.Sprintf("note%d", i), Namespace: "c", Speaker: "Ann", Time: day(8, 12, 0).Add(time.Duration(i) * time.Second),
			Text: fmt.Sprintf("Note %d: nothing else.", i)})
	}
	crowded := newFilled(t, append(slices.Clone(recs), big...), WithTimePrior(1))
	hits, err = crowded.Query(ctx, Query{Text: "What did we talk about on May 8th?", Namespace: "c", Mode: KeywordOnly})
	noErr(t, err)
	assert.NotContains(t, ids(hits), "b2", "a crowded day is not recalled")
}

// TestQuery_RecapAsOf: a query's time references count back from its own
// moment when it gives one (Query.AsOf), from the namespace's newest
// record otherwise: "yesterday" asked as of May 9th is May 8th, though
// the namespace's newest record is of May 20th, and the talk of the
// morning the question is asked is not part of it.
func TestQuery_RecapAsOf(t *testing.T) {
	ctx := t.Context()
	day := func(d, h int) time.Time { return time.Date(2023, 5, d, h, 0, 0, 0, time.UTC) }
	m := newFilled(t, []Record{
		{ID: "b1", Namespace: "c", Speaker: "Ann", Time: day(8, 9), Text: "Can you help me draft a cover letter for Acme?"},
		{ID: "b2", Namespace: "c", Speaker: "Bot", Time: day(8, 10), Text: "Open with the Spark pipeline you built."},
		{ID: "today", Namespace: "c", Speaker: "Ann", Time: day(9, 9), Text: "Good morning! Another question."},
		{ID: "tenth", Namespace: "c", Speaker: "Bot", Time: day(10, 10), Text: "Here is the answer."},
		{ID: "c1", Namespace: "c", Speaker: "Ann", Time: day(19, 10), Text: "The bike needs new brakes."},
		{ID: "c2", Namespace: "c", Speaker: "Bot", Time: day(20, 10), Text: "Take it to the shop on Main Street."},
	}, WithTimePrior(1))
	for _, mode := range []Mode{KeywordOnly, Hybrid} {
		hits, err := m.Query(ctx, Query{Text: "What did we talk about yesterday?", Namespace: "c", Mode: mode, AsOf: day(9, 15)})
		noErr(t, err)
		assert.ElementsMatch(t, []string{"b1", "b2"}, ids(hits), "%v: yesterday as of May 9th, not the morning of the 9th", mode)
		hits, err = m.Query(ctx, Query{Text: "What did we talk about yesterday?", Namespace: "c", Mode: mode})
		noErr(t, err)
		assert.ElementsMatch(t, []string{"c1", "c2"}, ids(hits), "%v: yesterday as of the newest record", mode)
		hits, err = m.Query(ctx, Query{Text: "What did we talk about two days ago?", Namespace: "c", Mode: mode, AsOf: day(10, 15)})
		noErr(t, err)
		assert.ElementsMatch(t, []string{"b1", "b2", "today"}, ids(hits), "%v: two days ago, give or take a day and a half, does not reach the morning it is asked", mode)
		hits, err = m.Query(ctx, Query{Text: "What did we talk about this morning?", Namespace: "c", Mode: mode, AsOf: day(9, 15)})
		noErr(t, err)
		assert.Equal(t, []string{"today"}, ids(hits), "%v: this morning, the day of asking so far", mode)
	}
}

// TestQuery_Recency: a query that refers back to an earlier conversation
// ("again", "last time") prefers the latest of records that match it
// alike; one that does not keeps the older first (lower id on a tie), and
// WithRecency(0, 0) turns the preference off. The scores alone, that is:
// the records are versions of one statement, and by default the later
// comes first whatever the query (engine.WithNewerFirst).
func TestQuery_Recency(t *testing.T) {
	ctx := t.Context()
	at := time.Date(2026, 6, 20, 10, 0, 0, 0, time.UTC)
	recs := []Record{
		{ID: "a-old", Namespace: "c", Time: at.AddDate(0, -2, 0), Text: "The training plan is a 3-day split."},
		{ID: "b-new", Namespace: "c", Time: at.AddDate(0, 0, -2), Text: "The training plan is a 4-day split."},
		{ID: "c-other", Namespace: "c", Time: at, Text: "My flight to Lisbon leaves at noon."},
	}
	scoreOrder := WithEngine(engine.WithNewerFirst(false))
	m := newFilled(t, recs, scoreOrder)
	hits, err := m.Query(ctx, Query{Text: "What was the training plan split again?", Namespace: "c", Mode: KeywordOnly})
	noErr(t, err)
	assert.Equal(t, "b-new", hits[0].ID, "refers back: the latest first")
	hits, err = m.Query(ctx, Query{Text: "What is the training plan split?", Namespace: "c", Mode: KeywordOnly})
	noErr(t, err)
	assert.Equal(t, "a-old", hits[0].ID, "does not refer back: no recency")
	off := newFilled(t, recs, WithRecency(0, 0), scoreOrder)
	hits, err = off.Query(ctx, Query{Text: "What was the training plan split again?", Namespace: "c", Mode: KeywordOnly})
	noErr(t, err)
	assert.Equal(t, "a-old", hits[0].ID, "off")
	versions := newFilled(t, recs, WithRecency(0, 0))
	hits, err = versions.Query(ctx, Query{Text: "What is the training plan split?", Namespace: "c", Mode: KeywordOnly, Explain: true})
	noErr(t, err)
	assert.Equal(t, []string{"b-new", "a-old"}, ids(hits), "by default the later version first, without recency")
	assert.Equal(t, []string{"a-old"}, hits[0].Explain.LaterThan, "the explanation names the earlier version")
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestQuery_NextTurnField(t *testing.T) {
	ctx := t.Context()
	at := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	recs := []Record{
		{ID: "q", Namespace: "c", Time: at, Speaker: "Ann", Text: "Where are you going this summer?"},
		{ID: "a", Namespace: "c", Time: at.Add(time.Minute), Speaker: "Ben", Text: "Hiking in Patagonia with my brother."},
		{ID: "x", Namespace: "c", Time: at.Add(2 * time.Minute), Speaker: "Ann", Text: "Nice weather today."},
	}
	for _, w := range []float64{0, 0.3} {
		m := newFilled(t, recs, WithNextWeight(w), WithNeighbourWeight(0.3))
		hits, err := m.Query(ctx, Query{Text: "Patagonia", Namespace: "c", Mode: KeywordOnly})
		noErr(t, err)
		if w == 0 {
			assert.Equal(t, []string{"a", "x"}, ids(hits), "the turn after through its previous-turn field")
		} else {
			assert.Equal(t, "a", hits[0].ID)
			assert.ElementsMatch(t, []string{"a", "q", "x"}, ids(hits), "and the question through its answer")
		}
		noErr(t, m.Forget(ctx, "a"))
		hits, err = m.Query(ctx, Query{Text: "Patagonia", Namespace: "c", Mode: KeywordOnly})
		noErr(t, err)
		assert.Empty(t, hits, "a forgotten record's words leave its neighbours' fields too (w=%v)", w)
		m.Close()
	}
}

// TestQuery_ExactCodeFirstAcrossNamespaces: a code stored once, in a small
// namespace, is found first by a search of every namespace, though a
// large namespace holds a record with one of its parts: a word rare among
// many records weighs far more there (idf) than the whole code among two,
// so raw BM25 scores would put the large namespace's part first. Each
// namespace's keyword scores count relative to the most a record of it
// could score for the query (keyword.MaxScore), so one namespace's
// statistics do not push another's exact match down.
func TestQuery_ExactCodeFirstAcrossNamespaces(t *testing.T) {
	var recs []Record
	for i := range 400 {
		recs = append(recs, Record{ID: fmt.Sprintf("big%03d", i), Namespace: "ops",
			Text: fmt.Sprintf("Shipment %d left the %s warehouse on time.", i, []string{"north", "south", "east"}[i%3])})
	}
	recs = append(recs,
		Record{ID: "part", Namespace: "ops", Text: "Invoice 20417 was paid by the warehouse."},
		Record{ID: "code", Namespace: "support", Text: "The customer's case is NW-20417, escalated to tier 2."},
		Record{ID: "other", Namespace: "support", Text: "Tier 2 answers within a day."},
	)
	emb, err := hash.New(256) // lexical: margin fusion, the default
	require.NoError(t, err)
	m, err := New(t.Context(), emb)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	_, err = m.AddBatch(t.Context(), recs)
	require.NoError(t, err)
	for _, mode := range []Mode{Hybrid, KeywordOnly} {
		hits, err := m.Query(t.Context(), Query{Text: "NW-20417", Mode: mode, K: 5})
		require.NoError(t, err)
		require.NotEmpty(t, hits, mode)
		assert.Equal(t, "code", hits[0].ID, "%v: %v", mode, ids(hits))
		within, err := m.Query(t.Context(), Query{Text: "NW-20417", Mode: mode, K: 5, Namespace: "support"})
		require.NoError(t, err)
		assert.Equal(t, "code", within[0].ID, mode)
	}
}

// TestSearch_AsOfNow: Search is asked now (an agent asking during a
// conversation): its "yesterday" is the day before the clock's, without
// today's talk, where a Query without AsOf counts back from the newest
// record (today's).
func TestSearch_AsOfNow(t *testing.T) {
	now := time.Now()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	morning := today
	if now.Add(-time.Minute).After(today) {
		morning = now.Add(-time.Minute)
	}
	m := newFilled(t, []Record{
		{ID: "y1", Namespace: "c", Speaker: "Ann", Time: today.Add(-14 * time.Hour), Text: "Can you help me draft a cover letter for Acme?"},
		{ID: "y2", Namespace: "c", Speaker: "Bot", Time: today.Add(-14*time.Hour + time.Minute), Text: "Open with the Spark pipeline you built."},
		{ID: "t1", Namespace: "c", Speaker: "Ann", Time: morning, Text: "Good morning, one more question."},
	})
	hits, err := m.Search(t.Context(), "What did we talk about yesterday?")
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"y1", "y2"}, ids(hits))
	hits, err = m.Query(t.Context(), Query{Text: "What did we talk about yesterday?"})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"y1", "y2", "t1"}, ids(hits), "the 60 hours up to the newest record")
}
