// Package relevance is the form of the relevance model, written once:
// which inputs a search's features make for each retrieval mode, and the
// probability a model's weights give them. memory/engine computes every
// hit's relevance with it, and eval fits the weights with it (`agentmem
// eval --calibrate`), so the model that is fitted is the model that runs.
package relevance

import (
	"math"

	"github.com/agentmem/agentmem/memory"
)

// Features are what the model reads of a search, each with one meaning in
// every namespace and store: the best keyword score among the search's
// candidates relative to the most its namespace allows (KWBest), the best
// chunk cosine (CosBest), the share of the query's weight that occurs in
// the namespace at all (Cover), the share of the query's words the best
// hit holds (Share), how many records the namespace holds (Docs), and
// whether the query names something the namespace never mentions
// (Unknown).
type Features struct {
	KWBest, CosBest, Cover, Share float64
	Docs                          int
	Unknown                       bool
}

// MinRecords is the fewest records the model reads a namespace as
// holding: fitted on namespaces of 14 records and more, the models are
// not carried far below them, where the logarithm's terms vanish and
// leave the features without weight (a store of one note answered "I'm
// going to the store" with its only note, "I'm allergic to peanuts.", at
// 0.64, and "peanuts" at 0.66). Small stores of eight or nine notes
// (`agentmem eval DIR --small-stores 7`) were measured and read as they
// are: a minimum of 8 leaves their figures unchanged, one of 14 cost
// MemoryBank's recall@10 there 0.828 → 0.768. The facts stories (five or
// six records each) find the current version for 95.4% of their questions
// with it, 97.9% without, the past one for 96.2% (98.1%).
const MinRecords = 8

// A Model is a logistic model, for one mode, of whether the memory holds
// what a query asks about, from the search's best scores and its
// coverage, each also times the logarithm of the namespace's size, L =
// ln(max(Docs, MinRecords)): P = 1/(1 + e^−z), z = Bias + KWBest·kwBest +
// SqrtKWBest·√kwBest + CosBest·cosBest + Cover·cover + Share·share +
// L·(LogDocs + KWBestL·kwBest + SqrtKWBestL·√kwBest + CosBestL·cosBest +
// CoverL·cover + ShareL·share), times UnknownName when the query names
// something the namespace never mentions. A mode reads only what its
// paths compute (Inputs): vector mode no keyword score, coverage or
// size, and not the namespace's words (no UnknownName); keyword mode no
// cosine.
type Model struct {
	Bias, KWBest, SqrtKWBest, CosBest, Cover, Share         float64
	LogDocs, KWBestL, SqrtKWBestL, CosBestL, CoverL, ShareL float64
	// UnknownName is the factor of P when Features.Unknown, in [0, 1].
	UnknownName float64
}

// input is one term of z: its name (its weight's field in Model), its
// weight in a Model and its value for a search's features, given √kwBest
// and L, the logarithm of the namespace's size.
type input struct {
	name   string
	weight func(m *Model) *float64
	value  func(f Features, sqrtKW, l float64) float64
}

var (
	bias        = input{"Bias", func(m *Model) *float64 { return &m.Bias }, func(Features, float64, float64) float64 { return 1 }}
	kwBest      = input{"KWBest", func(m *Model) *float64 { return &m.KWBest }, func(f Features, _, _ float64) float64 { return f.KWBest }}
	sqrtKWBest  = input{"SqrtKWBest", func(m *Model) *float64 { return &m.SqrtKWBest }, func(_ Features, s, _ float64) float64 { return s }}
	cosBest     = input{"CosBest", func(m *Model) *float64 { return &m.CosBest }, func(f Features, _, _ float64) float64 { return f.CosBest }}
	cover       = input{"Cover", func(m *Model) *float64 { return &m.Cover }, func(f Features, _, _ float64) float64 { return f.Cover }}
	share       = input{"Share", func(m *Model) *float64 { return &m.Share }, func(f Features, _, _ float64) float64 { return f.Share }}
	logDocs     = input{"LogDocs", func(m *Model) *float64 { return &m.LogDocs }, func(_ Features, _, l float64) float64 { return l }}
	kwBestL     = input{"KWBestL", func(m *Model) *float64 { return &m.KWBestL }, func(f Features, _, l float64) float64 { return l * f.KWBest }}
	sqrtKWBestL = input{"SqrtKWBestL", func(m *Model) *float64 { return &m.SqrtKWBestL }, func(_ Features, s, l float64) float64 { return l * s }}
	cosBestL    = input{"CosBestL", func(m *Model) *float64 { return &m.CosBestL }, func(f Features, _, l float64) float64 { return l * f.CosBest }}
	coverL      = input{"CoverL", func(m *Model) *float64 { return &m.CoverL }, func(f Features, _, l float64) float64 { return l * f.Cover }}
	shareL      = input{"ShareL", func(m *Model) *float64 { return &m.ShareL }, func(f Features, _, l float64) float64 { return l * f.Share }}
)

// inputs are each mode's terms of z, in order.
var inputs = [3][]input{
	memory.Hybrid:      {bias, kwBest, sqrtKWBest, cosBest, cover, share, logDocs, kwBestL, sqrtKWBestL, cosBestL, coverL, shareL},
	memory.VectorOnly:  {bias, cosBest, share},
	memory.KeywordOnly: {bias, kwBest, sqrtKWBest, cover, share, logDocs, kwBestL, sqrtKWBestL, coverL, shareL},
}

// Names returns the names of mode's inputs, in Inputs' order: their
// weights' fields in Model, Bias first.
func Names(mode memory.Mode) []string {
	out := make([]string, len(inputs[mode]))
	for i, in := range inputs[mode] {
		out[i] = in.name
	}
	return out
}

// Inputs returns the values of mode's inputs for f, in Names' order: z is
// their dot product with the model's Weights.
func Inputs(mode memory.Mode, f Features) []float64 {
	sqrtKW, l := derived(f)
	out := make([]float64, len(inputs[mode]))
	for i, in := range inputs[mode] {
		out[i] = in.value(f, sqrtKW, l)
	}
	return out
}

// derived returns what inputs derive from f: √kwBest and L, the logarithm
// of the namespace's size read as at least MinRecords.
func derived(f Features) (sqrtKW, l float64) {
	return math.Sqrt(max(f.KWBest, 0)), math.Log(float64(max(f.Docs, MinRecords)))
}

// Weights returns m's weights of mode's inputs, in Names' order.
func (m *Model) Weights(mode memory.Mode) []float64 {
	out := make([]float64, len(inputs[mode]))
	for i, in := range inputs[mode] {
		out[i] = *in.weight(m)
	}
	return out
}

// SetWeights sets m's weights of mode's inputs to w, in Names' order.
func (m *Model) SetWeights(mode memory.Mode, w []float64) {
	for i, in := range inputs[mode] {
		*in.weight(m) = w[i]
	}
}

// P is the probability m gives f in mode: the logistic of z, times
// UnknownName when f.Unknown (but in vector mode, which does not read the
// namespace's words).
func (m *Model) P(mode memory.Mode, f Features) float64 {
	sqrtKW, l := derived(f)
	z := 0.0
	for _, in := range inputs[mode] { // Inputs', without a slice: a search's every namespace asks
		z += *in.weight(m) * in.value(f, sqrtKW, l)
	}
	p := 1 / (1 + math.Exp(-z))
	if f.Unknown && mode != memory.VectorOnly {
		p *= m.UnknownName
	}
	return p
}
