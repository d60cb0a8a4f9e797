package engine

import (
	"fmt"
	"math"
	"slices"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/internal/ranking"
)

// DefaultMinRelevance is the lowest relevance a hit may have when neither
// the query (memory.Query.MinRelevance) nor WithMinRelevance sets one:
// about the highest that keeps every development set's hybrid recall@10
// as it was at the former default, 0.18 (at least 95% of it without a
// minimum), every question asked again as a probe in another conversation
// (`agentmem eval --cross-probes`, hash:512), and the facts stories' (issue
// 24) versions valid at a past moment found for at least 85% of their
// questions. Measured 2026-12-04, with the unknown-name factor
// (unknownNameFactor; before it in brackets): the bundled testdata/eval
// keeps 0.957, its probes surfacing a hit 7% of the time (9%); MemoryBank
// keeps 0.884 of 0.919, probes 60% (61%; since a named day lends to its
// weakly matched records too and recap questions find their period's
// talk, 0.944 of 0.970, probes 65%); its Chinese version 0.925,
// probes 82% (82%: no capitals, no names); RealMem keeps 0.321 of 0.331
// (0.326), probes 46% (61%), 0.325 at 0.18; the stories find the current
// version for 86.2% (85.0%) and the past one for 85.8% (85.8%). Before
// the factor, at 0.23 the stories' past versions fell to 84.8%; at 0.24 the bundled set loses
// "陈静的猫叫什么名字？" (the cat's name is said in a turn that does not say
// "cat"). A stricter minimum trades recall for silence: on RealMem 0.31
// keeps 91% of recall@10 (0.302 of 0.331) and surfaces 31% of probes,
// 0.40 keeps 85% and surfaces 21% (`agentmem eval --cross-probes
// --sweep-relevance` prints the whole curve). RealMem's questions are a user's next message
// ("What's the next step?"), and the tenth of its found answers with the
// lowest relevance look like its median probe (the best hit holds 22% of
// the query's words against 21%, the namespace 64% of its weight against
// 66%).
const DefaultMinRelevance = 0.22

// features are what the relevance of a hit is computed from, each with
// one meaning in every namespace and store: the hit's keyword score
// relative to the most its namespace allows (kw) and its best chunk's
// cosine (cos); the best of each among the search's candidates (kwBest,
// cosBest); the share of the query's weight that occurs in the namespace
// at all (cover); and the share of the query's words, all alike, that the
// search's best hit holds, its speaker's name counted (share:
// search.bestShare).
type features struct {
	kw, cos, kwBest, cosBest, cover, share float64
	// unknown: the query names something (ranking.Names) its namespace
	// never mentions (search.unknownNames).
	unknown bool
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
// questions, each with a cross-conversation probe), hash:512; refitted
// 2026-12-04 with unknownNameFactor (hybrid log loss 0.443 with it, 0.452
// before), and 2026-12-02 after the share counted a hit's speaker (log loss 0.452
// against the base rate's 0.693).
var calibrations = [3]calibration{
	memory.Hybrid:      {bias: -4.7679, kwBest: 2.6164, sqrtKWBest: 3.3344, cosBest: 2.0514, cover: 1.7888, share: 1.5301},
	memory.VectorOnly:  {bias: -2.8901, cosBest: 4.3857, share: 4.3498},
	memory.KeywordOnly: {bias: -4.2489, kwBest: 2.7041, sqrtKWBest: 3.5992, cover: 1.9417, share: 1.6129},
}

// unknownNameFactor is what a search keeps of its probability when the
// query names something its namespace never mentions ("What is the
// capital of Mongolia?" of a conversation about capital allocation): the
// factor of highest likelihood given the calibrations, fitted with them
// by `agentmem eval --calibrate` (2026-12-04, the pool of calibrations: 5%
// of the answerable questions name something their conversation had not
// mentioned when they were asked, RealMem's 6%, where 37% of the probes
// do, RealMem's 43%, the bundled set's 31%). The vector path alone does
// not read the namespace's words to know.
const unknownNameFactor = 0.55

// gate is the probability that the memory holds what the query asks
// about: the search's calibration, from f's kwBest, cosBest, cover and
// share, times unknownNameFactor when f.unknown.
func gate(mode memory.Mode, f features) float64 {
	c := calibrations[mode]
	z := c.bias + c.kwBest*f.kwBest + c.sqrtKWBest*math.Sqrt(max(f.kwBest, 0)) + c.cosBest*f.cosBest + c.cover*f.cover + c.share*f.share
	p := 1 / (1 + math.Exp(-z))
	if f.unknown && mode != memory.VectorOnly {
		p *= unknownNameFactor
	}
	return p
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

// unknownNames returns the query's names (ranking.Names) none of whose
// terms occurs in ns (df, by term: at) and that no speaker of ns bears. A
// name with a term the keyword path does not search for (a question word)
// is not judged.
func (s *search[K]) unknownNames(ns Namespace[K], at map[string]int) []string {
	if s.names == nil {
		s.names = map[string][]string{}
		for _, n := range ranking.Names(s.text) {
			s.names[n] = s.e.tok.Tokens(n)
		}
	}
	if len(s.names) == 0 {
		return nil
	}
	var spoken map[string]bool
	var out []string
	for name, terms := range s.names {
		if len(terms) == 0 || slices.ContainsFunc(terms, func(t string) bool { df, ok := at[t]; return !ok || df > 0 }) {
			continue
		}
		if spoken == nil {
			spoken = map[string]bool{}
			for _, sp := range ns.Speakers() {
				for _, t := range s.e.tok.Tokens(sp) {
					spoken[t] = true
				}
			}
		}
		if !slices.ContainsFunc(terms, func(t string) bool { return spoken[t] }) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// noteUnknown keeps the fewest unknown names of the namespaces the
// keyword path searched (search.fewest), given a namespace's.
func (s *search[K]) noteUnknown(unknown []string) {
	if !s.known && (s.fewest == nil || len(unknown) < len(s.fewest)) {
		s.fewest, s.known = unknown, len(unknown) == 0
	}
}

// timedTerms returns the query's terms that occur only in its time
// references ("may", "2nd" in "On May 2nd, what …"), found once a search.
func (s *search[K]) timedTerms() map[string]bool {
	if s.timed != nil {
		return s.timed
	}
	s.timed = map[string]bool{}
	if q := ranking.WithoutTimeRefs(s.text); q != s.text {
		for _, t := range s.e.tok.Tokens(s.text) {
			s.timed[t] = true
		}
		for _, t := range s.e.tok.Tokens(q) {
			delete(s.timed, t)
		}
	}
	return s.timed
}
