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

// Fit fits the searches the engine read as Chinese documents
// (Sample.Documents) apart, each mode's: here a share of the query's words
// that tells an answerable question in a conversation (0.5 against 0.3)
// is a probe's among passages, which hold many of any question's
// characters (0.7 against 0.9), and each model orders its own searches
// where one model could not.
func TestFit_Documents(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var samples []eval.Sample
	for i := range 2000 {
		probe, documents := i%2 == 1, i%4 >= 2
		share := 0.5
		if documents {
			share = 0.9
		}
		if probe {
			share -= 0.2
		}
		share += 0.1 * (rng.Float64() - 0.5)
		samples = append(samples, eval.Sample{QID: "q", Mode: "hybrid", Rank: 1, Probe: probe, Documents: documents, Records: 100,
			BestKeyword: 0.3, BestVector: 0.3, Coverage: 0.8, BestShare: share})
	}
	cals, err := eval.Fit(samples)
	require.NoError(t, err)
	require.Len(t, cals, 2)
	for _, c := range cals {
		assert.Equal(t, "hybrid", c.Mode)
		assert.Equal(t, 1000, c.Questions, "documents %v", c.Documents)
		assert.Equal(t, 500, c.Answerable, "documents %v", c.Documents)
		assert.Less(t, c.LogLoss, 0.3*c.BaseLogLoss, "documents %v: apart, share tells them", c.Documents)
	}
	assert.NotEqual(t, cals[0].Documents, cals[1].Documents)
	assert.Contains(t, cals[0].String()+cals[1].String(), "hybrid (documents) {Bias: ")

	for i := range samples {
		samples[i].Documents = false
	}
	one, err := eval.Fit(samples)
	require.NoError(t, err)
	require.Len(t, one, 1)
	assert.Greater(t, one[0].LogLoss, 0.6*one[0].BaseLogLoss, "one model: a passage's probe looks answerable")
}
