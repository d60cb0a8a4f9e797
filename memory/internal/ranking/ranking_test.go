package ranking

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory"
)

func TestSnippets(t *testing.T) {
	tok, err := keyword.NewTokenizer()
	require.NoError(t, err)
	children := []string{"Hello there.", "The flight LH 2043 leaves Munich.", "Munich is cold.", "Bye."}
	q := map[string]bool{}
	for _, term := range tok.Tokens("flight Munich") {
		q[term] = true
	}
	assert.Equal(t, []int{1}, Snippets(tok, q, children, true, nil), "only the child with most query terms")
	assert.Equal(t, []int{1, 3}, Snippets(tok, q, children, true, []Child{{3, 0.8}, {0, 0.5}}),
		"plus the vector path's children within the ratio of its best, in text order")
	assert.Empty(t, Snippets(tok, q, children, false, nil))
	assert.Empty(t, Snippets(tok, q, children, false, []Child{{2, 0}, {0, 0}, {1, -0.1}}),
		"a vector path's child that shares nothing with the query (cosine ≤ 0) did not match")
	assert.Equal(t, []int{1}, Snippets(tok, q, children, true, []Child{{3, 0}}),
		"the keyword path's child, not the vector path's with cosine 0")
}

func TestChecks(t *testing.T) {
	require.NoError(t, CheckWeights(0, 1))
	assert.Error(t, CheckWeights(0, 0))
	assert.Error(t, CheckWeights(-1, 1))
	require.NoError(t, Unit("w", 1))
	assert.Error(t, Unit("w", 1.5))
	assert.EqualError(t, NonNegative("speaker boost", -1), "speaker boost -1 is not a finite number ≥ 0")
}

func TestFuse(t *testing.T) {
	// a: both paths; b: vector only; c: keyword only.
	cands := []Paths{
		{HasVec: true, HasKW: true, VecScore: 0.8, KWScore: 6, VecRank: 1, KWRank: 2},
		{HasVec: true, VecScore: 0.2, VecRank: 2},
		{HasKW: true, KWScore: 8, KWRank: 1},
	}
	f := Fusion{VectorWeight: 0.25, KeywordWeight: 0.75, RRFK: 60}

	assert.Equal(t, []float64{0.8, 0.2, 0}, Fuse(memory.VectorOnly, f, cands), "vector only: the cosine")
	assert.Equal(t, []float64{6.0 / 8, 0, 1}, Fuse(memory.KeywordOnly, f, cands), "keyword only: BM25 over the query's best")

	f.Kind = ScoreFusion
	got := Fuse(memory.Hybrid, f, cands)
	assert.InDeltaSlice(t, []float64{0.25*1 + 0.75*6/8, 0.25 * 0, 0.75 * 1}, got, 1e-12,
		"score fusion: vector min–max over the candidates, keyword over the best")

	f.Kind = RRF
	got = Fuse(memory.Hybrid, f, cands)
	assert.InDeltaSlice(t, []float64{1.0/61 + 1.0/62, 1.0 / 62, 1.0 / 61}, got, 1e-12)

	f.Kind = WeightedFusion
	got = Fuse(memory.Hybrid, f, []Paths{cands[0], {HasVec: true, VecScore: -0.3, VecRank: 2}, cands[2]})
	assert.InDeltaSlice(t, []float64{0.25*0.8 + 0.75*6/8, 0, 0.75}, got, 1e-12, "a negative cosine counts as 0")

	f.Kind = MarginFusion
	got = Fuse(memory.Hybrid, f, cands)
	// The median of the cosines 0.8 and 0.2 is the lower, 0.2.
	assert.InDeltaSlice(t, []float64{0.25*(0.8-0.2)/(1-0.2) + 0.75*6/8, 0, 0.75}, got, 1e-12,
		"margin fusion: the cosine's margin over the median, on the cosine's scale")

	f.Kind = ScoreFusion
	got = Fuse(memory.Hybrid, f, cands[:1])
	assert.InDeltaSlice(t, []float64{0.25 + 0.75}, got, 1e-12, "one vector score: the full vector weight")
	assert.Empty(t, Fuse(memory.Hybrid, f, nil))
}

// TestFuse_MarginKeepsHowSureTheVectorPathIs: under min–max the best
// cosine counts fully whether it stands out or not; under margin fusion a
// near copy far above the rest counts almost fully, the best of a crowd of
// equal cosines little, so a keyword runner-up is lifted over the keyword
// best only in the first case.
func TestFuse_MarginKeepsHowSureTheVectorPathIs(t *testing.T) {
	query := func(best float64) []Paths {
		// c0: the keyword best; c1: the keyword runner-up and the vector
		// best; then a crowd of vector candidates at 0.40–0.44.
		cands := []Paths{
			{HasVec: true, HasKW: true, VecScore: 0.40, KWScore: 10, VecRank: 5, KWRank: 1},
			{HasVec: true, HasKW: true, VecScore: best, KWScore: 8, VecRank: 1, KWRank: 2},
		}
		for i, c := range []float64{0.44, 0.43, 0.42, 0.41, 0.40, 0.40} {
			cands = append(cands, Paths{HasVec: true, VecScore: c, VecRank: i + 2})
		}
		return cands
	}
	margin := Fusion{Kind: MarginFusion, VectorWeight: 0.3, KeywordWeight: 0.7}
	score := Fusion{Kind: ScoreFusion, VectorWeight: 0.3, KeywordWeight: 0.7}

	sure := Fuse(memory.Hybrid, margin, query(0.95))
	assert.Greater(t, sure[1], sure[0], "a near copy of the query lifts the keyword runner-up")
	crowd := Fuse(memory.Hybrid, margin, query(0.45))
	assert.Greater(t, crowd[0], crowd[1], "the best of a crowd does not")
	assert.Less(t, crowd[1]-0.7*0.8, 0.3*0.1, "the crowd's best counts little")

	// Min–max lifts the runner-up in both.
	for _, best := range []float64{0.95, 0.45} {
		got := Fuse(memory.Hybrid, score, query(best))
		assert.Greater(t, got[1], got[0], "score fusion, best cosine %v", best)
	}
}

// TestVectorFloor: the floor is where the fusion starts counting a
// cosine: the median candidate's under margin fusion (the lower middle
// one), the lowest under score fusion, 0 for the other fusions, for a
// single path and for candidates the vector path did not find.
func TestVectorFloor(t *testing.T) {
	cands := []Paths{
		{HasVec: true, VecScore: 0.5}, {HasVec: true, VecScore: 0.1}, {HasKW: true, KWScore: 3},
		{HasVec: true, VecScore: 0.3}, {HasVec: true, VecScore: 0.2},
	}
	floor := func(mode memory.Mode, kind FusionKind, cands []Paths) float64 {
		return VectorFloor(mode, Fusion{Kind: kind}, cands)
	}
	assert.InDelta(t, 0.2, floor(memory.Hybrid, MarginFusion, cands), 1e-12)
	assert.InDelta(t, 0.1, floor(memory.Hybrid, ScoreFusion, cands), 1e-12)
	assert.Zero(t, floor(memory.Hybrid, RRF, cands))
	assert.Zero(t, floor(memory.Hybrid, WeightedFusion, cands))
	assert.Zero(t, floor(memory.VectorOnly, MarginFusion, cands))
	assert.Zero(t, floor(memory.Hybrid, ScoreFusion, []Paths{{HasVec: true, VecScore: 0.4}, {HasVec: true, VecScore: 0.4}}),
		"equal cosines: score fusion counts each fully")
	assert.Zero(t, floor(memory.Hybrid, MarginFusion, []Paths{{HasKW: true, KWScore: 1}}))
}
