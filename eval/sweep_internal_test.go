package eval

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSweepCurve_NonMonotoneRelevance: a hit's relevance need not fall
// with its rank, so the sweep keeps, at each threshold, every hit at or
// above it, in order, as a search with that minimum does, not the prefix
// before the first hit below it.
func TestSweepCurve_NonMonotoneRelevance(t *testing.T) {
	items := []sweepItem{
		// Evidence at rank 3, after a weaker hit at rank 2.
		{evidence: 1, scores: []float64{0.9, 0.3, 0.6, 0.5}, hits: []bool{false, false, true, false}},
		// A probe whose only hit is strong.
		{probe: true, scores: []float64{0.7}, hits: []bool{false}},
	}
	at := func(th float64) SweepPoint {
		for _, p := range sweepCurve(items, []int{1, 2, 10}, false) {
			if p.Threshold == th {
				return p
			}
		}
		require.Failf(t, "no point", "threshold %v", th)
		return SweepPoint{}
	}
	p := at(0.5)
	assert.Equal(t, 1.0, p.Recall[10], "the evidence at 0.6 is kept though a hit before it is below 0.5")
	assert.Equal(t, 1.0, p.Recall[2], "kept: 0.9, 0.6, 0.5; the evidence second")
	assert.Equal(t, 0.0, p.Recall[1])
	assert.Equal(t, 1.0, p.FalseSurface)
	p = at(0.65)
	assert.Equal(t, 0.0, p.Recall[10])
	assert.Equal(t, 1.0, p.FalseSurface)
	p = at(0.8)
	assert.Equal(t, 0.0, p.FalseSurface)
}
