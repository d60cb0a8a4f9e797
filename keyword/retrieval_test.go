package keyword_test

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/keyword"
)

type retrievalSet struct {
	Passages []struct {
		ID   int64  `json:"id"`
		Text string `json:"text"`
	} `json:"passages"`
	Queries []struct {
		Q        string  `json:"q"`
		Relevant []int64 `json:"relevant"`
	} `json:"queries"`
}

type retrievalScore struct {
	hit1, hit5, mrr float64
	misses          []string
}

func evalRetrieval(t *testing.T, set retrievalSet, ix *keyword.Index) retrievalScore {
	t.Helper()
	for _, p := range set.Passages {
		ix.Add(p.ID, p.Text)
	}
	var s retrievalScore
	for _, q := range set.Queries {
		res := ix.Search(q.Q, 10, nil)
		rank := slices.IndexFunc(res, func(r keyword.Result) bool { return slices.Contains(q.Relevant, r.ID) })
		switch {
		case rank < 0:
			s.misses = append(s.misses, q.Q)
			continue
		case rank == 0:
			s.hit1++
		}
		if rank < 5 {
			s.hit5++
		}
		s.mrr += 1 / float64(rank+1)
	}
	n := float64(len(set.Queries))
	s.hit1, s.hit5, s.mrr = s.hit1/n, s.hit5/n, s.mrr/n
	return s
}

// TestRetrieval_Chinese compares the two CJK modes on a small set of
// Chinese memories and reworded questions (testdata/zh_retrieval.json).
// Run with -v to see the numbers.
func TestRetrieval_Chinese(t *testing.T) {
	t.Parallel()

	data, err := os.ReadFile("testdata/zh_retrieval.json")
	require.NoError(t, err)
	var set retrievalSet
	require.NoError(t, json.Unmarshal(data, &set))
	require.NotEmpty(t, set.Queries)

	for _, mode := range []keyword.CJKMode{keyword.Bigrams, keyword.Segmenter} {
		t.Run(mode.String(), func(t *testing.T) {
			tok := newTok(t)
			if mode == keyword.Segmenter {
				tok = segmenterTok(t)
			}
			s := evalRetrieval(t, set, keyword.NewIndex(tok))
			t.Logf("%s: %d queries, hit@1 %.3f, hit@5 %.3f, MRR %.3f, misses %q",
				mode, len(set.Queries), s.hit1, s.hit5, s.mrr, s.misses)
			assert.GreaterOrEqual(t, s.hit5, 0.85, "keyword search should find most reworded Chinese questions")
		})
	}
}
