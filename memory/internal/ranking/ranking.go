// Package ranking holds the parts of long-term ranking that the in-process
// engine (memory/longterm) and the PostgreSQL store (memory/postgres)
// share, so that the two rank alike: the choice of a hit's snippets and
// the checks of the ranking options, the question words a query leaves out.
package ranking

import (
	"fmt"
	"math"
	"slices"

	"github.com/agentmem/agentmem/keyword"
)

// SnippetRatio: a child (chunk) is a snippet when it scores at least this
// share of its record's best child on the same path. The best child alone
// would hide a second sentence that matched nearly as well; every child the
// path returned would, with a small store, be the whole record.
const SnippetRatio = 0.75

// Child is a child the vector path matched: its index in the record and
// its cosine similarity.
type Child struct {
	Index int
	Score float64
}

// Snippets returns, in text order, the indexes of a record's children that
// matched: with byKeyword, those that share at least SnippetRatio of the
// most query terms any child shares; and of byVector (best first), those
// within SnippetRatio of the best score.
func Snippets(tok keyword.Tokenizer, qterms map[string]bool, children []string, byKeyword bool, byVector []Child) []int {
	var matched []int
	if byKeyword {
		best := 0
		counts := make([]int, len(children))
		for j, ch := range children {
			seen := map[string]bool{}
			for _, t := range tok.Tokens(ch) {
				if qterms[t] && !seen[t] {
					seen[t] = true
					counts[j]++
				}
			}
			best = max(best, counts[j])
		}
		for j, n := range counts {
			if best > 0 && float64(n) >= SnippetRatio*float64(best) {
				matched = append(matched, j)
			}
		}
	}
	if len(byVector) > 0 {
		top := byVector[0].Score
		for _, c := range byVector {
			if c.Score >= SnippetRatio*top {
				matched = append(matched, c.Index)
			}
		}
	}
	slices.Sort(matched)
	return slices.Compact(matched)
}

// CheckWeights accepts fusion weights that are finite, ≥ 0 and not all 0.
func CheckWeights(ws ...float64) error {
	sum := 0.0
	for _, w := range ws {
		if err := NonNegative("fusion weight", w); err != nil {
			return err
		}
		sum += w
	}
	if sum == 0 {
		return fmt.Errorf("fusion weights are all 0")
	}
	return nil
}

// NonNegative accepts a finite number ≥ 0.
func NonNegative(what string, v float64) error {
	if !(v >= 0) || math.IsInf(v, 0) {
		return fmt.Errorf("%s %v is not a finite number ≥ 0", what, v)
	}
	return nil
}

// Unit accepts a number in [0, 1].
func Unit(what string, v float64) error {
	if !(v >= 0 && v <= 1) {
		return fmt.Errorf("%s %v is not in [0, 1]", what, v)
	}
	return nil
}
