package engine

import (
	"fmt"
	"math"

	"github.com/agentmem/agentmem/memory"
)

// DefaultMinRelevance is the lowest relevance a hit may have when neither
// the query (memory.Query.MinRelevance) nor WithMinRelevance sets one: the
// highest that keeps at least 95% of hybrid recall@10 on each development
// set, every question asked again as a probe in another conversation
// (`agentmem eval --cross-probes`, hash:512). Measured: the bundled
// testdata/eval keeps all its recall (0.957), probes surfacing a hit 10%
// of the time instead of 100%; MemoryBank keeps 0.864 of 0.889, its probes
// surfacing 72%; RealMem keeps 0.328 of 0.331, its probes surfacing 72%
// (94% at the former default, 0.08): their personas and users share most
// of their words. A stricter minimum trades recall for silence: on RealMem
// 0.36 keeps 91% of recall@10 and surfaces 31% of probes, 0.48 keeps 83%
// and surfaces 18% (`agentmem eval --cross-probes --sweep-relevance`
// prints the whole curve).
const DefaultMinRelevance = 0.18

// features are what the relevance of a hit is computed from, each with
// one meaning in every namespace and store: the hit's keyword score
// relative to the most its namespace allows (kw) and its best chunk's
// cosine (cos); the best of each among the search's candidates (kwBest,
// cosBest); the share of the query's weight that occurs in the namespace
// at all (cover); and the share of the query's words, all alike, that the
// search's best hit holds (share: search.bestShare).
type features struct {
	kw, cos, kwBest, cosBest, cover, share float64
}

// calibration is a logistic model of whether the memory holds what a
// query asks about, from the search's best scores and its coverage: P =
// 1/(1 + e^−z), z = bias + kwBest·kwBest + sqrtKWBest·√kwBest +
// cosBest·cosBest + cover·cover + share·share.
type calibration struct {
	bias, kwBest, sqrtKWBest, cosBest, cover, share float64
}

// calibrations are the fitted models, one per mode (a mode without a path
// has no weight for its features). Fitted by `agentmem eval --calibrate`
// on the development sets pooled by scripts/calibration-pool.py (RealMem,
// the bundled testdata/eval, MemoryBank in English and Chinese; 1,633
// questions, each with a cross-conversation probe), hash:512.
var calibrations = [3]calibration{
	memory.Hybrid:      {bias: -4.7089, kwBest: 2.6283, sqrtKWBest: 3.4347, cosBest: 1.8100, cover: 1.7898, share: 1.6326},
	memory.VectorOnly:  {bias: -2.8679, cosBest: 4.3272, share: 4.3751},
	memory.KeywordOnly: {bias: -4.2730, kwBest: 2.7144, sqrtKWBest: 3.6729, cover: 1.9505, share: 1.7081},
}

// gate is the probability that the memory holds what the query asks
// about: the search's calibration, from f's kwBest, cosBest, cover and share.
func gate(mode memory.Mode, f features) float64 {
	c := calibrations[mode]
	z := c.bias + c.kwBest*f.kwBest + c.sqrtKWBest*math.Sqrt(max(f.kwBest, 0)) + c.cosBest*f.cosBest + c.cover*f.cover + c.share*f.share
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
