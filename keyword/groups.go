package keyword

import "math"

// QueryGroup is one word or code of a query as [Index.Search] scores it:
// its whole forms (Main: "138-0013-8000", "13800138000") and its parts
// (Parts: "138", "0013", "8000"), and its weight in the query (0 means 1).
// A plain word has one Main form and no Parts.
type QueryGroup struct {
	Main, Parts []string
	Weight      float64
}

// Params are BM25's parameters as a query is scored with them: K1
// (term-frequency saturation), B (length normalisation), K3 (query term
// frequency, see [WithQueryTF]; 0 counts a repeated word once) and
// QueryIDF (see [WithQueryIDF]).
type Params struct {
	K1, B, K3 float64
	QueryIDF  bool
}

// DefaultParams are an [Index]'s parameters without options.
func DefaultParams() Params { return Params{K1: DefaultK1, B: DefaultB} }

// QueryGroups returns the distinct groups of query's terms as
// [Index.Search] scores them with tok (a nil tok means NewTokenizer() with
// its defaults), each of weight 1: [ParseQuery] with k3 = 0.
func QueryGroups(tok Tokenizer, query string) []QueryGroup {
	return ParseQuery(tok, query, 0)
}

// ParseQuery returns the distinct groups of query's terms as an index
// with [WithQueryTF](k3) scores them with tok (a nil tok means
// NewTokenizer() with its defaults), so that a BM25 index kept elsewhere
// (in a database, say) ranks exactly as an Index does: each group counts
// once (or, with k3 > 0, by how often the query repeats it), the best of
// its Main forms or [PartWeight] times the mean of its Parts, whichever is
// higher. With a Tokenizer not made by [NewTokenizer], each distinct term
// is a group of its own.
func ParseQuery(tok Tokenizer, query string, k3 float64) []QueryGroup {
	if tok == nil {
		tok, _ = NewTokenizer()
	}
	ix := &Index{tok: tok}
	WithQueryTF(k3)(ix)
	gs := ix.groups(query)
	out := make([]QueryGroup, len(gs))
	for i, g := range gs {
		out[i] = QueryGroup{Main: g.main, Parts: g.parts, Weight: g.weight}
	}
	return out
}

// Terms returns the distinct terms of groups (their whole forms and
// parts), in the order they first occur: what a BM25 index kept elsewhere
// must read the postings and statistics of to score groups.
func Terms(groups []QueryGroup) []string {
	var out []string
	seen := map[string]bool{}
	for _, g := range groups {
		for _, list := range [2][]string{g.Main, g.Parts} {
			for _, t := range list {
				if !seen[t] {
					seen[t] = true
					out = append(out, t)
				}
			}
		}
	}
	return out
}

// WeightedGroups returns terms as query groups of one term each, at their
// weights, as [Index.SearchTerms] scores them: terms with a weight ≤ 0 or
// infinite are left out; a term given twice counts twice.
func WeightedGroups(terms []WeightedTerm) []QueryGroup {
	out := make([]QueryGroup, 0, len(terms))
	for _, t := range terms {
		if t.Weight > 0 && !math.IsInf(t.Weight, 0) {
			out = append(out, QueryGroup{Main: []string{t.Term}, Weight: t.Weight})
		}
	}
	return out
}

// params returns the index's own BM25 parameters (NewIndex's options).
func (ix *Index) params() Params {
	return Params{K1: ix.k1, B: ix.b, K3: ix.k3, QueryIDF: ix.queryIDF}
}
