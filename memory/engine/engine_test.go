package engine_test

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/chunk"
	"github.com/agentmem/agentmem/embed"
	_ "github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/engine"
	"github.com/agentmem/agentmem/memory/internal/ranking"
	"github.com/agentmem/agentmem/memory/longterm"
	"github.com/agentmem/agentmem/memory/memorytest"
	"github.com/agentmem/agentmem/memory/window/tokens"
	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/inmem"
)

// refStore is a reference source for the engine, the plainest one: every
// record in slices, one keyword index per namespace for the records and
// one for their episodes, one vector database for every chunk, filtered
// by scanning. It shares no code with the stores' sources (longterm's,
// postgres's): a search through it and through a store must agree.
type refStore struct {
	recs   []memory.Record
	chunks [][]string
	ns     map[string]*refNS
	vecs   *inmem.DB
	owner  []int // chunk id → record index
	ord    []int // chunk id → its index in the record
}

type refNS struct {
	name     string
	ids      []int   // namespace id → record index
	episode  []int64 // namespace id → episode
	text     *keyword.Index
	episodes *keyword.Index
}

// gap is the longest time between two records of one conversation.
const gap = 12 * time.Hour

func newRefStore(t *testing.T, emb embed.Embedder, tok keyword.Tokenizer, recs []memory.Record) *refStore {
	ctx := t.Context()
	vecs, err := inmem.New(emb.Dim())
	require.NoError(t, err)
	s := &refStore{recs: recs, ns: map[string]*refNS{}, vecs: vecs}
	for i, r := range recs {
		n := s.ns[r.Namespace]
		if n == nil {
			n = &refNS{name: r.Namespace, text: keyword.NewIndex(tok), episodes: keyword.NewIndex(tok)}
			s.ns[r.Namespace] = n
		}
		id := int64(len(n.ids))
		ep := int64(0)
		if id > 0 {
			prev := recs[n.ids[id-1]]
			ep = n.episode[id-1]
			if d := r.Time.Sub(prev.Time); d > gap || d < -gap {
				ep++
			}
		}
		n.ids, n.episode = append(n.ids, i), append(n.episode, ep)
		toks := tok.Tokens(r.Text)
		n.text.AddTokens(id, toks)
		n.episodes.AppendTokens(ep, toks)
		var texts []string
		for j, c := range chunk.Split(r.Text, nil) {
			v, err := emb.Embed(ctx, []string{c.Text})
			require.NoError(t, err)
			require.NoError(t, vecs.Add(ctx, []int64{int64(len(s.owner))}, v))
			s.owner, s.ord = append(s.owner, i), append(s.ord, j)
			texts = append(texts, c.Text)
		}
		s.chunks = append(s.chunks, texts)
	}
	return s
}

func (s *refStore) View(context.Context) (engine.Source[int], error) { return s, nil }
func (s *refStore) Close() error                                     { return nil }

func (s *refStore) Namespaces(_ context.Context, ns string) ([]engine.Namespace[int], error) {
	var out []engine.Namespace[int]
	for name, n := range s.ns {
		if ns == "" || ns == name {
			out = append(out, &refNSView{s, n})
		}
	}
	slices.SortFunc(out, func(a, b engine.Namespace[int]) int { return cmp.Compare(a.Name(), b.Name()) })
	return out, nil
}

func (s *refStore) Vectors(ctx context.Context, scope engine.Scope, qvec []float32, n int, minScore float32) ([]engine.Chunk[int], bool, error) {
	all, err := vdb.SearchMinScore(ctx, s.vecs, qvec, s.vecs.Len(), minScore)
	if err != nil {
		return nil, false, err
	}
	var out []engine.Chunk[int]
	for _, r := range all {
		rec := s.recs[s.owner[r.ID]]
		if (scope.Namespace == "" || rec.Namespace == scope.Namespace) && scope.Holds(&rec) {
			out = append(out, engine.Chunk[int]{Record: s.owner[r.ID], Index: s.ord[r.ID], Score: float64(r.Score)})
		}
	}
	return out[:min(n, len(out))], len(out) <= n, nil
}

func (s *refStore) Docs(_ context.Context, keys []int) ([]engine.Doc, error) {
	out := make([]engine.Doc, len(keys))
	for i, k := range keys {
		out[i] = engine.Doc{Record: s.recs[k], Chunks: s.chunks[k]}
	}
	return out, nil
}

func (s *refStore) Neighbours(_ context.Context, keys []int, n int) (before, after [][]memory.Record, err error) {
	before, after = make([][]memory.Record, len(keys)), make([][]memory.Record, len(keys))
	for i, k := range keys {
		ns := s.ns[s.recs[k].Namespace]
		at := slices.Index(ns.ids, k)
		for j := at - 1; j >= 0 && at-j <= n && ns.episode[j] == ns.episode[at]; j-- {
			before[i] = append([]memory.Record{s.recs[ns.ids[j]]}, before[i]...)
		}
		for j := at + 1; j < len(ns.ids) && j-at <= n && ns.episode[j] == ns.episode[at]; j++ {
			after[i] = append(after[i], s.recs[ns.ids[j]])
		}
	}
	return before, after, nil
}

type refNSView struct {
	s *refStore
	n *refNS
}

func (v *refNSView) Name() string     { return v.n.name }
func (v *refNSView) Key(id int64) int { return v.n.ids[id] }
func (v *refNSView) Speakers() []string {
	var out []string
	for _, i := range v.n.ids {
		if sp := v.s.recs[i].Speaker; sp != "" && !slices.Contains(out, sp) {
			out = append(out, sp)
		}
	}
	slices.Sort(out)
	return out
}

func (v *refNSView) Search(_ context.Context, groups []keyword.QueryGroup, p keyword.Params, k int, scope engine.Scope) ([]keyword.Result, error) {
	return v.n.text.SearchGroups(groups, p, k, func(id int64) bool { return scope.Holds(&v.s.recs[v.n.ids[id]]) }), nil
}

func (v *refNSView) Episodes(_ context.Context, groups []keyword.QueryGroup, p keyword.Params, k int) ([]keyword.Result, error) {
	return v.n.episodes.SearchGroups(groups, p, k, nil), nil
}

func (v *refNSView) DocFreqs(_ context.Context, terms []string) (int, []int, error) {
	df := make([]int, len(terms))
	for i, t := range terms {
		df[i] = v.n.text.DocFreq(t)
	}
	return v.n.text.Len(), df, nil
}

func (v *refNSView) AvgLength() float64 { return v.n.text.AvgLength() }

func (v *refNSView) Links(context.Context, []int64, []int64) error { return nil }

// AllHold: the reference cannot tell cheaply, so the engine asks each
// record's link.
func (v *refNSView) AllHold(time.Time) bool { return false }

func (v *refNSView) EpisodeOf(id int64) int64 { return v.n.episode[id] }

func (v *refNSView) Owner(id int64) (string, string, bool) {
	l, ok := v.Link(id)
	return l.ID, l.Speaker, ok
}

func (v *refNSView) Link(at int64) (engine.Link, bool) {
	if at < 0 || at >= int64(len(v.n.ids)) {
		return engine.Link{}, false
	}
	r := v.s.recs[v.n.ids[at]]
	l := engine.Link{ID: r.ID, Speaker: r.Speaker, Time: r.Time, Since: r.Since(), Until: r.ValidUntil, Episode: v.n.episode[at], Prev: -1, Next: -1}
	if at > 0 && v.n.episode[at-1] == l.Episode {
		l.Prev = at - 1
	}
	if at+1 < int64(len(v.n.ids)) && v.n.episode[at+1] == l.Episode {
		l.Next = at + 1
	}
	return l, true
}

func (v *refNSView) Terms(_ context.Context, id int64) ([]keyword.TermCount, int, error) {
	terms, n := v.n.text.Terms(id)
	return terms, n, nil
}

func (v *refNSView) During(_ context.Context, from, to time.Time, n int) ([]int64, error) {
	var out []int64
	for id, i := range v.n.ids {
		if t := v.s.recs[i].Time; !t.Before(from) && t.Before(to) {
			out = append(out, int64(id))
		}
	}
	return out[:min(len(out), n)], nil
}

func (v *refNSView) Newest(context.Context) (time.Time, error) {
	return v.s.recs[v.n.ids[len(v.n.ids)-1]].Time, nil
}

// conversation is two namespaces of turns with names, a code, questions
// and answers that share few words, cut into episodes by their times.
func conversation() []memory.Record {
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	texts := []struct {
		ns, speaker, text string
		min               int
	}{
		{"team", "Alice", "Where are we going for the team offsite this spring?", 0},
		{"team", "Bob", "We booked the lake house near Annecy for three nights.", 1},
		{"team", "Alice", "Great. Who is driving the rental van?", 2},
		{"team", "Bob", "Carol drives; the van is reserved under ticket OPS-4711.", 3},
		{"team", "Alice", "Did anyone check the weather forecast for the lake?", 26 * 60},
		{"team", "Bob", "Sunny and mild, around eighteen degrees all week.", 26*60 + 5},
		{"team", "Carol", "I will bring the board games and the coffee grinder.", 26*60 + 9},
		{"ops", "Dan", "The lake house invoice arrived, ticket OPS-4711 is closed.", 10},
		{"ops", "Erin", "Annecy in spring is lovely; the van was cheap.", 11},
		{"team", "Bob", "The lake house key is under the blue mat by the door.", 3 * 24 * 60},
		{"team", "Carol", "Thanks! I parked the van behind the house, the weather turned.", 3*24*60 + 11*60},
		{"team", "Alice", "Reminder: the offsite survey about the trip closes Friday.", 5 * 24 * 60},
		{"ops", "Dan", "Who paid for the coffee grinder and the board games?", 5*24*60 + 13*60},
		{"team", "User", "My puppy is called Biscuit, he loved the lake.", 7 * 24 * 60},
		{"team", "assistant", "Biscuit is a lovely name for a puppy, and a puppy at the lake house is fun.", 7*24*60 + 1},
	}
	out := make([]memory.Record, len(texts))
	for i, x := range texts {
		out[i] = memory.Record{ID: fmt.Sprintf("r%02d", i), Namespace: x.ns, Speaker: x.speaker, Text: x.text,
			Time: t0.Add(time.Duration(x.min) * time.Minute)}
	}
	return out
}

// TestSearch_SameThroughEverySource: the same records give the same hits,
// scores, snippets and neighbours through the reference source and
// through memory/longterm's, in every mode, with the default ranking and
// with every keyword signal and each fusion: the engine ranks from what a
// source answers, and nothing else.
func TestSearch_SameThroughEverySource(t *testing.T) {
	ctx := t.Context()
	emb, tok, recs, ref := conversationStore(t)
	rerank := reverse{}
	for name, opts := range map[string][]engine.Option{
		"defaults": nil,
		"everything": {engine.WithFeedback(3, 5, 0.4), engine.WithTimePrior(0.5), engine.WithQueryTF(1.2),
			engine.WithQueryExpansion(func(w string) []string { return map[string][]string{"car": {"van"}}[w] }, 0.5),
			engine.WithBM25(1.5, 0.6), engine.WithSpeakerBoost(1), engine.WithRecency(1, 24*time.Hour), engine.WithAnswerHandOff(0.3)},
		"rrf":      {engine.WithRRF(0)},
		"score":    {engine.WithScoreFusion(0.4, 0.6)},
		"weighted": {engine.WithWeightedFusion(0.5, 0.5), engine.WithQueryIDF(false)},
		"rerank":   {engine.WithReranker(rerank, 8)},
	} {
		t.Run(name, func(t *testing.T) {
			lt, err := longterm.New(ctx, emb, longterm.WithEngine(opts...))
			require.NoError(t, err)
			_, err = lt.AddBatch(ctx, recs)
			require.NoError(t, err)
			e, err := engine.New(emb, tok, opts...)
			require.NoError(t, err)
			for _, q := range []memory.Query{
				{Text: "who drives the van?", K: 5},
				{Text: "OPS-4711", K: 3, Neighbours: 1},
				{Text: "What did Carol bring to the lake house?", K: 10},
				{Text: "what did Bob say yesterday about the weather", K: 4, Namespace: "team"},
				{Text: "lake house", K: 6, From: recs[3].Time, To: recs[12].Time},
				{Text: "puppy name", K: 2, Neighbours: 2},
				{Text: "the lake house we talked about again: where is the van?", K: 5}, // refers back: recency
			} {
				for _, mode := range []memory.Mode{memory.Hybrid, memory.VectorOnly, memory.KeywordOnly} {
					for _, min := range []float32{0, -1} { // the default minimum relevance, and none
						q.Mode, q.MinRelevance = mode, min
						want, err := lt.Query(ctx, q)
						require.NoError(t, err)
						got, err := engine.Search(ctx, e, ref, q)
						require.NoError(t, err)
						if min < 0 {
							require.NotEmpty(t, want, "%q %v", q.Text, mode)
						}
						assert.Equal(t, want, got, "%q %v min relevance %v", q.Text, mode, min)
					}
				}
			}
		})
	}
}

// conversationStore returns hash:256, the tokenizer, conversation()'s
// records and a refStore of them.
func conversationStore(t *testing.T) (embed.Embedder, keyword.Tokenizer, []memory.Record, *refStore) {
	emb, err := embed.Open("hash:256")
	require.NoError(t, err)
	tok, err := keyword.NewTokenizer()
	require.NoError(t, err)
	recs := conversation()
	return emb, tok, recs, newRefStore(t, emb, tok, recs)
}

// reverse is a reranker that reverses the candidates.
type reverse struct{}

func (reverse) Rerank(_ context.Context, _ string, hits []memory.Hit) ([]memory.Hit, error) {
	out := slices.Clone(hits)
	slices.Reverse(out)
	return out, nil
}

func TestNew_ChecksOptions(t *testing.T) {
	emb, err := embed.Open("hash:64")
	require.NoError(t, err)
	tok, err := keyword.NewTokenizer()
	require.NoError(t, err)
	for _, o := range []engine.Option{
		engine.WithBM25(-1, 0.5), engine.WithBM25(1.2, 5), engine.WithTopK(0), engine.WithMinScore(2),
		engine.WithScoreFusion(0, 0), engine.WithNeighbourWeight(1.5), engine.WithEpisodeWeight(-1),
		engine.WithReranker(nil, 3), engine.WithFeedback(3, 3, math.Inf(1)), engine.WithMode(memory.Mode(7)),
		engine.WithRecency(-1, 0), engine.WithRecency(math.NaN(), 0), engine.WithRecency(1, -time.Hour),
		engine.WithAnswerHandOff(-0.1), engine.WithAnswerHandOff(math.NaN()), engine.WithAnswerHandOff(1.5),
	} {
		_, err := engine.New(emb, tok, o)
		assert.ErrorIs(t, err, memory.ErrInvalidArgument)
		require.Error(t, engine.Check(o), "Check agrees with New")
		assert.Contains(t, err.Error(), engine.Check(o).Error())
	}
	_, err = engine.New(nil, tok)
	assert.ErrorIs(t, err, memory.ErrInvalidArgument)
}

// TestSearch_TokenBudget: with MaxTokens the hits kept are those of the
// search without it, in its order, each that fits what is left of the
// budget, with its cost (text and neighbours) in Tokens; none is left
// out that would have fit.
func TestSearch_TokenBudget(t *testing.T) {
	ctx := t.Context()
	emb, err := embed.Open("hash:256")
	require.NoError(t, err)
	tok, err := keyword.NewTokenizer()
	require.NoError(t, err)
	ref := newRefStore(t, emb, tok, conversation())
	e, err := engine.New(emb, tok)
	require.NoError(t, err)
	q := memory.Query{Text: "the lake house van weather", K: 10, MinRelevance: -1, Neighbours: 1}
	all, err := engine.Search(ctx, e, ref, q)
	require.NoError(t, err)
	require.Greater(t, len(all), 3)
	for _, budget := range []int{1, 20, 45, 90, 10000} {
		q.MaxTokens = budget
		got, err := engine.Search(ctx, e, ref, q)
		require.NoError(t, err)
		assert.LessOrEqual(t, memory.Tokens(got), budget)
		left, j := budget, 0
		for _, h := range all {
			cost := tokens.Default.Count(h.Text)
			for _, r := range slices.Concat(h.Before, h.After) {
				cost += tokens.Default.Count(r.Text)
			}
			if cost > left {
				continue
			}
			left -= cost
			require.Less(t, j, len(got), "budget %d: %q fits and is kept", budget, h.ID)
			assert.Equal(t, h.ID, got[j].ID, "budget %d", budget)
			assert.Equal(t, cost, got[j].Tokens, "budget %d", budget)
			j++
		}
		assert.Len(t, got, j, "budget %d", budget)
	}
	q.MaxTokens = -1
	_, err = engine.Search(ctx, e, ref, q)
	assert.ErrorIs(t, err, memory.ErrInvalidArgument)
}

// TestSearch_RelevanceProperty: over random stores and queries, in every
// mode and at every minimum, each hit's relevance is in [0, 1], at or
// above the minimum, and each hit matched something (a keyword score or
// a positive cosine); a higher minimum keeps a prefix-ordered subset of a
// lower one's hits.
func TestSearch_RelevanceProperty(t *testing.T) {
	ctx := t.Context()
	emb, err := embed.Open("hash:128")
	require.NoError(t, err)
	tok, err := keyword.NewTokenizer()
	require.NoError(t, err)
	e, err := engine.New(emb, tok)
	require.NoError(t, err)
	words := strings.Fields("apple harbor violet engine quartz meadow lantern copper falcon ribbon sierra tundra orbit maple pepper canyon")
	rng := rand.New(rand.NewPCG(11, 12))
	sentence := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = words[rng.IntN(len(words))]
		}
		return strings.Join(ws, " ")
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for store := range 6 {
		var recs []memory.Record
		for i := range 20 + rng.IntN(60) {
			recs = append(recs, memory.Record{ID: fmt.Sprintf("s%d-%03d", store, i), Namespace: []string{"a", "b", "c"}[rng.IntN(3)],
				Speaker: []string{"Ann", "Bob", ""}[rng.IntN(3)], Text: sentence(3 + rng.IntN(12)), Time: t0.Add(time.Duration(rng.IntN(100)) * time.Hour)})
		}
		ref := newRefStore(t, emb, tok, recs)
		for range 25 {
			q := memory.Query{Text: sentence(1+rng.IntN(5)) + " " + []string{"", "zebra", "xylophone", "of Zebra", "Ann"}[rng.IntN(5)], K: 1 + rng.IntN(15),
				Namespace: []string{"", "a", "b"}[rng.IntN(3)]}
			for _, mode := range []memory.Mode{memory.Hybrid, memory.VectorOnly, memory.KeywordOnly} {
				q.Mode = mode
				var prev []memory.Hit
				prevMin := float32(-1)
				for _, min := range []float32{-1, 0, 0.2, 0.5, 0.8} {
					q.MinRelevance, q.Explain = min, true
					hits, err := engine.Search(ctx, e, ref, q)
					require.NoError(t, err)
					for _, h := range hits {
						assert.True(t, h.Relevance >= 0 && h.Relevance <= 1, "%q: relevance %v", q.Text, h.Relevance)
						if min > 0 {
							assert.GreaterOrEqual(t, h.Relevance, min, "%q %v: %s below the minimum", q.Text, mode, h.ID)
						}
						assert.True(t, h.Explain.Keyword > 0 || h.Explain.Vector > 0, "%q %v: %s matched nothing", q.Text, mode, h.ID)
					}
					eff := min // 0 is the default
					if min == 0 {
						eff = engine.DefaultMinRelevance
					}
					if prev != nil && eff >= prevMin {
						kept := map[string]bool{}
						for _, h := range prev {
							kept[h.ID] = true
						}
						for _, h := range hits {
							if h.Relevance >= min && len(prev) < q.K {
								assert.True(t, kept[h.ID], "%q %v: a higher minimum keeps a subset: %s", q.Text, mode, h.ID)
							}
						}
					}
					prev, prevMin = hits, eff
				}
			}
		}
	}
}

// TestSearch_AnswerHandOff: a question that matches the turn asking for
// what it wants finds the turn that answers, first, with the hand-off;
// without it (WithAnswerHandOff(0)) the asking turn comes first. A turn that
// tells, not asks, lends nothing to the next (a request in the
// imperative, "Check the license…", asks), a query that copies the
// question finds the question, and a query that names the asker (first
// person: the user) keeps the asker's turn first.
func TestSearch_AnswerHandOff(t *testing.T) {
	ctx := t.Context()
	emb, err := embed.Open("hash:256")
	require.NoError(t, err)
	t0 := time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)
	say := func(i int, speaker, text string) memory.Record {
		return memory.Record{ID: fmt.Sprintf("t%d", i), Namespace: "chat", Speaker: speaker, Text: text, Time: t0.Add(time.Duration(i) * time.Minute)}
	}
	recs := []memory.Record{
		say(0, "User", "I have been cooking a lot lately."),
		say(1, "Assistant", "That is great, cooking is a wonderful hobby."),
		say(2, "User", "Do you have any recommended dishes for dinner?"),
		say(3, "Assistant", "Try mapo tofu and kung pao chicken tonight."),
		say(4, "User", "I went hiking in the hills on Sunday."),
		say(5, "Assistant", "Sounds lovely, enjoy the fresh air."),
		say(6, "User", "Check the license of the model before we ship it."),
		say(7, "Assistant", "It's Apache 2.0, so redistribution is fine."),
	}
	mode := memory.KeywordOnly
	top := func(opts []engine.Option, text string) []string {
		lt, err := longterm.New(ctx, emb, longterm.WithEngine(opts...))
		require.NoError(t, err)
		_, err = lt.AddBatch(ctx, recs)
		require.NoError(t, err)
		hits, err := lt.Query(ctx, memory.Query{Text: text, K: 2, Mode: mode, MinRelevance: -1})
		require.NoError(t, err)
		return hitIDs(hits)
	}
	q := "What dishes did you recommend to me?"
	assert.Equal(t, []string{"t3", "t2"}, top([]engine.Option{engine.WithAnswerHandOff(0.1)}, q), "the answer first")
	assert.Equal(t, "t2", top([]engine.Option{engine.WithAnswerHandOff(0)}, q)[0], "off: the asking turn first")
	assert.Equal(t, "t4", top([]engine.Option{engine.WithAnswerHandOff(0.1)}, "Where did I go hiking?")[0], "a turn that tells keeps its place")
	assert.Equal(t, []string{"t7", "t6"}, top([]engine.Option{engine.WithAnswerHandOff(0.1)}, "What license does the model have?"),
		"a request in the imperative asks too: its answer first")
	assert.Equal(t, "t2", top([]engine.Option{engine.WithAnswerHandOff(0.1)}, "do you have any recommended dishes for dinner")[0],
		"a query that is the question itself looks it up")
	mine := "Which dishes for dinner did I ask to be recommended?"
	assert.Equal(t, top([]engine.Option{engine.WithAnswerHandOff(0)}, mine), top([]engine.Option{engine.WithAnswerHandOff(0.1)}, mine),
		"a first-person query names the user: the user's question is not handed to the assistant's answer")

	// Hybrid: the vector path ranks the asking turn, whose words are the
	// query's, far above the answer; the answer takes the question's
	// cosine with its score, so that fusing the paths does not undo the
	// hand-off. A lookup of the question still finds the question.
	mode = memory.Hybrid
	assert.Equal(t, []string{"t3", "t2"}, top([]engine.Option{engine.WithAnswerHandOff(0.1)}, q), "hybrid: the answer first")
	assert.Equal(t, "t2", top([]engine.Option{engine.WithAnswerHandOff(0)}, q)[0], "hybrid, off: the asking turn first")
	assert.Equal(t, "t2", top([]engine.Option{engine.WithAnswerHandOff(0.1)}, "do you have any recommended dishes for dinner")[0],
		"hybrid: a query that is the question itself looks it up")
	assert.Equal(t, "t2", top([]engine.Option{engine.WithAnswerHandOff(0.1)}, "any recommended dishes for dinner, do you have")[0],
		"hybrid: a query that holds nearly all the question's words looks it up")
}

// TestSearch_ExplainOwnAndAnswers: an explanation tells what a hit's own
// words score on the keyword path from what the turns around it lend, and
// names the question a hit was handed its score from. "What dishes did
// you recommend to me?" finds the answer t3 through the question t2 (t3
// holds none of its words), and t2 by its own words.
func TestSearch_ExplainOwnAndAnswers(t *testing.T) {
	ctx := t.Context()
	lt, t0 := newHashLT(t, "hash:256")
	say := func(i int, speaker, text string) memory.Record {
		return memory.Record{ID: fmt.Sprintf("t%d", i), Speaker: speaker, Text: text, Time: t0.Add(time.Duration(i) * time.Minute)}
	}
	_, err := lt.AddBatch(ctx, []memory.Record{
		say(0, "User", "I have been cooking a lot lately."),
		say(1, "Assistant", "That is great, cooking is a wonderful hobby."),
		say(2, "User", "Do you have any recommended dishes for dinner?"),
		say(3, "Assistant", "Try mapo tofu and kung pao chicken tonight."),
	})
	require.NoError(t, err)
	hits, err := lt.Query(ctx, memory.Query{Text: "What dishes did you recommend to me?", K: 2, Mode: memory.KeywordOnly, MinRelevance: -1, Explain: true})
	require.NoError(t, err)
	require.Len(t, hits, 2)
	answer, question := hits[0], hits[1]
	require.Equal(t, "t3", answer.ID)
	require.Equal(t, "t2", question.ID)
	assert.Zero(t, answer.Explain.OwnKeyword, "t3 holds none of the query's words")
	assert.Positive(t, answer.Explain.Keyword)
	assert.Empty(t, answer.Explain.Terms)
	assert.Equal(t, "Do you have any recommended dishes for dinner?", answer.Explain.Answers)
	assert.Positive(t, question.Explain.OwnKeyword)
	assert.Empty(t, question.Explain.Answers)
	assert.ElementsMatch(t, []string{"dish", "recommend", "you"}, question.Explain.Terms)
}

// newHashLT returns a long-term memory over the hash embedder spec and
// the time its tests' records start at.
func newHashLT(t *testing.T, spec string) (*longterm.Memory, time.Time) {
	emb, err := embed.Open(spec)
	require.NoError(t, err)
	lt, err := longterm.New(t.Context(), emb)
	require.NoError(t, err)
	return lt, time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)
}

// hitIDs returns the ids of hits, in order (nil for none).
func hitIDs(hits []memory.Hit) []string {
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.ID)
	}
	return ids
}

// newNotes returns a memory of eight notes of one user's (n0 to n7, its
// sister, allergy, budget, colour, seat, painters, dentist and dog), each
// written step after the one before.
func newNotes(t *testing.T, step time.Duration) *longterm.Memory {
	lt, t0 := newHashLT(t, "hash:512")
	addNumbered(t, lt, t0, step, "n", "",
		"My sister Anna lives in Lisbon and works as a nurse.", "I'm allergic to peanuts.",
		"Our team budget for Q3 is 40,000 euros.", "My favourite color is blue.",
		"I prefer the window seat on long flights.", "You recommended Renaissance painters: Botticelli, Raphael and Titian.",
		"The dentist appointment is on March 3rd at 10am.", "My dog Biscuit is a three-year-old beagle.")
	return lt
}

// addNumbered adds texts to lt, the i-th as record prefix+i said by
// speaker ("": a note) at t0 + i·step.
func addNumbered(t *testing.T, lt *longterm.Memory, t0 time.Time, step time.Duration, prefix, speaker string, texts ...string) {
	t.Helper()
	for i, text := range texts {
		_, err := lt.Add(t.Context(), memory.Record{ID: fmt.Sprint(prefix, i), Speaker: speaker, Text: text, Time: t0.Add(time.Duration(i) * step)})
		require.NoError(t, err)
	}
}

// TestSearch_ShareHoldsSpeaker: the best hit's share of the query's words
// (Explanation.BestShare) counts its speaker's name as a word it holds, so
// "When does Maria run?" finds all it asks in Maria's "I run every
// morning." and half of it in Tom's same words; the relevance follows.
func TestSearch_ShareHoldsSpeaker(t *testing.T) {
	ctx := t.Context()
	lt, t0 := newHashLT(t, "hash:256")
	_, err := lt.AddBatch(ctx, []memory.Record{
		{ID: "m1", Namespace: "maria", Speaker: "Maria", Text: "I run every morning.", Time: t0},
		{ID: "m2", Namespace: "maria", Speaker: "Maria", Text: "The bakery opens at seven.", Time: t0.Add(time.Minute)},
		{ID: "t1", Namespace: "tom", Speaker: "Tom", Text: "I run every morning.", Time: t0},
		{ID: "t2", Namespace: "tom", Speaker: "Tom", Text: "The bakery opens at seven.", Time: t0.Add(time.Minute)},
	})
	require.NoError(t, err)
	best := func(ns string) memory.Hit {
		hits, err := lt.Query(ctx, memory.Query{Text: "When does Maria run?", Namespace: ns, K: 1, Mode: memory.KeywordOnly, MinRelevance: -1, Explain: true})
		require.NoError(t, err)
		require.Len(t, hits, 1)
		return hits[0]
	}
	m, tom := best("maria"), best("tom")
	assert.Equal(t, "m1", m.ID)
	assert.Equal(t, "t1", tom.ID)
	assert.InDelta(t, 1.0, m.Explain.BestShare, 1e-9, "maria and run: Maria said it")
	assert.InDelta(t, 0.5, tom.Explain.BestShare, 1e-9, "run only: nobody named Maria speaks here")
	assert.Greater(t, m.Relevance, tom.Relevance)
}

// TestSearch_ExplainSpeakers: a hit's explanation names the speakers the
// query asks about in its namespace, whose records the keyword path
// prefers: a speaker it names, the user for a question in the first
// person, the other side for a question about the answerer's words;
// nobody for a question about nobody in particular.
func TestSearch_ExplainSpeakers(t *testing.T) {
	ctx := t.Context()
	lt, t0 := newHashLT(t, "hash:256")
	_, err := lt.AddBatch(ctx, []memory.Record{
		{ID: "u0", Namespace: "chat", Speaker: "user", Text: "I'm off to Florence and want some painters recommended to me.", Time: t0},
		{ID: "a0", Namespace: "chat", Speaker: "assistant", Text: "Then I recommend Botticelli and Titian: both painters hang in the Uffizi.", Time: t0.Add(time.Minute)},
		{ID: "u1", Namespace: "chat", Speaker: "user", Text: "My dog Biscuit is a beagle.", Time: t0.Add(2 * time.Minute)},
		{ID: "m0", Namespace: "team", Speaker: "Maria", Text: "The painters start on Monday.", Time: t0},
		{ID: "t0", Namespace: "team", Speaker: "Tom", Text: "Maria, the painters need the keys.", Time: t0.Add(time.Minute)},
		{ID: "i0", Namespace: "intro", Speaker: "user", Text: "Hello, my name is Priya.", Time: t0},
		{ID: "i1", Namespace: "intro", Speaker: "assistant", Text: "Nice to meet you, Priya! Which tests do you like?", Time: t0.Add(time.Minute)},
		{ID: "i2", Namespace: "intro", Speaker: "user", Text: "I prefer table-driven tests.", Time: t0.Add(2 * time.Minute)},
	})
	require.NoError(t, err)
	priya := map[string][]string{"user": {"Priya"}}
	for _, tt := range []struct {
		query, ns, first string
		speakers         []string
		aliases          map[string][]string
	}{
		{"What painters did you recommend to me?", "chat", "a0", []string{"assistant"}, nil},
		{"What is my dog's name?", "chat", "u1", []string{"user"}, nil},
		{"painters in Florence", "chat", "u0", nil, nil},
		{"When did Maria say the painters start?", "team", "m0", []string{"Maria"}, nil},
		{"Which tests does Priya prefer?", "intro", "i2", []string{"user"}, priya},
		{"Which tests did you ask Priya about?", "intro", "i1", []string{"assistant"}, priya},
	} {
		hits, err := lt.Query(ctx, memory.Query{Text: tt.query, Namespace: tt.ns, Mode: memory.KeywordOnly, MinRelevance: -1, Explain: true})
		require.NoError(t, err)
		require.NotEmpty(t, hits, tt.query)
		assert.Equal(t, tt.first, hits[0].ID, tt.query)
		for _, h := range hits {
			assert.Equal(t, tt.speakers, h.Explain.Speakers, "%q: %s", tt.query, h.ID)
			assert.Equal(t, tt.aliases, h.Explain.Aliases, "%q: %s", tt.query, h.ID)
		}
	}
}

// TestSearch_UnknownNames: a query that names something (ranking.Names)
// its namespace never mentions keeps unknownNameFactor of its relevance
// (the same query with the name in lower case, the same words to the
// paths, keeps all of it), and its explanation names it; a namespace that
// mentions it, or whose speaker bears it, is not marked, and a search of
// every namespace marks each hit by its own namespace.
func TestSearch_UnknownNames(t *testing.T) {
	ctx := t.Context()
	lt, t0 := newHashLT(t, "hash:256")
	_, err := lt.AddBatch(ctx, []memory.Record{
		{ID: "o1", Namespace: "ops", Speaker: "Maria", Text: "The capital allocation plan is final.", Time: t0},
		{ID: "o2", Namespace: "ops", Speaker: "Tom", Text: "Badge NW-20417 belongs to the night shift.", Time: t0.Add(time.Minute)},
		{ID: "o3", Namespace: "ops", Speaker: "Maria", Text: "The night shift starts at ten.", Time: t0.Add(2 * time.Minute)},
		{ID: "g1", Namespace: "geo", Speaker: "Ann", Text: "The capital of Mongolia is Ulaanbaatar.", Time: t0},
		{ID: "g2", Namespace: "geo", Speaker: "Ann", Text: "The steppe is cold in winter.", Time: t0.Add(time.Minute)},
	})
	require.NoError(t, err)
	best := func(text, ns string) memory.Hit {
		t.Helper()
		hits, err := lt.Query(ctx, memory.Query{Text: text, Namespace: ns, K: 3, MinRelevance: -1, Explain: true})
		require.NoError(t, err)
		require.NotEmpty(t, hits, "%q in %q", text, ns)
		return hits[0]
	}
	named, plain := best("What is the capital of Mongolia?", "ops"), best("What is the capital of mongolia?", "ops")
	assert.Equal(t, "o1", named.ID)
	assert.Equal(t, []string{"Mongolia"}, named.Explain.UnknownNames)
	assert.Empty(t, plain.Explain.UnknownNames, "a word in lower case is not a name")
	assert.InDelta(t, 0.72*plain.Relevance, named.Relevance, 1e-6, "the same words, one named thing the namespace never mentions")

	assert.Empty(t, best("What is the capital of Mongolia?", "geo").Explain.UnknownNames)
	assert.Empty(t, best("When does Maria's night shift start?", "ops").Explain.UnknownNames, "Maria speaks in ops")
	assert.Equal(t, []string{"NW-20417"}, best("Is NW-20417 cold in winter?", "geo").Explain.UnknownNames)
	assert.Empty(t, best("Who holds badge NW-20417?", "ops").Explain.UnknownNames)

	hits, err := lt.Query(ctx, memory.Query{Text: "What is the capital of Mongolia?", K: 5, MinRelevance: -1, Explain: true})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "g1", hits[0].ID, "the namespace that mentions it first")
	for _, h := range hits {
		if h.Namespace == "ops" {
			assert.Equal(t, []string{"Mongolia"}, h.Explain.UnknownNames, h.ID)
		} else {
			assert.Empty(t, h.Explain.UnknownNames, h.ID)
		}
	}
}

// TestSearch_SnippetsAsSearched: a hit's snippets and matched terms are
// those of the query the paths searched with. The keyword path leaves
// question words out, so "where" does not make "Where are you?" a
// snippet or a matched term.
func TestSearch_SnippetsAsSearched(t *testing.T) {
	ctx := t.Context()
	lt, t0 := newHashLT(t, "hash:256")
	_, err := lt.AddBatch(ctx, []memory.Record{
		{ID: "anna", Speaker: "Tom", Text: "Where are you? Anna went home.", Time: t0},
		{ID: "berlin", Speaker: "Tom", Text: "I fly to Berlin on March 14.", Time: t0.Add(time.Minute)},
	})
	require.NoError(t, err)
	hits, err := lt.Query(ctx, memory.Query{Text: "Where did Anna go?", K: 1, Mode: memory.KeywordOnly, MinRelevance: -1, Explain: true})
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Equal(t, "anna", hits[0].ID)
	assert.Equal(t, []string{"Anna went home."}, hits[0].Snippets)
	assert.Equal(t, []string{"anna"}, hits[0].Explain.Terms)
}

// TestSearch_ZeroCosineFoundNothing: over the bundled example
// conversation, a hit the vector path ranked with a cosine of 0 (a
// lexical vector sharing no word with the query) is not said to be found
// by that path, and none of its chunks is a snippet for it: every
// snippet shares a searched word with the query or has a positive
// cosine. "when is my flight to Berlin?" ranks third a turn that only
// its neighbour's words lend a score.
func TestSearch_ZeroCosineFoundNothing(t *testing.T) {
	ctx := t.Context()
	lt, t0 := newHashLT(t, "hash:512")
	f, err := os.Open("../../testdata/conversation.jsonl")
	require.NoError(t, err)
	defer f.Close()
	var recs []memory.Record
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var line struct{ Text string }
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line))
		recs = append(recs, memory.Record{ID: fmt.Sprint("r", len(recs)), Text: line.Text, Time: t0.Add(time.Duration(len(recs)) * time.Second)})
	}
	_, err = lt.AddBatch(ctx, recs)
	require.NoError(t, err)
	tok, err := keyword.NewTokenizer()
	require.NoError(t, err)
	zero := 0
	for _, q := range []string{"when is my flight to Berlin?", "which cluster is production?", "what's my sister's name?", "who approves deploys?"} {
		hits, err := lt.Query(ctx, memory.Query{Text: q, K: 10, MinRelevance: -1, Explain: true})
		require.NoError(t, err)
		for _, h := range hits {
			found := slices.Contains(h.Explain.Paths, "vector")
			assert.Equal(t, h.Explain.Vector > 0, found, "%q %s: cosine %v, paths %v", q, h.ID, h.Explain.Vector, h.Explain.Paths)
			if h.Explain.Vector > 0 {
				continue
			}
			zero++
			for _, sn := range h.Snippets {
				assert.NotEmpty(t, ranking.Shared(tok, ranking.WithoutQuestionWords(q), sn), "%q %s: snippet %q shares no word", q, h.ID, sn)
			}
		}
	}
	assert.Positive(t, zero, "some hit has a cosine of 0")
}

// searchStore is refStore as an engine.SearchStore, recording what each
// view was opened for.
type searchStore struct {
	*refStore
	views []string
}

func (s *searchStore) ViewNamespace(ctx context.Context, ns string) (engine.Source[int], error) {
	s.views = append(s.views, "namespace")
	return s.refStore, nil
}

func (s *searchStore) ViewSearch(ctx context.Context, ns string, both bool) (engine.Source[int], error) {
	s.views = append(s.views, fmt.Sprint("both=", both))
	return s.refStore, nil
}

// TestSearch_ViewForPaths: a store that readies views for a search's
// paths (engine.SearchStore) is asked for both only by a hybrid search,
// and for at most one by a search of one path, by the view a search
// with neighbours opens again after a reranker, and by Similar; the
// results are those of the plain store.
func TestSearch_ViewForPaths(t *testing.T) {
	ctx := t.Context()
	emb, tok, recs, ref := conversationStore(t)
	st := &searchStore{refStore: ref}
	e, err := engine.New(emb, tok)
	require.NoError(t, err)
	for mode, want := range map[memory.Mode]string{memory.Hybrid: "both=true", memory.VectorOnly: "both=false", memory.KeywordOnly: "both=false"} {
		st.views = nil
		q := memory.Query{Text: "who drives the van?", K: 5, Mode: mode}
		got, err := engine.Search(ctx, e, st, q)
		require.NoError(t, err)
		plain, err := engine.Search(ctx, e, ref, q)
		require.NoError(t, err)
		assert.Equal(t, plain, got, "%v", mode)
		assert.Equal(t, []string{want}, st.views, "%v", mode)
	}
	rr, err := engine.New(emb, tok, engine.WithReranker(reverse{}, 8))
	require.NoError(t, err)
	st.views = nil
	_, err = engine.Search(ctx, rr, st, memory.Query{Text: "puppy name", K: 2, Neighbours: 1})
	require.NoError(t, err)
	assert.Equal(t, []string{"both=true", "both=false"}, st.views, "a reranked search with neighbours opens a second view")
	st.views = nil
	_, err = engine.Search(ctx, e, st, memory.Query{Text: "?!"})
	require.NoError(t, err)
	assert.Equal(t, []string{"both=false"}, st.views, "a query without a word")
	st.views = nil
	vec, err := embed.EmbedQuery(ctx, emb, recs[0].Text)
	require.NoError(t, err)
	_, err = engine.Similar(ctx, e, st, recs[0], recs[0].Text, vec)
	require.NoError(t, err)
	assert.Equal(t, []string{"both=false"}, st.views, "Similar")
}

// TestSearch_VectorFloor: among a few notes, a note the vector path ranks
// at or below its median cosine (it shares the query's function words,
// "where does", with every text) is not returned beside the one that
// answers, and a small store's note that answers a question most of whose
// words it does not hold is (the gate reads the namespace's size).
func TestSearch_VectorFloor(t *testing.T) {
	ctx := t.Context()
	lt, t0 := newHashLT(t, "hash:512")
	addNumbered(t, lt, t0, time.Minute, "n", "",
		"Some Renaissance painters, such as Leonardo and Raphael, can give you inspiration.",
		"I'm allergic to peanuts.",
		"My flight to Berlin leaves on March 3rd.",
		"Our team budget for Q3 is 40,000 euros.",
		"The dentist appointment moved to Thursday.",
		"Anna lives in Lisbon.")
	ids := func(q string) []string {
		t.Helper()
		hits, err := lt.Query(ctx, memory.Query{Text: q})
		require.NoError(t, err)
		return hitIDs(hits)
	}
	assert.Equal(t, []string{"n5"}, ids("Where does Anna live?"))
	assert.Equal(t, []string{"n1"}, ids("What am I allergic to?"))
	if got := ids("What painters did you recommend to me?"); assert.NotEmpty(t, got) {
		assert.Equal(t, "n0", got[0])
	}
	assert.Empty(t, ids("What is the capital of Peru?"))
}

// TestSearch_VectorNoise: among a few notes, one that only the vector path
// found (by the offline embedder's hash of words it shares with none of
// the query's) is not relevant: "where does my sister live?" brought back
// "I prefer the window seat on long flights." at 0.58.
func TestSearch_VectorNoise(t *testing.T) {
	ctx := t.Context()
	lt := newNotes(t, time.Minute)
	hits, err := lt.Query(ctx, memory.Query{Text: "where does my sister live?", MinRelevance: -1, Explain: true})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "n0", hits[0].ID)
	seat := slices.IndexFunc(hits, func(h memory.Hit) bool { return h.ID == "n4" })
	require.GreaterOrEqual(t, seat, 0, "the vector path ranks every note")
	assert.Zero(t, hits[seat].Explain.OwnKeyword, "no word of the query")
	assert.Positive(t, hits[seat].Explain.Vector, "a cosine from the hash of other words")
	assert.Zero(t, hits[seat].Relevance, "found by the vector path alone: not relevant")
	hits, err = lt.Query(ctx, memory.Query{Text: "where does my sister live?"})
	require.NoError(t, err)
	assert.False(t, slices.ContainsFunc(hits, func(h memory.Hit) bool { return h.ID == "n4" }), "left out at the default minimum")
	// The notes that share its "is" (and the trigrams of "appointment"'s
	// neighbours) are found by the vector path alone.
	hits, err = lt.Query(ctx, memory.Query{Text: "when is the appointment?"})
	require.NoError(t, err)
	assert.Equal(t, []string{"n6"}, hitIDs(hits))
	// The "am" of 10am is a time of day, not the word of the question.
	hits, err = lt.Query(ctx, memory.Query{Text: "what am I allergic to?"})
	require.NoError(t, err)
	assert.Equal(t, []string{"n1"}, hitIDs(hits))
}

// TestSearch_Monologue: in a namespace where one speaker says everything
// (a user's notes, kept with their speaker), a record's neighbours do not
// lend it relevance, as they do not lend a note without a speaker: "who
// lives in Porto?" brings the Porto note alone, not the notes said the
// minute before and after it. The same records said in turn by two
// speakers are a conversation, where a turn's neighbours speak for it (a
// question for its answer), and there the Porto note's neighbours keep
// the relevance their loan gives them.
func TestSearch_Monologue(t *testing.T) {
	ctx := t.Context()
	lt, t0 := newHashLT(t, "hash:512")
	recs := memorytest.NoteRecords(t0)
	_, err := lt.AddBatch(ctx, recs)
	require.NoError(t, err)
	query := func(ns string) map[string]memory.Hit {
		t.Helper()
		hits, err := lt.Query(ctx, memory.Query{Text: "who lives in Porto?", Namespace: ns, Explain: true})
		require.NoError(t, err)
		out := map[string]memory.Hit{}
		for _, h := range hits {
			out[h.ID] = h
		}
		return out
	}
	notes := query("notes")
	assert.Len(t, notes, 1, "the Porto note alone: %v", notes)
	assert.Contains(t, notes, "m3")
	chat := query("chat")
	require.Contains(t, chat, "c3")
	for _, id := range []string{"c2", "c4"} {
		if assert.Contains(t, chat, id, "a neighbour of the answer, in a conversation") {
			assert.Zero(t, chat[id].Explain.OwnKeyword, "no word of the query of its own")
			assert.Greater(t, chat[id].Relevance, chat["c3"].Relevance/2, "what its neighbour lends it counts")
		}
	}
}

// TestSearch_VectorAlone: among ten notes, one that shares no word with
// the query and that the offline embedder's vector path ranks second (a
// cosine of 0.07 against the answer's 0.67, from hashed features of other
// words) has relevance 0: "what am I allergic to?" brings back the
// allergy alone, where "Book club reads Middlemarch next month." came
// second at 0.31; and so has one whose cosine is the best of all ("I run
// 5k every Tuesday and Thursday." for "what do I eat?": the query's "I"
// in a short text), which came at 0.77. Under score fusion, the fusion of
// a model's vectors, a hit found by the vector path alone is relevant by
// its share of the best cosine.
func TestSearch_VectorAlone(t *testing.T) {
	alone := func(opts ...engine.Option) memory.Hit {
		t.Helper()
		hits := queryTenNotes(t, memory.Query{Text: "what am I allergic to?", MinRelevance: -1, Explain: true}, opts...)
		require.GreaterOrEqual(t, len(hits), 2)
		assert.Equal(t, "n6", hits[0].ID)
		assert.Equal(t, "n8", hits[1].ID, "the vector path ranks the book club second")
		assert.Zero(t, hits[1].Explain.OwnKeyword, "no word of the query")
		return hits[1]
	}
	assert.Zero(t, alone().Relevance, "shares no word with the query")
	score := alone(engine.WithScoreFusion(engine.DefaultVectorWeight, engine.DefaultKeywordWeight))
	assert.Greater(t, score.Relevance, float32(0.2), "under score fusion, its fourth root")

	lt, t0 := newHashLT(t, "hash:512")
	addNumbered(t, lt, t0, time.Minute, "r", "",
		"My cat is called Miso and she eats salmon twice a day.", "I run 5k every Tuesday and Thursday.",
		"The wifi password at the cabin is pinecone42.", "Our team uses PostgreSQL for the billing service.")
	hits, err := lt.Query(t.Context(), memory.Query{Text: "what do I eat?", MinRelevance: -1, Explain: true})
	require.NoError(t, err)
	run := slices.IndexFunc(hits, func(h memory.Hit) bool { return h.ID == "r1" })
	require.GreaterOrEqual(t, run, 0)
	assert.Equal(t, 1, hits[run].VectorRank, "the best cosine")
	assert.Zero(t, hits[run].Explain.OwnKeyword)
	assert.Zero(t, hits[run].Relevance)
	hits, err = lt.Query(t.Context(), memory.Query{Text: "what do I eat?"})
	require.NoError(t, err)
	if assert.Len(t, hits, 1) {
		assert.Equal(t, "r0", hits[0].ID)
	}
}

// queryTenNotes asks q of a long-term memory over hash:512 with the
// engine's opts, holding ten unrelated notes (n0 … n9), a minute apart.
func queryTenNotes(t *testing.T, q memory.Query, opts ...engine.Option) []memory.Hit {
	t.Helper()
	ctx := t.Context()
	t0 := time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)
	var recs []memory.Record
	for i, text := range []string{
		"My cat is called Miso and she eats salmon twice a day.", "The wifi password at the cabin is pinecone42.",
		"Dentist appointment moved to March 3rd at 10am.", "I prefer aisle seats on long flights.",
		"My sister Ana lives in Porto.", "Quarterly report is due on the last Friday of June.",
		"Allergic to penicillin.", "The car needs new tyres before winter.",
		"Book club reads Middlemarch next month.", "Gym membership renews in September.",
	} {
		recs = append(recs, memory.Record{ID: fmt.Sprint("n", i), Text: text, Time: t0.Add(time.Duration(i) * time.Minute)})
	}
	emb, err := embed.Open("hash:512")
	require.NoError(t, err)
	lt, err := longterm.New(ctx, emb, longterm.WithEngine(opts...))
	require.NoError(t, err)
	t.Cleanup(func() { lt.Close() })
	_, err = lt.AddBatch(ctx, recs)
	require.NoError(t, err)
	hits, err := lt.Query(ctx, q)
	require.NoError(t, err)
	return hits
}

// TestSearch_FunctionWordsAlone: among ten notes, one whose words share
// only a function word with the query ("my" of "where does my sister
// live?" in "My cat is called Miso …") counts its share of the best as it
// is, as a hit only its cosine speaks for: the sister's note alone is
// returned, where the cat came second at 0.50. In keyword mode alike;
// under score fusion, where a model's cosine may speak for it, the root
// stays.
func TestSearch_FunctionWordsAlone(t *testing.T) {
	q := memory.Query{Text: "where does my sister live?", Explain: true}
	assert.Equal(t, []string{"n4"}, hitIDs(queryTenNotes(t, q)))
	kq := q
	kq.Mode = memory.KeywordOnly
	assert.Equal(t, []string{"n4"}, hitIDs(queryTenNotes(t, kq)))
	all := q
	all.MinRelevance = -1
	hits := queryTenNotes(t, all)
	cat := slices.IndexFunc(hits, func(h memory.Hit) bool { return h.ID == "n0" })
	require.Positive(t, cat, "the cat's note matched")
	assert.Positive(t, hits[cat].Explain.OwnKeyword, "by its own words: my")
	assert.Less(t, hits[cat].Relevance, float32(0.15), "its share as it is")
	score := queryTenNotes(t, all, engine.WithScoreFusion(engine.DefaultVectorWeight, engine.DefaultKeywordWeight))
	cat = slices.IndexFunc(score, func(h memory.Hit) bool { return h.ID == "n0" })
	require.Positive(t, cat)
	assert.Greater(t, score[cat].Relevance, float32(0.3), "under score fusion, its fourth root")
}

// TestSearch_OneNote: a store of one note is read as one of relevance.MinRecords
// records, where the calibrations still weigh what matched: its word
// finds it, a sentence that shares only "I'm" with it does not.
func TestSearch_OneNote(t *testing.T) {
	ctx := t.Context()
	lt, t0 := newHashLT(t, "hash:512")
	_, err := lt.Add(ctx, memory.Record{ID: "n", Text: "I'm allergic to peanuts.", Time: t0})
	require.NoError(t, err)
	hits, err := lt.Query(ctx, memory.Query{Text: "peanuts", Explain: true})
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Greater(t, hits[0].Relevance, float32(0.8))
	assert.Equal(t, 1, hits[0].Explain.Records)
	hits, err = lt.Query(ctx, memory.Query{Text: "I'm going to the store"})
	require.NoError(t, err)
	assert.Empty(t, hits)
}

// TestSearch_ChineseDocuments: a Chinese query in a namespace of passages
// (records averaging engine.DocumentLength keyword terms or more) is
// explained as such, and its relevance is the documents' model's: the
// passage that answers it surfaces, and a question about something the
// passages never tell surfaces nothing, though it shares characters with
// every passage. The same query among short turns or among the same
// passages said by two speakers, and an English query among the
// passages, are not read as documents.
func TestSearch_ChineseDocuments(t *testing.T) {
	ctx := t.Context()
	lt, t0 := newHashLT(t, "hash:512")
	var recs []memory.Record
	for i, text := range memorytest.ChinesePassages {
		recs = append(recs, memory.Record{ID: fmt.Sprintf("w%d", i), Namespace: "wiki", Speaker: "Wikipedia", Text: text, Time: t0.Add(time.Duration(i) * time.Minute)})
		recs = append(recs, memory.Record{ID: fmt.Sprintf("d%d", i), Namespace: "dialog", Speaker: []string{"user", "assistant"}[i%2], Text: text, Time: t0.Add(time.Duration(i) * time.Minute)})
	}
	recs = append(recs,
		memory.Record{ID: "c0", Namespace: "chat", Speaker: "user", Text: "我下周三去杭州出差，住三天。", Time: t0},
		memory.Record{ID: "c1", Namespace: "chat", Speaker: "assistant", Text: "好的，记住了：下周三去杭州，住三天。", Time: t0.Add(time.Minute)},
		memory.Record{ID: "c2", Namespace: "chat", Speaker: "user", Text: "我喜欢喝西湖龙井。", Time: t0.Add(2 * time.Minute)},
	)
	_, err := lt.AddBatch(ctx, recs)
	require.NoError(t, err)
	query := func(text, ns string, min float32) []memory.Hit {
		t.Helper()
		hits, err := lt.Query(ctx, memory.Query{Text: text, Namespace: ns, K: 5, MinRelevance: min, Explain: true})
		require.NoError(t, err)
		return hits
	}

	hits := query("三峡工程位于哪里？", "wiki", 0)
	require.NotEmpty(t, hits, "the passage that answers it surfaces")
	assert.Equal(t, "w0", hits[0].ID)
	for _, h := range hits {
		assert.True(t, h.Explain.Documents, h.ID)
	}
	probe := "黄河流经哪些省份？" // the conversations' model: 0.41
	all := query(probe, "wiki", -1)
	require.NotEmpty(t, all, "it shares characters with the passages")
	assert.True(t, all[0].Explain.Documents)
	assert.Empty(t, query(probe, "wiki", 0), "nothing the passages tell")

	for _, c := range []struct{ text, ns, why string }{
		{"我什么时候去杭州？", "chat", "short turns"},
		{"三峡工程位于哪里？", "dialog", "long turns of a conversation"},
		{"Wikipedia", "wiki", "an English query"},
	} {
		hits := query(c.text, c.ns, -1)
		require.NotEmpty(t, hits, c.why)
		for _, h := range hits {
			assert.False(t, h.Explain.Documents, "%s: %s", c.why, h.ID)
		}
	}
}

// TestSearch_WordlessTurn: in a conversation, a turn that shares only the
// query's "my" with it is not relevant, though the query's "my" prefers
// the user's turns and the turn's conversation holds "my" too: neither the
// speaker's boost nor a conversation matched by function words alone
// lends it relevance. "what did my doctor say?" brought back "I'm planning
// a trip to Japan in April with my wife Hana." at 0.45.
func TestSearch_WordlessTurn(t *testing.T) {
	ctx := t.Context()
	lt, t0 := newHashLT(t, "hash:512")
	for i, turn := range []struct {
		day           int
		speaker, text string
	}{
		{0, "user", "Hi! I'm planning a trip to Japan in April with my wife Hana."},
		{0, "assistant", "That sounds wonderful. Which cities are you thinking of?"},
		{0, "user", "Tokyo and Kyoto. Our budget is about 6000 dollars."},
		{3, "user", "My doctor says my blood pressure is a bit high, so I'm cutting down on salt."},
		{3, "assistant", "Good call. Keep sodium under 2300 mg a day."},
		{7, "user", "I started running again, 5k three times a week."},
	} {
		at := t0.Add(time.Duration(turn.day)*24*time.Hour + time.Duration(i)*time.Minute)
		_, err := lt.Add(ctx, memory.Record{ID: fmt.Sprint("c", i), Speaker: turn.speaker, Text: turn.text, Time: at})
		require.NoError(t, err)
	}
	hits, err := lt.Query(ctx, memory.Query{Text: "what did my doctor say?", MinRelevance: -1, Explain: true})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "c3", hits[0].ID)
	wife := slices.IndexFunc(hits, func(h memory.Hit) bool { return h.ID == "c0" })
	require.GreaterOrEqual(t, wife, 0, "its \"my\" matched")
	assert.Positive(t, hits[wife].Explain.OwnKeyword)
	assert.Less(t, hits[wife].Relevance, float32(0.1), "only \"my\" of the query")
	// The answer to that turn holds no word of the query: what its
	// neighbour lent it for "my" is no relevance either.
	if reply := slices.IndexFunc(hits, func(h memory.Hit) bool { return h.ID == "c1" }); reply >= 0 {
		assert.Less(t, hits[reply].Relevance, float32(0.1), "lent for \"my\" alone")
	}
	hits, err = lt.Query(ctx, memory.Query{Text: "what did my doctor say?"})
	require.NoError(t, err)
	assert.Equal(t, []string{"c3", "c4"}, hitIDs(hits), "the doctor's turn and its answer, nothing lent for \"my\"")
}

// TestSearch_WordForms: a question asks in the base form what a note says
// in an irregular one ("what did I buy?", "I bought…"), or in British
// spelling what a note says in American ("What colour do I like?", "My
// favourite color is blue."), and finds it: before the tokenizer read
// bought as buy and colour as color, nothing was relevant.
func TestSearch_WordForms(t *testing.T) {
	ctx := t.Context()
	lt := newNotes(t, 24*time.Hour)
	for id, text := range map[string]string{
		"i0": "I bought new running shoes last week.",
		"i1": "My children love the beach.",
	} {
		_, err := lt.Add(ctx, memory.Record{ID: id, Text: text})
		require.NoError(t, err)
	}
	for q, want := range map[string]string{"What did I buy?": "i0", "What does my child love?": "i1", "What colour do I like?": "n3"} {
		hits, err := lt.Query(ctx, memory.Query{Text: q})
		require.NoError(t, err)
		require.NotEmpty(t, hits, q)
		assert.Equal(t, want, hits[0].ID, q)
	}
}

// TestSearch_SpeechVerb: the verb of "what did Hana say?" asks for what
// Hana said, not for a turn that says "says": a turn reporting the
// doctor's words came first, its "says" rarer than "Hana".
func TestSearch_SpeechVerb(t *testing.T) {
	ctx := t.Context()
	lt, t0 := newHashLT(t, "hash:512")
	addNumbered(t, lt, t0, time.Hour, "s", "user",
		"I'm planning a trip to Japan with my wife Hana.",
		"Hana is vegetarian, so restaurants matter a lot.",
		"My doctor says my blood pressure is a bit high.",
		"I started running again, three times a week.")
	hits, err := lt.Query(ctx, memory.Query{Text: "What did Hana say?", MinRelevance: -1})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(hits), 3)
	assert.ElementsMatch(t, []string{"s0", "s1"}, hitIDs(hits[:2]), "Hana's turns first")
	hits, err = lt.Query(ctx, memory.Query{Text: "What did my doctor say?"})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "s2", hits[0].ID, "the doctor's words still found by \"doctor\"")
}

// TestSearch_NamingQuestion: "What's my dog called?" asks for a name, and
// an assistant's "Good call." is no answer to it, where "called", stemmed
// to call, brought it back first in a memory that holds no dog (0.22
// here, 0.28 in a longer conversation: above the default minimum).
func TestSearch_NamingQuestion(t *testing.T) {
	ctx := t.Context()
	lt, t0 := newHashLT(t, "hash:512")
	for i, turn := range [][2]string{
		{"user", "My doctor says I should cut down on salt."},
		{"assistant", "Good call. Keep sodium under 2300 mg a day."},
		{"user", "My cat Miso eats salmon twice a day."},
	} {
		_, err := lt.Add(ctx, memory.Record{ID: fmt.Sprint("c", i), Speaker: turn[0], Text: turn[1], Time: t0.Add(time.Duration(i) * time.Minute)})
		require.NoError(t, err)
	}
	hits, err := lt.Query(ctx, memory.Query{Text: "What's my dog called?", MinRelevance: -1})
	require.NoError(t, err)
	for _, h := range hits {
		assert.Less(t, h.Relevance, float32(0.15), "%s: no dog, no answer (\"Good call.\" was first at 0.22)", h.ID)
	}
	hits, err = lt.Query(ctx, memory.Query{Text: "What's my dog called?"})
	require.NoError(t, err)
	assert.Empty(t, hitIDs(hits))
	hits, err = lt.Query(ctx, memory.Query{Text: "What's my cat called?"})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "c2", hits[0].ID)
}

// TestSearch_RecallFrame: a question that asks the memory to recall ("do
// you remember", "can you remind me", "tell me about") asks what the
// question without those words asks: the note it finds is as relevant
// (within a tenth), where the frame's words, held by no note, made it look
// half answered (0.31 for "tell me about my sister" against 0.79 for "my
// sister").
func TestSearch_RecallFrame(t *testing.T) {
	ctx := t.Context()
	lt := newNotes(t, 24*time.Hour)
	for plain, framed := range map[string][]string{
		"where does my sister live?": {"Do you remember where my sister lives?", "Can you remind me where my sister lives?", "do you know where my sister lives"},
		"my sister":                  {"What do you know about my sister?", "Tell me about my sister.", "Did I tell you about my sister?"},
		"my dog":                     {"What do you remember about my dog?", "Hey, do you recall anything about my dog?"},
	} {
		want, err := lt.Query(ctx, memory.Query{Text: plain})
		require.NoError(t, err)
		require.NotEmpty(t, want, plain)
		for _, q := range framed {
			hits, err := lt.Query(ctx, memory.Query{Text: q})
			require.NoError(t, err)
			if assert.NotEmpty(t, hits, q) {
				assert.Equal(t, want[0].ID, hits[0].ID, q)
				assert.InDelta(t, want[0].Relevance, hits[0].Relevance, 0.1, "%q against %q", q, plain)
			}
		}
	}
	// The vector path embeds the question framed, as the keyword path
	// reads it.
	want, err := lt.Query(ctx, memory.Query{Text: "where my sister lives?", Mode: memory.VectorOnly, Explain: true})
	require.NoError(t, err)
	hits, err := lt.Query(ctx, memory.Query{Text: "Do you remember where my sister lives?", Mode: memory.VectorOnly, Explain: true})
	require.NoError(t, err)
	require.NotEmpty(t, want)
	require.NotEmpty(t, hits)
	assert.Equal(t, want[0].ID, hits[0].ID)
	assert.Equal(t, want[0].Explain.Vector, hits[0].Explain.Vector, "the same cosine")
}
