package keyword

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestTopK_MatchesFullSort checks the bounded heap against a full sort, on
// scores with many ties (the order then falls to the ids) and every k from
// 0 past the number of candidates.
func TestTopK_MatchesFullSort(t *testing.T) {
	t.Parallel()

	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 7, 64, 65, 500} {
		cands := make([]Result, n)
		for i := range cands {
			cands[i] = Result{ID: int64(rng.IntN(1 << 30)), Score: float64(rng.IntN(9)) / 4}
		}
		slices.SortFunc(cands, func(a, b Result) int { return int(a.ID - b.ID) })
		cands = slices.CompactFunc(cands, func(a, b Result) bool { return a.ID == b.ID })
		rng.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
		want := slices.SortedFunc(slices.Values(cands), Better)
		for _, k := range []int{1, 2, 3, 10, 63, 64, 100, 400, 499, 500, 600} {
			got := TopK(slices.Clone(cands), k)
			if len(want) == 0 {
				assert.Empty(t, got, "n=%d k=%d", n, k)
				continue
			}
			assert.Equal(t, want[:min(k, len(want))], got, "n=%d k=%d", n, k)
		}
	}
}

// TestScore_MatchesIndex scores an index's documents through Score (its
// postings read from outside, as a database's would be) and checks the
// ranking against the index's own search, many times over so that pooled
// accumulators of other sizes and kinds are reused in between.
func TestScore_MatchesIndex(t *testing.T) {
	t.Parallel()

	ix := NewIndex(nil)
	rng := rand.New(rand.NewPCG(5, 6))
	words := []string{"alpha", "beta", "gamma", "delta", "order", "call", "138-0013-8000", "0013", "8000"}
	for i := range 300 {
		var text []byte
		for range 1 + rng.IntN(6) {
			text = append(text, words[rng.IntN(len(words))]...)
			text = append(text, ' ')
		}
		ix.Add(int64(1000+3*i), string(text))
	}
	p := ix.params()
	st := ix.Stats()
	df := func(term string) int { return ix.DocFreq(term) }
	postings := func(term string, each func(doc int64, tf, dl float64)) {
		tid, ok := ix.termIDs[term]
		if !ok {
			return
		}
		for _, ps := range ix.postings[tid] {
			each(ix.ids[ps.slot], float64(ps.tf), float64(ix.lens[ps.slot]))
		}
	}
	for round := range 6 {
		for _, q := range []string{"alpha order", "call 138-0013-8000", "gamma", "beta delta 8000"} {
			groups := QueryGroups(nil, q)
			want := ix.SearchGroups(groups, p, 50, nil)
			lo, hi := int64(1000), int64(1000+3*299)
			if round%2 == 1 {
				lo, hi = 0, 1<<40 // too wide to be dense: a map
			}
			got := TopK(Score(groups, p, float64(st.Docs), st.AvgLength, lo, hi, 300, df, postings), 50)
			assert.Len(t, got, len(want), "%q", q)
			for i := range min(len(got), len(want)) {
				assert.Equal(t, want[i].ID, got[i].ID, "%q #%d", q, i)
				assert.InDelta(t, want[i].Score, got[i].Score, 1e-9, "%q #%d", q, i)
			}
		}
	}
}

// TestSelectScored_MatchesTopK checks that SelectScored keeps TopK's k
// documents with their scores (the same bits), whatever the order, with
// dense and map accumulators, k below, at and past the number scored, and
// a reused dst.
func TestSelectScored_MatchesTopK(t *testing.T) {
	t.Parallel()

	rng := rand.New(rand.NewPCG(7, 8))
	post := map[string][][3]float64{} // term → (doc, tf, dl)
	words := []string{"alpha", "beta", "gamma", "delta", "order"}
	for i := range 2000 {
		for _, w := range words {
			if rng.IntN(3) == 0 {
				post[w] = append(post[w], [3]float64{float64(10 + i), float64(1 + rng.IntN(3)), float64(5 + rng.IntN(40))})
			}
		}
	}
	df := func(term string) int { return len(post[term]) }
	postings := func(term string, each func(doc int64, tf, dl float64)) {
		for _, p := range post[term] {
			each(int64(p[0]), p[1], p[2])
		}
	}
	byID := func(a, b Result) int { return cmp.Compare(a.ID, b.ID) }
	var dst []Result
	for _, q := range []string{"alpha", "beta order", "gamma delta alpha", "missing"} {
		groups := QueryGroups(nil, q)
		for _, wide := range []bool{false, true} {
			lo, hi := int64(10), int64(2009)
			if wide {
				lo, hi = 0, 1<<40 // too wide to be dense: a map
			}
			all := Score(groups, DefaultParams(), 2000, 25, lo, hi, 3000, df, postings)
			for _, k := range []int{1, 10, 400, len(all), len(all) + 5} {
				want := TopK(slices.Clone(all), k)
				dst = SelectScored(dst, groups, DefaultParams(), 2000, 25, lo, hi, 3000, k, df, postings)
				got := slices.Clone(dst)
				slices.SortFunc(want, byID)
				slices.SortFunc(got, byID)
				if len(want) == 0 {
					assert.Empty(t, got, "%q k=%d", q, k)
					continue
				}
				assert.Equal(t, want, got, "%q wide=%v k=%d", q, wide, k)
			}
		}
	}
	assert.Empty(t, SelectScored(dst, QueryGroups(nil, "alpha"), DefaultParams(), 2000, 25, 10, 2009, 3000, 0, df, postings))
}

// TestSelectBest checks the quickselect against a full sort: the first k
// after it are the sort's first k, as a set, on scores with many ties,
// shuffled and already sorted either way (the pivots' worst cases).
func TestSelectBest(t *testing.T) {
	t.Parallel()

	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{2, 3, 16, 17, 40, 401, 1000, 5000} {
		for _, spread := range []int{1, 3, 1 << 20} {
			cands := make([]Result, n)
			for i := range cands {
				cands[i] = Result{ID: int64(i * 3), Score: float64(rng.IntN(spread)) / 4}
			}
			want := slices.SortedFunc(slices.Values(cands), Better)
			for _, order := range []string{"shuffled", "sorted", "reversed"} {
				switch order {
				case "shuffled":
					rng.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
				case "sorted":
					copy(cands, want)
				default:
					copy(cands, want)
					slices.Reverse(cands)
				}
				for _, k := range []int{1, 2, n / 3, n / 2, n - 1} {
					if k < 1 || k >= n {
						continue
					}
					c := slices.Clone(cands)
					selectBest(c, k)
					got := slices.SortedFunc(slices.Values(c[:k]), Better)
					assert.Equal(t, want[:k], got, "n=%d spread=%d %s k=%d", n, spread, order, k)
					assert.Equal(t, want, slices.SortedFunc(slices.Values(c), Better), "a permutation")
				}
			}
		}
	}
}

// TestSelectGroups_MatchesSearch: SelectGroups returns SearchGroups'
// results, scores included, in another order.
func TestSelectGroups_MatchesSearch(t *testing.T) {
	t.Parallel()

	ix := NewIndex(nil)
	rng := rand.New(rand.NewPCG(11, 12))
	words := []string{"alpha", "beta", "gamma", "delta", "order", "call", "138-0013-8000", "0013", "8000"}
	for i := range 2000 {
		var text []byte
		for range 1 + rng.IntN(6) {
			text = append(text, words[rng.IntN(len(words))]...)
			text = append(text, ' ')
		}
		ix.Add(int64(7*i), string(text))
	}
	p := ix.params()
	odd := func(id int64) bool { return id%2 == 1 }
	for _, q := range []string{"alpha order", "call 138-0013-8000", "gamma", "beta delta 8000", "nothing"} {
		groups := QueryGroups(nil, q)
		for _, k := range []int{1, 3, 50, 400, 5000} {
			for _, keep := range []func(int64) bool{nil, odd} {
				want := ix.SearchGroups(groups, p, k, keep)
				got := ix.SelectGroups(make([]Result, 3), groups, p, k, keep)
				assert.Len(t, got, len(want), "%q k=%d", q, k)
				if len(want) == 0 {
					continue
				}
				assert.Equal(t, want, slices.SortedFunc(slices.Values(got), Better), "%q k=%d", q, k)
			}
		}
	}
}
