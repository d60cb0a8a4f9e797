package keyword

import (
	"cmp"
	"math/bits"
	"slices"
)

// Better orders results best first: by descending score, ties by
// ascending id, the order of TopK's results (a comparison function for
// slices.SortFunc).
func Better(a, b Result) int {
	if a.Score != b.Score {
		if a.Score > b.Score {
			return -1
		}
		return 1
	}
	return cmp.Compare(a.ID, b.ID)
}

// topK returns a new slice with the k best of cands, sorted (cands may be
// reordered). Past k candidates it keeps the best k in a bounded heap whose
// root is the worst of them, and sorts only those: O(n log k) instead of
// sorting every match (a common word matches most of a namespace, and the
// engine asks for hundreds). Better is a total order (ids are distinct), so
// the result is the full sort's first k.
func topK(cands []Result, k int) []Result {
	if len(cands) == 0 {
		return nil
	}
	if len(cands) <= k {
		slices.SortFunc(cands, Better)
		return slices.Clone(cands)
	}
	h := make([]Result, k, k+1)
	copy(h, cands[:k])
	for i := k/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	for _, c := range cands[k:] {
		// Only a candidate better than the worst kept gets in.
		if w := h[0]; c.Score < w.Score || c.Score == w.Score && c.ID > w.ID {
			continue
		}
		h[0] = c
		siftDown(h, 0)
	}
	slices.SortFunc(h, Better)
	return h
}

// appendBest appends to dst the k best of cands (all of them if no more),
// as topK picks them, in no particular order; cands is reordered.
// (Index.SelectGroups and SelectScored.)
func appendBest(dst, cands []Result, k int) []Result {
	if len(cands) > k {
		selectBest(cands, k)
		cands = cands[:k]
	}
	return append(dst, cands...)
}

// selectBest reorders c so that its first k (0 < k < len(c)) are its k
// best by Better, in no particular order: a quickselect (median-of-three
// pivots) that falls back to sorting the part left when its pivots keep
// splitting badly, so it stays O(n log n) at worst. Better is a total
// order (ids are distinct), so the k are topK's.
func selectBest(c []Result, k int) {
	lo, hi := 0, len(c)-1
	for budget := 2 * bits.Len(uint(len(c))); lo < hi; budget-- {
		if hi-lo < 16 || budget == 0 {
			slices.SortFunc(c[lo:hi+1], Better)
			return
		}
		m := lo + (hi-lo)/2
		if Better(c[m], c[lo]) < 0 {
			c[m], c[lo] = c[lo], c[m]
		}
		if Better(c[hi], c[lo]) < 0 {
			c[hi], c[lo] = c[lo], c[hi]
		}
		if Better(c[hi], c[m]) < 0 {
			c[hi], c[m] = c[m], c[hi]
		}
		c[m], c[hi] = c[hi], c[m] // the median of the three is the pivot, at hi
		pv := c[hi]
		i := lo
		for j := lo; j < hi; j++ {
			if c[j].Score > pv.Score || c[j].Score == pv.Score && c[j].ID < pv.ID {
				c[i], c[j] = c[j], c[i]
				i++
			}
		}
		c[i], c[hi] = c[hi], c[i]
		// c[lo:i] are better than the pivot, now at i; c[i+1:hi+1] worse.
		switch {
		case i == k || i == k-1:
			return
		case i > k:
			hi = i - 1
		default:
			lo = i + 1
		}
	}
}

// siftDown restores the heap below i in h, a heap whose root is its worst
// result (by Better).
func siftDown(h []Result, i int) {
	for {
		l, w := 2*i+1, i
		if l < len(h) && Better(h[l], h[w]) > 0 {
			w = l
		}
		if r := l + 1; r < len(h) && Better(h[r], h[w]) > 0 {
			w = r
		}
		if w == i {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}
