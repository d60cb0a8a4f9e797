package engine

// Query expansion on the keyword path: the words WithQueryExpansion
// relates to the query's, and RM3's relevance feedback (WithFeedback).

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"unicode"

	"github.com/agentmem/agentmem/keyword"
)

// relatedTerms returns the terms of the words WithQueryExpansion relates
// to the query's words, minus the query's own terms, each at the related
// weight.
func (e *Engine) relatedTerms(query string, own map[string]bool) []keyword.WeightedTerm {
	related := e.cfg.related
	if related == nil {
		return nil
	}
	var out []keyword.WeightedTerm
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if seen[w] || len(e.tok.Tokens(w)) == 0 { // a stop word has no terms: no neighbours either
			continue
		}
		seen[w] = true
		for _, rw := range related(w) {
			for _, t := range e.tok.Tokens(rw) {
				if !own[t] && !seen["\x00"+t] {
					seen["\x00"+t] = true
					out = append(out, keyword.WeightedTerm{Term: t, Weight: e.cfg.relatedWeight})
				}
			}
		}
	}
	return out
}

// feedbackTerms is RM3's expansion: the relevance model of the top
// records, P(t|R) = Σ_d P(d|q)·tf(t,d)/|d| with P(d|q) the record's share
// of the top scores, its best terms (not the query's) weighted in
// proportion to P(t|R), the best at the feedback weight.
func (n *nsSearch[K]) feedbackTerms(ctx context.Context, top []scored[K], own map[string]bool) ([]keyword.WeightedTerm, error) {
	cfg := &n.e.cfg
	if cfg.feedbackDocs <= 0 || len(top) == 0 {
		return nil, nil
	}
	top = top[:min(len(top), cfg.feedbackDocs)]
	var total float64
	for _, s := range top {
		total += s.score
	}
	if total <= 0 {
		return nil, nil
	}
	p := map[string]float64{}
	for _, s := range top {
		terms, length, err := n.ns.Terms(ctx, s.nsID)
		if err != nil {
			return nil, err
		}
		if length == 0 {
			continue
		}
		for _, tc := range terms {
			if !own[tc.Term] {
				p[tc.Term] += s.score / total * float64(tc.Count) / float64(length)
			}
		}
	}
	out := make([]keyword.WeightedTerm, 0, len(p))
	for t, v := range p {
		out = append(out, keyword.WeightedTerm{Term: t, Weight: v})
	}
	slices.SortFunc(out, func(a, b keyword.WeightedTerm) int {
		if c := cmp.Compare(b.Weight, a.Weight); c != 0 {
			return c
		}
		return strings.Compare(a.Term, b.Term)
	})
	out = out[:min(len(out), cfg.feedbackTerms)]
	if len(out) == 0 {
		return nil, nil
	}
	best := out[0].Weight
	for i := range out {
		out[i].Weight = cfg.feedbackWeight * out[i].Weight / best
	}
	return out, nil
}
