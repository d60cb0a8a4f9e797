package relevance

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory"
)

// model is a Model with every weight set and distinct.
var model = Model{Bias: 0.3, KWBest: -0.7, SqrtKWBest: 0.1, CosBest: 0.6, Cover: -0.05, Share: 0.2,
	LogDocs: -1.6, KWBestL: -1.1, SqrtKWBestL: 2.3, CosBestL: 0.8, CoverL: 0.4, ShareL: 0.45, UnknownName: 0.7}

// TestModel_P: P is the form Model's doc comment writes out, each mode
// reading only what its paths compute, the size read as at least
// MinRecords.
func TestModel_P(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := &model
	for range 200 {
		f := Features{KWBest: rng.Float64(), CosBest: rng.Float64(), Cover: rng.Float64(), Share: rng.Float64(),
			Docs: rng.IntN(3000), Unknown: rng.IntN(2) == 0}
		l := math.Log(float64(max(f.Docs, 8)))
		sq := math.Sqrt(f.KWBest)
		logistic := func(z float64) float64 { return 1 / (1 + math.Exp(-z)) }
		hybrid := logistic(m.Bias + m.KWBest*f.KWBest + m.SqrtKWBest*sq + m.CosBest*f.CosBest + m.Cover*f.Cover + m.Share*f.Share +
			l*(m.LogDocs+m.KWBestL*f.KWBest+m.SqrtKWBestL*sq+m.CosBestL*f.CosBest+m.CoverL*f.Cover+m.ShareL*f.Share))
		keyword := logistic(m.Bias + m.KWBest*f.KWBest + m.SqrtKWBest*sq + m.Cover*f.Cover + m.Share*f.Share +
			l*(m.LogDocs+m.KWBestL*f.KWBest+m.SqrtKWBestL*sq+m.CoverL*f.Cover+m.ShareL*f.Share))
		vector := logistic(m.Bias + m.CosBest*f.CosBest + m.Share*f.Share)
		if f.Unknown {
			hybrid *= m.UnknownName
			keyword *= m.UnknownName // vector mode does not read the namespace's words
		}
		assert.InDelta(t, hybrid, m.P(memory.Hybrid, f), 1e-12, "%+v", f)
		assert.InDelta(t, keyword, m.P(memory.KeywordOnly, f), 1e-12, "%+v", f)
		assert.InDelta(t, vector, m.P(memory.VectorOnly, f), 1e-12, "%+v", f)
	}
}

// TestModel_Weights: Names, Inputs and Weights line up, z = Weights ·
// Inputs, and SetWeights sets exactly the mode's weights.
func TestModel_Weights(t *testing.T) {
	f := Features{KWBest: 0.4, CosBest: 0.3, Cover: 0.9, Share: 0.5, Docs: 1000}
	for _, mode := range []memory.Mode{memory.Hybrid, memory.VectorOnly, memory.KeywordOnly} {
		names, in, w := Names(mode), Inputs(mode, f), model.Weights(mode)
		require.Len(t, in, len(names), mode)
		require.Len(t, w, len(names), mode)
		assert.Equal(t, "Bias", names[0], mode)
		assert.Equal(t, 1.0, in[0], mode)
		z := 0.0
		for i := range w {
			z += w[i] * in[i]
		}
		assert.InDelta(t, 1/(1+math.Exp(-z)), model.P(mode, f), 1e-12, mode)

		back := Model{UnknownName: model.UnknownName}
		back.SetWeights(mode, w)
		assert.Equal(t, w, back.Weights(mode), mode)
		assert.Equal(t, model.P(mode, f), back.P(mode, f), mode)
	}
	assert.Equal(t, []string{"Bias", "CosBest", "Share"}, Names(memory.VectorOnly))
	var v Model
	v.SetWeights(memory.VectorOnly, []float64{1, 2, 3})
	assert.Equal(t, Model{Bias: 1, CosBest: 2, Share: 3}, v, "the other weights untouched")
}

// BenchmarkModel_P: what a search pays per namespace for its gate.
func BenchmarkModel_P(b *testing.B) {
	f := Features{KWBest: 0.4, CosBest: 0.3, Cover: 0.9, Share: 0.5, Docs: 1000, Unknown: true}
	b.ReportAllocs()
	for b.Loop() {
		model.P(memory.Hybrid, f)
	}
}
