package engine

import (
	"fmt"
	"math"

	"github.com/agentmem/agentmem/memory"
)

// DefaultMinRelevance is the lowest relevance a hit may have when neither
// the query (memory.Query.MinRelevance) nor WithMinRelevance sets one. It
// is chosen to keep recall: on both development sets, with as many
// cross-conversation probes as questions (scripts/cross-probes.py,
// hash:512, hybrid), it keeps at least 97% of recall@10 (the bundled
// testdata/eval: 0.932 of 0.957, probes surfacing a hit 14% of the time
// instead of 100%; RealMem: 0.314 of 0.315, but probes still surface 94%
// of the time: its personas share most of their words). A stricter
// minimum trades recall for silence: on RealMem 0.27 keeps 95% of
// recall@10 and surfaces 51% of probes, 0.5 keeps 81% and surfaces 19%
// (`agentmem eval --sweep-relevance` prints the whole curve).
const DefaultMinRelevance = 0.08

// features are what the relevance of a hit is computed from, each with
// one meaning in every namespace and store: the hit's keyword score
// relative to the most its namespace allows (kw) and its best chunk's
// cosine (cos); the best of each among the search's candidates (kwBest,
// cosBest); and the share of the query's weight that occurs in the
// namespace at all (cover).
type features struct {
	kw, cos, kwBest, cosBest, cover float64
}

// calibration is a logistic model of whether the memory holds what a
// query asks about, from the search's best scores and its coverage: P =
// 1/(1 + e^−z), z = bias + kwBest·kwBest + sqrtKWBest·√kwBest +
// cosBest·cosBest + cover·cover.
type calibration struct {
	bias, kwBest, sqrtKWBest, cosBest, cover float64
}

// calibrations are the fitted models, one per mode (a mode without a path
// has no weight for its features). Fitted by `agentmem eval --calibrate`
// on RealMem's questions and as many cross-persona probes
// (scripts/cross-probes.py), hash:512.
var calibrations = [3]calibration{
	memory.Hybrid:      {bias: -4.6932, kwBest: 3.5209, sqrtKWBest: 3.6248, cosBest: 1.5442, cover: 1.8937},
	memory.VectorOnly:  {bias: -2.6894, cosBest: 6.8221},
	memory.KeywordOnly: {bias: -4.2807, kwBest: 3.6531, sqrtKWBest: 3.8628, cover: 1.9563},
}

// gate is the probability that the memory holds what the query asks
// about: the search's calibration, from f's kwBest, cosBest and cover.
func gate(mode memory.Mode, f features) float64 {
	c := calibrations[mode]
	z := c.bias + c.kwBest*f.kwBest + c.sqrtKWBest*math.Sqrt(max(f.kwBest, 0)) + c.cosBest*f.cosBest + c.cover*f.cover
	return 1 / (1 + math.Exp(-z))
}

// strength is a hit's share of the search's best keyword score or cosine,
// whichever is higher, to the power ¼ (two square roots): a hit half as
// strong as the best keeps 0.84 of the search's probability. A hit's
// relevance is gate × strength. Measured on the development set, a larger
// exponent drops evidence faster than it drops false surfaces.
func strength(mode memory.Mode, f features) float64 {
	s := 0.0
	if f.kwBest > 0 {
		s = f.kw / f.kwBest
	}
	if f.cosBest > 0 && mode != memory.KeywordOnly {
		s = max(s, f.cos/f.cosBest)
	}
	return math.Sqrt(math.Sqrt(min(max(s, 0), 1)))
}

// WithMinRelevance sets the lowest relevance a hit may have when a query
// does not set one (memory.Query.MinRelevance), in [0, 1]; 0 keeps every
// hit that matched the query at all. Default DefaultMinRelevance.
func WithMinRelevance(r float32) Option {
	return func(c *config) error {
		if !(r >= 0 && r <= 1) {
			return fmt.Errorf("minimum relevance %v is not in [0, 1]", r)
		}
		c.minRelevance = r
		return nil
	}
}
