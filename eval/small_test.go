package eval_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/eval"
	"github.com/agentmem/agentmem/memory/longterm"
)

// SmallStores makes, for each question with evidence, a store of its
// evidence among size notes of other conversations and a probe store of
// others, the same for the same seed; the data set it makes checks.
func TestSmallStores(t *testing.T) {
	d, err := eval.Load("../testdata/eval")
	require.NoError(t, err)
	s := eval.SmallStores(d, 5, 1)
	assert.Equal(t, s, eval.SmallStores(d, 5, 1), "the same seed, the same stores")
	assert.NotEqual(t, s, eval.SmallStores(d, 5, 2))
	require.NoError(t, eval.SmallStores(d, 5, 1).Check())

	byConv := map[string][]eval.Turn{}
	for _, tu := range s.Turns {
		byConv[tu.Conv] = append(byConv[tu.Conv], tu)
		assert.Empty(t, tu.Speaker, "notes")
	}
	text := map[[2]string]string{}
	for _, tu := range d.Turns {
		text[[2]string{tu.Conv, tu.ID}] = tu.Text
	}
	require.Len(t, s.Questions, 2*len(d.Questions), "every bundled question has its evidence")
	for i, q := range d.Questions {
		small, probe := s.Questions[2*i], s.Questions[2*i+1]
		assert.Equal(t, "small:"+q.QID, small.Conv)
		assert.Equal(t, q.Question, small.Question)
		assert.Empty(t, small.AskedAt)
		assert.Len(t, byConv[small.Conv], 5+len(q.Evidence))
		var want, got []string
		for _, e := range q.Evidence {
			want = append(want, text[[2]string{q.Conv, e}])
		}
		for _, tu := range byConv[small.Conv] {
			for _, e := range small.Evidence {
				if tu.ID == e {
					got = append(got, tu.Text)
				}
			}
			if len(tu.Text) > 400 {
				assert.Contains(t, want, tu.Text, "a distractor is a note of at most 400 bytes")
			}
		}
		assert.ElementsMatch(t, want, got, "the evidence, as the question's conversation said it")
		assert.True(t, strings.HasPrefix(probe.Conv, "small-probe:"))
		assert.Empty(t, probe.Evidence)
		assert.Len(t, byConv[probe.Conv], 5+len(q.Evidence))
		for _, tu := range byConv[probe.Conv] {
			assert.NotContains(t, want, tu.Text, "a probe's store does not hold the evidence")
		}
	}
}

// Small stores of MemoryBank's questions: the default minimum relevance
// keeps at least 80% of what the ranking finds without one (it kept 55%
// before relevance read a namespace's size), and a probe's store answers
// nothing at least 40% of the time.
func TestRun_SmallStores(t *testing.T) {
	d, err := eval.Load("../testdata/memorybank")
	require.NoError(t, err)
	emb, err := hash.New(512)
	require.NoError(t, err)
	s := eval.SmallStores(d, 7, 1)
	modes := []longterm.Mode{longterm.Hybrid}
	all, err := eval.Run(t.Context(), s, eval.Config{Embedder: emb, Modes: modes, MinRelevance: -1})
	require.NoError(t, err)
	def, err := eval.Run(t.Context(), s, eval.Config{Embedder: emb, Modes: modes})
	require.NoError(t, err)
	h, hd := all.Modes[0], def.Modes[0]
	t.Logf("recall@10 %.3f of %.3f, probes surfacing %.3f", hd.Overall.Recall[10], h.Overall.Recall[10], hd.FalseSurface)
	assert.GreaterOrEqual(t, hd.Overall.Recall[10], 0.8*h.Overall.Recall[10])
	assert.LessOrEqual(t, hd.FalseSurface, 0.6)
}
