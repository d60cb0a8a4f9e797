// Package ranking holds the parts of long-term ranking that the in-process
// engine (memory/longterm) and the PostgreSQL store (memory/postgres)
// share, so that the two rank alike: the fusion of the vector and the
// keyword path's scores, what a record's neighbours add to its keyword
// score, the choice of a hit's snippets, the checks of the ranking options
// and the question words a query leaves out.
package ranking

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory"
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
// within SnippetRatio of the best score, if it is positive: a child whose
// vector shares nothing with the query's (a cosine of 0, as a lexical
// embedder gives a sentence without a query word) did not match.
func Snippets(tok keyword.Tokenizer, qterms map[string]bool, children []string, byKeyword bool, byVector []Child) []int {
	var matched []int
	if byKeyword {
		best := 0
		counts := make([]int, len(children))
		seen := map[string]bool{}
		for j, toks := range keyword.TokensEach(tok, children) {
			clear(seen)
			for _, t := range toks {
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
	if len(byVector) > 0 && byVector[0].Score > 0 {
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

// MinDepth is the fewest candidates each path of a search brings: see
// Depth.
const MinDepth = 200

// Depth returns how many candidates each path brings to a search that
// keeps n of them (its K, or a reranker's depth when larger): 4n, at least
// MinDepth. Every score a search computes from its candidates (what a
// record's neighbours lend it, the fusion's best keyword score and median
// cosine) depends on how many there are; with the floor, a search's first
// results are the same for every n up to MinDepth/4 (50), so that asking
// for more results, or reranking more, does not reorder the first ones.
func Depth(n int) int {
	return max(4*n, MinDepth)
}

// FusionKind selects how Fuse combines the two paths of a hybrid search.
type FusionKind int

const (
	// ScoreFusion calibrates each path's scores to [0, 1] over the
	// candidates (the vector path by min–max, the keyword path relative to
	// its best) and adds them, weighted.
	ScoreFusion FusionKind = iota
	// RRF is reciprocal rank fusion: Σ 1/(RRFK + rank) over the paths.
	RRF
	// WeightedFusion adds VectorWeight·cosine (below 0 counts as 0) and
	// KeywordWeight·(BM25 / the best BM25 of the query).
	WeightedFusion
	// MarginFusion scores the vector path by how far a candidate's cosine
	// stands above the median candidate's, on the cosine's own scale:
	// (cosine − median) / (1 − median), below 0 counting as 0. The
	// keyword path counts relative to its best, as in ScoreFusion, and the
	// two are added, weighted. Unlike ScoreFusion's min–max, it keeps how
	// sure the vector path is: a near copy of the query standing far
	// above the rest counts almost fully, the best of a crowd of equal
	// cosines little.
	MarginFusion
)

// DefaultKind is the fusion of a memory over emb that no option chooses:
// ScoreFusion over a model embedder (embed.KindOf is embed.Model), whose
// cosines have no common scale; MarginFusion over vectors that do not
// model meaning (embed.Lexical, embed.WordVectors), whose cosine says how
// much of the query's words a text shares.
func DefaultKind(emb embed.Embedder) FusionKind {
	if embed.KindOf(emb) == embed.Model {
		return ScoreFusion
	}
	return MarginFusion
}

// Fusion is how a hybrid search fuses its paths.
type Fusion struct {
	Kind                        FusionKind
	VectorWeight, KeywordWeight float64 // ScoreFusion, WeightedFusion and MarginFusion
	RRFK                        float64 // RRF
}

// Paths is what each path found of one candidate: its score (the best
// child's cosine; the record's keyword score) and its 1-based rank on each
// path that found it.
type Paths struct {
	HasVec, HasKW     bool
	VecScore, KWScore float64
	VecRank, KWRank   int
}

// Fuse returns the score of each candidate of a search in mode: the order
// of the results and the score memory.Hit reports.
//
// A single-path search has nothing to fuse: its score is that path's own,
// the cosine similarity (VectorOnly, as memory.Hit documents) or the BM25
// score relative to the best of the query (KeywordOnly), in the same order
// a fusion would give. Hybrid fuses the paths as f says.
func Fuse(mode memory.Mode, f Fusion, cands []Paths) []float64 {
	return FuseFrom(mode, f, cands, VectorFloor(mode, f, cands))
}

// FuseFrom is Fuse given the candidates' floor (VectorFloor), for a caller that
// needs it too.
func FuseFrom(mode memory.Mode, f Fusion, cands []Paths, floor float64) []float64 {
	var maxKW, maxVec float64
	for _, c := range cands {
		maxKW = max(maxKW, c.KWScore)
		if c.HasVec {
			maxVec = max(maxVec, c.VecScore)
		}
	}
	out := make([]float64, len(cands))
	for i, c := range cands {
		switch {
		case mode == memory.VectorOnly:
			out[i] = c.VecScore
			continue
		case mode == memory.KeywordOnly:
			if maxKW > 0 {
				out[i] = c.KWScore / maxKW
			}
			continue
		}
		s := 0.0
		switch f.Kind {
		case RRF:
			if c.HasVec {
				s += 1 / (f.RRFK + float64(c.VecRank))
			}
			if c.HasKW {
				s += 1 / (f.RRFK + float64(c.KWRank))
			}
		case WeightedFusion:
			if c.HasVec {
				s += f.VectorWeight * max(c.VecScore, 0)
			}
			if c.HasKW && maxKW > 0 {
				s += f.KeywordWeight * c.KWScore / maxKW
			}
		case MarginFusion:
			if c.HasVec && c.VecScore > floor {
				s += f.VectorWeight * (c.VecScore - floor) / (1 - floor)
			}
			if c.HasKW && maxKW > 0 {
				s += f.KeywordWeight * c.KWScore / maxKW
			}
		default: // ScoreFusion
			// From the lowest cosine to the best; all alike, each fully.
			if c.HasVec && maxVec > floor {
				s += f.VectorWeight * (c.VecScore - floor) / (maxVec - floor)
			} else if c.HasVec {
				s += f.VectorWeight
			}
			if c.HasKW && maxKW > 0 {
				s += f.KeywordWeight * c.KWScore / maxKW
			}
		}
		out[i] = s
	}
	return out
}

// Order compares two candidates of one search for its result list, as
// slices.SortFunc wants: the higher fused score (Fuse's) first; on a tie
// the higher cosine, then the higher keyword score, then the lower record
// id. Under margin fusion every vector candidate at or below the median
// gets nothing from the vector path, so candidates that the keyword path
// did not find tie at 0 and keep the vector path's order.
func Order(a, b Paths, aScore, bScore float64, aID, bID string) int {
	if c := cmp.Compare(bScore, aScore); c != 0 {
		return c
	}
	if c := cmp.Compare(b.VecScore, a.VecScore); c != 0 {
		return c
	}
	if c := cmp.Compare(b.KWScore, a.KWScore); c != 0 {
		return c
	}
	return strings.Compare(aID, bID)
}

// VectorFloor returns, for a hybrid search in mode fusing its paths as f
// does, the cosine from which it counts the vector path's share of its
// best: the median candidate's under MarginFusion (the lower of the two
// middle ones), the lowest under ScoreFusion when the candidates'
// cosines differ, 0 otherwise. A candidate at or below it owes nothing
// to the vector path: over a lexical embedder the median candidate's
// cosine is what the query's function words ("does", "you") share with
// every text.
func VectorFloor(mode memory.Mode, f Fusion, cands []Paths) float64 {
	if mode != memory.Hybrid {
		return 0
	}
	switch f.Kind {
	case MarginFusion:
		var cos []float64
		for _, c := range cands {
			if c.HasVec {
				cos = append(cos, c.VecScore)
			}
		}
		if len(cos) == 0 {
			return 0
		}
		slices.Sort(cos)
		return cos[(len(cos)-1)/2] // the lower of the two middle ones
	case ScoreFusion:
		lo, hi, found := 1.0, 0.0, false
		for _, c := range cands {
			if c.HasVec {
				lo, hi, found = min(lo, c.VecScore), max(hi, c.VecScore), true
			}
		}
		if found && hi > lo {
			return lo
		}
	}
	return 0
}
