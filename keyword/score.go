package keyword

import (
	"cmp"
	"slices"
	"sync"
)

// Score scores documents for groups by BM25 exactly as an [Index] with
// parameters p does, over statistics and postings kept elsewhere (a
// database, say): n documents of average length avg; df(term) is a term's
// document frequency and postings(term, each) calls each for every
// posting of the term (document, term frequency, document length).
// Documents lie in [lo, hi] and there are about count postings, which
// chooses between a dense and a sparse accumulator. The results come in
// no particular order, each with a positive score.
func Score(groups []QueryGroup, p Params, n, avg float64, lo, hi int64, count int,
	df func(term string) int, postings func(term string, each func(doc int64, tf, dl float64))) []Result {
	return scoreInto(nil, groups, p, n, avg, lo, hi, count, df, postings)
}

// SelectScored is Score's k best documents (as [TopK] picks them: by
// score, ties by ascending id) appended to dst[:0] in no particular order,
// with the same scores: what a caller that only sums scores per document
// needs, without Score's slice of every document scored (tens of
// thousands for a common word) or a sort. It reuses dst.
func SelectScored(dst []Result, groups []QueryGroup, p Params, n, avg float64, lo, hi int64, count, k int,
	df func(term string) int, postings func(term string, each func(doc int64, tf, dl float64))) []Result {
	dst = dst[:0]
	if k <= 0 {
		return dst
	}
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	s.cands = scoreInto(s.cands[:0], groups, p, n, avg, lo, hi, count, df, postings)
	return appendBest(dst, s.cands, k)
}

// scoreInto is Score, its results appended to out.
func scoreInto(out []Result, groups []QueryGroup, p Params, n, avg float64, lo, hi int64, count int,
	df func(term string) int, postings func(term string, each func(doc int64, tf, dl float64))) []Result {
	if avg == 0 {
		avg = 1
	}
	c0, c1 := p.K1*(1-p.B), p.K1*p.B/avg
	scores := newAccum(lo, hi, count)
	term := func(t string, each func(key int64, v float64)) {
		d := float64(df(t))
		if d == 0 {
			return
		}
		w := TermWeight(n, d, p.QueryIDF) * (p.K1 + 1)
		postings(t, func(key int64, tf, dl float64) { each(key, w*tf/(tf+c0+c1*dl)) })
	}
	var main, parts *accum
	for _, g := range groups {
		gw := cmp.Or(g.Weight, 1)
		if len(g.Main) == 1 && len(g.Parts) == 0 {
			// A plain word: straight into the document scores.
			term(g.Main[0], func(key int64, v float64) { scores.add(key, gw*v) })
			continue
		}
		if main == nil {
			main, parts = newAccum(lo, hi, count), newAccum(lo, hi, count)
		}
		for _, t := range g.Main {
			term(t, main.max)
		}
		pw := PartWeight / float64(max(len(g.Parts), 1))
		for _, t := range g.Parts {
			term(t, func(key int64, v float64) { parts.add(key, pw*v) })
		}
		main.each(func(key int64, v float64) { scores.add(key, gw*max(v, parts.get(key))) })
		parts.each(func(key int64, v float64) {
			if main.get(key) == 0 {
				scores.add(key, gw*v)
			}
		})
		main.reset()
		parts.reset()
	}
	out = scores.appendTo(out)
	scores.release()
	if main != nil {
		main.release()
		parts.release()
	}
	return out
}

// TopK returns the k best of results (best first, ties by ascending id), as
// an Index's searches order theirs; results may be reordered.
func TopK(results []Result, k int) []Result {
	if k <= 0 {
		return nil
	}
	return topK(results, k)
}

// accum holds a positive score per key (0: none): in a slice over the
// keys' range when it is dense enough, else in a map.
type accum struct {
	lo    int64
	dense []float64
	keys  []int64 // dense: the keys set, in order of first add
	m     map[int64]float64
}

// accumPool keeps released accumulators, all zero, so that a search does
// not allocate a slice over the namespace's id range (or a map) each time.
var accumPool sync.Pool

func newAccum(lo, hi int64, count int) *accum {
	a, _ := accumPool.Get().(*accum)
	if hi >= lo && hi-lo < 4*int64(count)+1024 {
		if a != nil && a.dense != nil && int64(cap(a.dense)) > hi-lo {
			a.lo, a.dense = lo, a.dense[:hi-lo+1]
			return a
		}
		return &accum{lo: lo, dense: make([]float64, hi-lo+1)}
	}
	if a != nil && a.m != nil {
		return a
	}
	return &accum{m: make(map[int64]float64, count)}
}

// release zeroes a and returns it to accumPool; a must not be used again.
func (a *accum) release() {
	a.reset()
	if a.dense != nil {
		a.dense = a.dense[:cap(a.dense)] // zero past len too: reset keeps it so
	}
	accumPool.Put(a)
}

func (a *accum) add(key int64, v float64) {
	if a.m != nil {
		a.m[key] += v
		return
	}
	p := &a.dense[key-a.lo]
	if *p == 0 {
		a.keys = append(a.keys, key)
	}
	*p += v
}

func (a *accum) max(key int64, v float64) {
	if a.m != nil {
		a.m[key] = max(a.m[key], v)
		return
	}
	p := &a.dense[key-a.lo]
	if *p == 0 {
		a.keys = append(a.keys, key)
	}
	*p = max(*p, v)
}

func (a *accum) get(key int64) float64 {
	if a.m != nil {
		return a.m[key]
	}
	if key < a.lo || key-a.lo >= int64(len(a.dense)) {
		return 0
	}
	return a.dense[key-a.lo]
}

func (a *accum) len() int {
	if a.m != nil {
		return len(a.m)
	}
	return len(a.keys)
}

// appendTo appends every key with its score to out.
func (a *accum) appendTo(out []Result) []Result {
	out = slices.Grow(out, a.len())
	if a.m != nil {
		for k, v := range a.m {
			out = append(out, Result{ID: k, Score: v})
		}
		return out
	}
	for _, k := range a.keys {
		out = append(out, Result{ID: k, Score: a.dense[k-a.lo]})
	}
	return out
}

// each calls f for every key with a score.
func (a *accum) each(f func(key int64, v float64)) {
	if a.m != nil {
		for k, v := range a.m {
			f(k, v)
		}
		return
	}
	for _, k := range a.keys {
		f(k, a.dense[k-a.lo])
	}
}

func (a *accum) reset() {
	if a.m != nil {
		clear(a.m)
		return
	}
	for _, k := range a.keys {
		a.dense[k-a.lo] = 0
	}
	a.keys = a.keys[:0]
}

// MaxScore is the most a document can score for groups by BM25 with p
// among n documents where df(term) is a term's document frequency: what
// a document that holds every term of the query, each infinitely often,
// would score. A term in no document counts with the idf it would have in
// one (IDF(n, 0)): a query about words a collection has never seen has a
// high bound that nothing in it reaches. A score divided by it is in
// [0, 1] and means the same in every collection: how much of the query a
// document matches, weighted by how rare the words it matches are.
func MaxScore(groups []QueryGroup, p Params, n float64, df func(term string) int) float64 {
	w := func(t string) float64 { return TermWeight(n, float64(df(t)), p.QueryIDF) }
	total := 0.0
	for _, g := range groups {
		best := 0.0
		for _, t := range g.Main {
			best = max(best, w(t))
		}
		if len(g.Parts) > 0 {
			parts := 0.0
			for _, t := range g.Parts {
				parts += w(t)
			}
			best = max(best, PartWeight/float64(len(g.Parts))*parts)
		}
		total += cmp.Or(g.Weight, 1) * best
	}
	return total * (p.K1 + 1)
}
