package engine

import (
	"fmt"
	"math"

	"github.com/agentmem/agentmem/memory"
)

// DefaultMinRelevance is the lowest relevance a hit may have when neither
// the query (memory.Query.MinRelevance) nor WithMinRelevance sets one.
const DefaultMinRelevance = 0.0

// features are what the relevance of a hit is computed from, each with
// one meaning in every namespace and store: the hit's keyword score
// relative to the most its namespace allows (kw) and its best chunk's
// cosine (cos); the best of each among the search's candidates (kwBest,
// cosBest); and the share of the query's weight that occurs in the hit's
// namespace at all (cover). The bests and the coverage say whether the
// memory holds what the question is about; the hit's own whether it is
// the part that does.
type features struct {
	kw, cos, kwBest, cosBest, cover float64
}

// calibration is a logistic model: P = 1/(1 + e^−z), z = bias + Σ
// weight·feature (√kw beside kw).
type calibration struct {
	bias, kw, sqrtKW, cos, kwBest, cosBest, cover float64
}

// calibrations are the fitted models, one per mode (a mode that does not
// run a path has no weight for its features).
var calibrations = [3]calibration{
	memory.Hybrid:      {bias: -4, kw: 4, cos: 3},
	memory.VectorOnly:  {bias: -4, cos: 6},
	memory.KeywordOnly: {bias: -4, kw: 5},
}

// relevance is P(the hit is what the query looks for | f) in mode.
func relevance(mode memory.Mode, f features) float64 {
	c := calibrations[mode]
	z := c.bias + c.kw*f.kw + c.sqrtKW*math.Sqrt(max(f.kw, 0)) + c.cos*f.cos +
		c.kwBest*f.kwBest + c.cosBest*f.cosBest + c.cover*f.cover
	return 1 / (1 + math.Exp(-z))
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
