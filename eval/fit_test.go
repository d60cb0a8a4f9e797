package eval_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/eval"
)

// Fit learns, per mode, a model under which the searches of answerable
// questions score above the probes', better than the base rate; it reads
// the namespace's size where the mode has keyword statistics, and in vector
// mode it has no weight for it. Here a probe's coverage is low in a large
// namespace and looks like an answerable question's in a small one, which
// only the size terms can tell apart.
func TestFit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var samples []eval.Sample
	for i := range 4000 {
		probe := i%2 == 1
		records := 10
		if rng.IntN(2) == 0 {
			records = 2000
		}
		cover := 0.2 + 0.2*rng.Float64()
		if !probe && records == 2000 {
			cover += 0.4
		}
		if probe && records == 10 {
			cover -= 0.15
		}
		kw := 0.2 + 0.3*rng.Float64()
		if !probe {
			kw += 0.1
		}
		for _, mode := range []string{"hybrid", "vector", "keyword"} {
			samples = append(samples, eval.Sample{QID: "q", Mode: mode, Rank: 1, Probe: probe, Records: records,
				BestKeyword: kw, BestVector: kw, Coverage: cover, BestShare: kw})
		}
		samples = append(samples, eval.Sample{QID: "q", Mode: "hybrid", Rank: 2, Probe: probe}) // read no further than the best hit
	}
	cals, err := eval.Fit(samples)
	require.NoError(t, err)
	require.Len(t, cals, 3)
	for _, c := range cals {
		assert.Equal(t, 4000, c.Questions, c.Mode)
		assert.Equal(t, 2000, c.Answerable, c.Mode)
		assert.Less(t, c.LogLoss, c.BaseLogLoss, c.Mode)
		assert.InDelta(t, math.Log(2), c.BaseLogLoss, 1e-9, c.Mode)
		if c.Mode == "vector" {
			assert.Zero(t, c.LogDocs, "vector mode reads no size")
			assert.Zero(t, c.CoverL)
			continue
		}
		assert.NotZero(t, c.LogDocs, c.Mode)
		assert.Positive(t, c.CoverL, "%s: coverage says more in a large namespace", c.Mode)
	}
}
