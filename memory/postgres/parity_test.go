package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/engine"
	"github.com/agentmem/agentmem/memory/longterm"
	"github.com/agentmem/agentmem/memory/memorytest"
	"github.com/agentmem/agentmem/memory/postgres"
)

// parityTurns are conversations in two namespaces: questions and answers
// that share few words, names, a code. parityTimes cuts them into
// episodes.
var parityTurns = []memory.Record{
	{ID: "t1", Speaker: "Alice", Text: "Where are we going for the team offsite this spring?"},
	{ID: "t2", Speaker: "Bob", Text: "We booked the lake house near Annecy for three nights."},
	{ID: "t3", Speaker: "Alice", Text: "Great. Who is driving the rental van?"},
	{ID: "t4", Speaker: "Bob", Text: "Carol drives; the van is reserved under ticket OPS-4711."},
	{ID: "t5", Speaker: "Alice", Text: "Did anyone check the weather forecast for the lake?"},
	{ID: "t6", Speaker: "Bob", Text: "Sunny and mild, around eighteen degrees all week."},
	{ID: "t7", Speaker: "Carol", Text: "I will bring the board games and the coffee grinder."},
	{ID: "u1", Namespace: "other", Speaker: "Dan", Text: "The lake house invoice arrived, ticket OPS-4711 is closed."},
	{ID: "u2", Namespace: "other", Speaker: "Erin", Text: "Annecy in spring is lovely; the van was cheap."},
	{ID: "t8", Speaker: "Bob", Text: "The lake house key is under the blue mat by the door."},
	{ID: "t9", Speaker: "Carol", Text: "Thanks! I parked the van behind the house, the weather turned."},
	{ID: "t10", Speaker: "Alice", Text: "Reminder: the offsite survey about the trip closes Friday."},
	{ID: "u3", Namespace: "other", Speaker: "Dan", Text: "Who paid for the coffee grinder and the board games?"},
	{ID: "c1", Speaker: "User", Text: "My puppy is called Biscuit, he loved the lake."},
	{ID: "c2", Speaker: "assistant", Text: "Biscuit is a lovely name for a puppy, and a puppy at the lake house is fun."},
}

// parityTimes are parityTurns' times, minutes after t0: episodes
// {t1–t4}, {t5–t7}, {t8, t9}, {t10}, {c1, c2} in the default namespace,
// {u1, u2}, {u3} in the other.
var parityTimes = []time.Duration{0, 1, 2, 3, 26 * 60, 26*60 + 5, 26*60 + 9, 10, 11, 3 * 24 * 60, 3*24*60 + 11*60, 5 * 24 * 60, 5*24*60 + 13*60, 7 * 24 * 60, 7*24*60 + 1}

// parityRecords are parityTurns with parityTimes.
func parityRecords() []memory.Record {
	recs := make([]memory.Record, len(parityTurns))
	for i, r := range parityTurns {
		r.Time = t0.Add(parityTimes[i] * time.Minute)
		recs[i] = r
	}
	return recs
}

// TestRanksLikeLongterm: the same records, in PostgreSQL and in the
// in-process engine, give the same hits with the same scores in every
// mode (single-path scores are the path's own: cosine, relative BM25).
//
// With exact=1 every vector search is an exact scan; without it a query of
// one (small) namespace scans its chunks exactly and a query of all of
// them uses the HNSW index (exact at this size) for the chunks folded into
// it and an exact scan for the pending ones: the records are compared
// written (all pending), folded (none pending), then after a forget and a
// replace (the replaced record pending, the others folded).
func TestRanksLikeLongterm(t *testing.T) {
	for _, exact := range []string{"1", "0"} {
		t.Run("exact="+exact, func(t *testing.T) { ranksLikeLongterm(t, exact, nil, nil, nil) })
	}
	// Postings packed in blocks of 3 whenever a namespace's tail holds 4
	// records: the queries read blocks and tail, the forget takes a
	// record out of its blocks.
	t.Run("exact=1/blocks", func(t *testing.T) {
		t.Cleanup(postgres.SetBlocks(3, 4))
		ranksLikeLongterm(t, "1", nil, nil, nil)
	})
	// Another episode weight, set alike on both.
	t.Run("exact=1/episode=0.2", func(t *testing.T) {
		ranksLikeLongterm(t, "1", nil, []postgres.Option{postgres.WithEpisodeWeight(0.2)}, []longterm.Option{longterm.WithEpisodeWeight(0.2)})
	})
	// Score fusion chosen over the hash embedder (whose default is margin
	// fusion), set alike on both.
	t.Run("exact=1/score fusion", func(t *testing.T) {
		ranksLikeLongterm(t, "1", nil, []postgres.Option{postgres.WithScoreFusion(0.2, 0.8)}, []longterm.Option{longterm.WithScoreFusion(0.2, 0.8)})
	})
	// The ranking options memory/postgres lacked before the engine: each
	// fusion, relevance feedback, query expansion, the time prior, BM25
	// and query-tf parameters and a reranker, given alike to both.
	for name, opts := range map[string][]engine.Option{
		"rrf":      {engine.WithRRF(0)},
		"weighted": {engine.WithWeightedFusion(0.4, 0.6), engine.WithQueryIDF(false)},
		"keyword signals": {engine.WithFeedback(3, 5, 0.4), engine.WithTimePrior(0.5), engine.WithQueryTF(1.2), engine.WithBM25(1.5, 0.6), engine.WithRecency(1, time.Hour),
			engine.WithQueryExpansion(func(w string) []string { return map[string][]string{"car": {"van"}, "dog": {"puppy"}}[w] }, 0.5)},
		"reranker": {engine.WithReranker(reverse{}, 8)},
	} {
		t.Run("exact=1/"+name, func(t *testing.T) {
			ranksLikeLongterm(t, "1", nil, []postgres.Option{postgres.WithEngine(opts...)}, []longterm.Option{longterm.WithEngine(opts...)})
		})
	}
	// An embedder that does not say its kind is a model: both take the
	// model's fusion and weights.
	t.Run("exact=1/model embedder", func(t *testing.T) {
		ranksLikeLongterm(t, "1", modelEmbedder{hashEmb(t, 256)}, nil, nil)
	})
}

// reverse is a reranker that reverses the candidates it is given.
type reverse struct{}

func (reverse) Rerank(_ context.Context, _ string, hits []memory.Hit) ([]memory.Hit, error) {
	out := slices.Clone(hits)
	slices.Reverse(out)
	return out, nil
}

// modelEmbedder hides its embedder's Kind, as a user's model embedder
// would not have one (embed.KindOf: embed.Model).
type modelEmbedder struct{ embed.Embedder }

func ranksLikeLongterm(t *testing.T, exact string, emb embed.Embedder, pgOpts []postgres.Option, ltOpts []longterm.Option) {
	ctx := t.Context()
	if emb == nil {
		emb = hashEmb(t, 256)
	}

	recs := parityRecords()
	pg, err := postgres.Open(ctx, storeURL(t, "exact", exact), emb, append([]postgres.Option{postgres.WithCreate()}, pgOpts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { pg.Close() })
	lt, err := longterm.New(ctx, emb, ltOpts...)
	require.NoError(t, err)
	t.Cleanup(func() { lt.Close() })
	// In batches of 5: with small posting blocks, some of a namespace's
	// postings are packed and some not.
	for i := 0; i < len(recs); i += 5 {
		_, err = pg.AddBatch(ctx, recs[i:min(i+5, len(recs))])
		require.NoError(t, err)
		_, err = lt.AddBatch(ctx, recs[i:min(i+5, len(recs))])
		require.NoError(t, err)
	}

	compare := func(stage string) {
		for _, q := range []string{"who drives the van", "OPS-4711", "car for the trip", "my dog", "what did Alice say yesterday?", "lake weather", "what did Bob say about Annecy", "coffee",
			"where is the lake house key", "when does the offsite survey close?", "what", "van house weather trip",
			"what is my puppy's name?", "what did you say about my puppy and the lake?", "the lake house van again: where is it?",
			// Named days: their records lent to (engine.During).
			"what did we talk about on March 2nd, 2025?", "the weather on 2025-03-04"} {
			for _, ns := range []string{"", "default"} {
				for _, from := range []time.Time{{}, t0.Add(3 * time.Minute), t0.Add(48 * time.Hour)} {
					for _, mode := range []memory.Mode{memory.Hybrid, memory.VectorOnly, memory.KeywordOnly} {
						query := memory.Query{Text: q, Namespace: ns, Mode: mode, K: 5, From: from, Neighbours: 2}
						msg := fmt.Sprintf("%s: %q ns %q from %v %s", stage, q, ns, from, mode)
						want, err := lt.Query(ctx, query)
						require.NoError(t, err)
						got, err := pg.Query(ctx, query)
						require.NoError(t, err)
						likeLongterm(t, want, got, msg)
						if mode == memory.KeywordOnly && len(pgOpts) == 0 {
							// Without a minimum relevance: with one, the
							// best-scoring record can be left out while
							// another namespace's, whose gate is higher,
							// stays.
							all := query
							all.MinRelevance = -1
							got, err := pg.Query(ctx, all)
							require.NoError(t, err)
							if len(got) > 0 {
								assert.InDelta(t, 1, got[0].Score, 1e-6, "%s: keyword only, the best scores 1", msg)
							}
						}
					}
				}
			}
		}
	}
	compare("added")
	// Without exact=1 the batches were written pending (outside the HNSW
	// index, found by the exact scan of the pending chunks); folded into
	// the index, they rank the same.
	pending, folded := chunkStates(t, pg)
	if exact == "0" {
		assert.Positive(t, pending, "small batches are written pending")
	}
	require.NoError(t, pg.Fold(ctx))
	pending, folded = chunkStates(t, pg)
	assert.Zero(t, pending, "Fold leaves nothing pending")
	assert.Equal(t, pg.Chunks(), folded)
	compare("folded")
	// A forgotten record leaves its episode (the only record of one: the
	// episode goes), and the records before and after it become
	// neighbours (t5 and t7 around t6); a replaced one moves to the end
	// of its namespace, after the newest record that stays (c1, once c2
	// is forgotten), linked to it when close enough in time.
	for _, m := range []interface {
		Forget(context.Context, string) error
		Add(context.Context, memory.Record) (string, error)
	}{pg, lt} {
		require.NoError(t, m.Forget(ctx, "t4"))
		require.NoError(t, m.Forget(ctx, "t10"))
		require.NoError(t, m.Forget(ctx, "t6"))
		require.NoError(t, m.Forget(ctx, "c2"))
		r := parityTurns[1]
		r.Time = t0.Add((7*24*60 + 2) * time.Minute)
		_, err := m.Add(ctx, r)
		require.NoError(t, err)
	}
	if exact == "0" {
		// The replaced record is pending, the others folded: queries
		// merge the index's hits and the pending chunks'.
		pending, folded = chunkStates(t, pg)
		assert.Positive(t, pending, "the replaced record is pending")
		assert.Positive(t, folded)
	}
	compare("after forget and replace")
	checkStats(t, pg)
}

// likeLongterm checks that got, PostgreSQL's hits, are want, the in-process
// engine's: the same records, scores, relevance, ranks on each path,
// snippets and neighbours, and, explained, the same reading of their
// namespace as passages.
func likeLongterm(t *testing.T, want, got []memory.Hit, msg string) {
	t.Helper()
	require.Len(t, got, len(want), msg)
	for i := range want {
		assert.Equal(t, want[i].ID, got[i].ID, "%s hit %d", msg, i)
		assert.InDelta(t, want[i].Score, got[i].Score, 1e-5, "%s hit %d", msg, i)
		assert.InDelta(t, want[i].Relevance, got[i].Relevance, 1e-5, "%s hit %d: relevance", msg, i)
		assert.Equal(t, want[i].VectorRank, got[i].VectorRank, "%s hit %d", msg, i)
		assert.Equal(t, want[i].KeywordRank, got[i].KeywordRank, "%s hit %d", msg, i)
		assert.Equal(t, want[i].Snippets, got[i].Snippets, "%s hit %d", msg, i)
		assert.Equal(t, want[i].Before, got[i].Before, "%s hit %d: neighbours before", msg, i)
		assert.Equal(t, want[i].After, got[i].After, "%s hit %d: neighbours after", msg, i)
		if want[i].Explain != nil && got[i].Explain != nil {
			assert.Equal(t, want[i].Explain.Documents, got[i].Explain.Documents, "%s hit %d: passages", msg, i)
		}
	}
}

// TestRanksLikeLongterm_ChinesePassages: a Chinese query among passages
// (memorytest.ChinesePassages: records averaging engine.DocumentLength
// keyword terms or more) is read as such in PostgreSQL as in the
// in-process engine, from each store's own statistics: the same hits, the
// same relevance, the same Explanation.Documents (likeLongterm); among
// short turns and for an English query neither reads documents.
func TestRanksLikeLongterm_ChinesePassages(t *testing.T) {
	ctx := t.Context()
	emb := hashEmb(t, 256)
	var recs []memory.Record
	for i, text := range memorytest.ChinesePassages {
		recs = append(recs, memory.Record{ID: fmt.Sprint("w", i), Namespace: "wiki", Text: text, Time: t0.Add(time.Duration(i) * time.Minute)})
	}
	recs = append(recs,
		memory.Record{ID: "c0", Namespace: "chat", Speaker: "user", Text: "我下周三去杭州出差，住三天。", Time: t0},
		memory.Record{ID: "c1", Namespace: "chat", Speaker: "assistant", Text: "好的，记住了：下周三去杭州，住三天。", Time: t0.Add(time.Minute)})
	pg, lt := bothHolding(t, emb, recs)
	documents := 0
	for _, q := range []struct{ text, ns string }{
		{"三峡工程位于哪里？", "wiki"}, {"量子计算机的工作原理是什么？", "wiki"}, {"what did the user say?", "chat"},
		{"我什么时候去杭州？", "chat"}, {"三峡工程位于哪里？", ""},
	} {
		for _, mode := range []memory.Mode{memory.Hybrid, memory.KeywordOnly} {
			query := memory.Query{Text: q.text, Namespace: q.ns, Mode: mode, K: 5, MinRelevance: -1, Explain: true}
			msg := fmt.Sprintf("%q in %q, %s", q.text, q.ns, mode)
			want, err := lt.Query(ctx, query)
			require.NoError(t, err)
			got, err := pg.Query(ctx, query)
			require.NoError(t, err)
			likeLongterm(t, want, got, msg)
			chinese := strings.ContainsFunc(q.text, func(r rune) bool { return unicode.Is(unicode.Han, r) })
			for _, h := range got {
				assert.Equal(t, chinese && h.Namespace == "wiki", h.Explain.Documents, "%s: %s", msg, h.ID)
				if h.Explain.Documents {
					documents++
				}
			}
		}
	}
	assert.Positive(t, documents, "the Chinese queries among the passages read documents")
}

// TestRanksLikeLongterm_Monologue: PostgreSQL reads a namespace where one
// speaker says everything as the in-process engine does, from its own
// list of the namespace's speakers: its records are notes, which their
// neighbours lend no relevance, where the same records said in turn by
// two speakers keep what their neighbours lend them.
func TestRanksLikeLongterm_Monologue(t *testing.T) {
	ctx := t.Context()
	emb := hashEmb(t, 256)
	recs := memorytest.NoteRecords(t0)
	pg, lt := bothHolding(t, emb, recs)
	hits := map[string]int{}
	for _, q := range []string{"who lives in Porto?", "what's the wifi password?", "when are the tyres due?"} {
		for _, ns := range []string{"notes", "chat"} {
			for _, mode := range []memory.Mode{memory.Hybrid, memory.KeywordOnly} {
				query := memory.Query{Text: q, Namespace: ns, Mode: mode, K: 5, Explain: true}
				msg := fmt.Sprintf("%q in %q, %s", q, ns, mode)
				want, err := lt.Query(ctx, query)
				require.NoError(t, err)
				got, err := pg.Query(ctx, query)
				require.NoError(t, err)
				likeLongterm(t, want, got, msg)
				hits[ns] += len(got)
			}
		}
	}
	assert.Less(t, hits["notes"], hits["chat"], "the conversation's neighbours lend relevance, the notes' do not")
}

// bothHolding returns a new PostgreSQL store and an in-process long-term
// memory over emb, each holding recs, closed when t ends.
func bothHolding(t *testing.T, emb embed.Embedder, recs []memory.Record) (*postgres.Memory, *longterm.Memory) {
	ctx := t.Context()
	pg, err := postgres.Open(ctx, storeURL(t), emb, postgres.WithCreate())
	require.NoError(t, err)
	t.Cleanup(func() { pg.Close() })
	lt, err := longterm.New(ctx, emb)
	require.NoError(t, err)
	t.Cleanup(func() { lt.Close() })
	for _, m := range []memory.Records{pg, lt} {
		_, err := m.AddBatch(ctx, recs)
		require.NoError(t, err)
	}
	return pg, lt
}
