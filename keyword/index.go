// Package keyword is the exact-match path of long-term memory: a tokenizer
// that keeps names, codes, numbers and identifiers findable in English,
// Chinese, Japanese and Korean, and an in-memory BM25 inverted index over
// int64 ids.
//
// The index stores terms, not texts: callers keep their texts and hand
// them to [Index.Add]. [Index.Export] and [Index.Import] write and read a
// versioned, checksummed snapshot so that reopening a large index does not
// tokenize anything again.
package keyword

import (
	"cmp"
	"math"
	"slices"
	"sync"
)

// Default BM25 parameters.
const (
	DefaultK1 = 1.2  // term-frequency saturation
	DefaultB  = 0.75 // document-length normalisation
)

// Result is one search hit.
type Result struct {
	ID    int64
	Score float64 // BM25 score, > 0
}

// An IndexOption configures [NewIndex].
type IndexOption func(*Index)

// WithK1 sets BM25's k1 (term-frequency saturation), default 1.2. A
// negative, NaN or infinite value means the default; 0 makes term
// frequency irrelevant.
func WithK1(k1 float64) IndexOption {
	return func(ix *Index) {
		if k1 >= 0 && !math.IsInf(k1, 0) {
			ix.k1 = k1
		}
	}
}

// WithB sets BM25's b (length normalisation), default 0.75. Values outside
// [0, 1] (and NaN) mean the default.
func WithB(b float64) IndexOption {
	return func(ix *Index) {
		if b >= 0 && b <= 1 {
			ix.b = b
		}
	}
}

// Index is a BM25 inverted index over documents identified by int64 ids.
// The zero value is not usable; call [NewIndex]. An Index is safe for
// concurrent use by multiple goroutines: searches run in parallel, and
// tokenizing happens outside the lock.
type Index struct {
	tok   Tokenizer
	k1, b float64

	mu       sync.RWMutex
	termIDs  map[string]uint32 // term → index into postings
	terms    []string          // index → term
	postings [][]posting       // per term, unordered; len = document frequency
	slots    map[int64]uint32  // document id → slot
	docs     []doc             // per slot; free slots have terms == nil and id -1
	free     []uint32          // free slots
	ndocs    int
	totalLen int64 // sum of document lengths, in tokens
}

type posting struct {
	slot uint32
	tf   uint32
}

type doc struct {
	id     int64
	length uint32
	terms  []termRef // sorted by term
	used   bool
}

// termRef is one distinct term of a document and where the document sits
// in that term's posting list (so that Delete is O(terms of the doc)).
type termRef struct {
	term uint32
	pos  uint32
}

// NewIndex returns an empty index that tokenizes with tok (a nil tok means
// NewTokenizer() with its defaults).
func NewIndex(tok Tokenizer, opts ...IndexOption) *Index {
	if tok == nil {
		tok, _ = NewTokenizer()
	}
	ix := &Index{tok: tok, k1: DefaultK1, b: DefaultB}
	for _, o := range opts {
		o(ix)
	}
	ix.reset()
	return ix
}

func (ix *Index) reset() {
	ix.termIDs = map[string]uint32{}
	ix.terms, ix.postings = nil, nil
	ix.slots = map[int64]uint32{}
	ix.docs, ix.free = nil, nil
	ix.ndocs, ix.totalLen = 0, 0
}

// Tokenizer returns the index's tokenizer.
func (ix *Index) Tokenizer() Tokenizer { return ix.tok }

// Len returns the number of documents, including those without terms.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.ndocs
}

// Add indexes text under id; an existing document with the same id is
// replaced. A text without terms is stored (it counts in Len) but never
// matches.
func (ix *Index) Add(id int64, text string) {
	toks := ix.tok.Tokens(text)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.addTokens(id, toks)
}

// addTokens indexes toks under id; ix.mu is held.
func (ix *Index) addTokens(id int64, toks []string) {
	ix.delete(id)
	var slot uint32
	if n := len(ix.free); n > 0 {
		slot = ix.free[n-1]
		ix.free = ix.free[:n-1]
	} else {
		slot = uint32(len(ix.docs))
		ix.docs = append(ix.docs, doc{})
	}
	tf := make(map[uint32]uint32, len(toks))
	for _, t := range toks {
		tid, ok := ix.termIDs[t]
		if !ok {
			tid = uint32(len(ix.terms))
			ix.termIDs[t] = tid
			ix.terms = append(ix.terms, t)
			ix.postings = append(ix.postings, nil)
		}
		tf[tid]++
	}
	refs := make([]termRef, 0, len(tf))
	for tid, n := range tf {
		refs = append(refs, termRef{term: tid, pos: uint32(len(ix.postings[tid]))})
		ix.postings[tid] = append(ix.postings[tid], posting{slot: slot, tf: n})
	}
	slices.SortFunc(refs, func(a, b termRef) int { return cmp.Compare(a.term, b.term) })
	ix.docs[slot] = doc{id: id, length: uint32(len(toks)), terms: refs, used: true}
	ix.slots[id] = slot
	ix.ndocs++
	ix.totalLen += int64(len(toks))
}

// Delete removes the document id and reports whether it was there.
func (ix *Index) Delete(id int64) bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.delete(id)
}

func (ix *Index) delete(id int64) bool {
	slot, ok := ix.slots[id]
	if !ok {
		return false
	}
	d := &ix.docs[slot]
	for _, ref := range d.terms {
		list := ix.postings[ref.term]
		last := len(list) - 1
		if int(ref.pos) != last {
			moved := list[last]
			list[ref.pos] = moved
			// Point the moved document's reference at its new position.
			mrefs := ix.docs[moved.slot].terms
			k, _ := slices.BinarySearchFunc(mrefs, ref.term, func(r termRef, t uint32) int { return cmp.Compare(r.term, t) })
			mrefs[k].pos = ref.pos
		}
		list[last] = posting{}
		ix.postings[ref.term] = list[:last]
	}
	ix.totalLen -= int64(d.length)
	*d = doc{}
	ix.free = append(ix.free, slot)
	delete(ix.slots, id)
	ix.ndocs--
	return true
}

// Stats describes the index: what BM25 scores with.
type Stats struct {
	Docs      int     // number of documents
	Terms     int     // number of distinct terms in at least one document
	AvgLength float64 // mean document length in tokens
}

// Stats returns the index's statistics.
func (ix *Index) Stats() Stats {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	s := Stats{Docs: ix.ndocs}
	for _, p := range ix.postings {
		if len(p) > 0 {
			s.Terms++
		}
	}
	if ix.ndocs > 0 {
		s.AvgLength = float64(ix.totalLen) / float64(ix.ndocs)
	}
	return s
}

// DocFreq returns the number of documents containing term (a term as
// the tokenizer emits it, e.g. lower case).
func (ix *Index) DocFreq(term string) int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if tid, ok := ix.termIDs[term]; ok {
		return len(ix.postings[tid])
	}
	return 0
}

// scorePool recycles the per-slot score array of Search.
var scorePool sync.Pool

type scratch struct {
	scores  []float64
	touched []uint32
}

// Search returns the k best documents for query by BM25, best first, ties
// broken by ascending id. keep, if not nil, is asked about each matching id
// and a false answer drops it; it is called without the index's lock held,
// so it may use the index. Each distinct query term counts once. A query
// without terms (only punctuation, say), k ≤ 0 or an empty index give no
// results (nil).
//
// Scores use idf = ln(1 + (N − df + 0.5)/(df + 0.5)) and
// tf·(k1+1)/(tf + k1·(1 − b + b·len/avglen)), as Lucene does.
func (ix *Index) Search(query string, k int, keep func(id int64) bool) []Result {
	if k <= 0 {
		return nil
	}
	qt := ix.tok.Tokens(query)
	if len(qt) == 0 {
		return nil
	}
	slices.Sort(qt)
	qt = slices.Compact(qt)

	cands := ix.score(qt)
	if keep != nil {
		cands = slices.DeleteFunc(cands, func(r Result) bool { return !keep(r.ID) })
	}
	return topK(cands, k)
}

// score returns every document matching at least one term, with its score.
func (ix *Index) score(qt []string) []Result {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.ndocs == 0 {
		return nil
	}
	s, _ := scorePool.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	if len(s.scores) < len(ix.docs) {
		s.scores = make([]float64, len(ix.docs))
	}
	n := float64(ix.ndocs)
	avg := float64(ix.totalLen) / n
	if avg == 0 {
		avg = 1
	}
	// norm[len] would be faster for short docs, but lengths vary widely.
	k1, b := ix.k1, ix.b
	for _, t := range qt {
		tid, ok := ix.termIDs[t]
		if !ok {
			continue
		}
		list := ix.postings[tid]
		df := float64(len(list))
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range list {
			tf := float64(p.tf)
			dl := float64(ix.docs[p.slot].length)
			if s.scores[p.slot] == 0 {
				s.touched = append(s.touched, p.slot)
			}
			s.scores[p.slot] += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*dl/avg))
		}
	}
	out := make([]Result, len(s.touched))
	for i, slot := range s.touched {
		out[i] = Result{ID: ix.docs[slot].id, Score: s.scores[slot]}
		s.scores[slot] = 0
	}
	s.touched = s.touched[:0]
	scorePool.Put(s)
	return out
}

func better(a, b Result) int {
	if a.Score != b.Score {
		if a.Score > b.Score {
			return -1
		}
		return 1
	}
	return cmp.Compare(a.ID, b.ID)
}

// topK returns the k best of cands, sorted; it reorders cands.
func topK(cands []Result, k int) []Result {
	if len(cands) == 0 {
		return nil
	}
	if len(cands) > 4*k && k < 256 {
		// Partial selection: keep a sorted window of the best k.
		best := make([]Result, 0, k+1)
		for _, c := range cands {
			if len(best) == k && better(c, best[k-1]) >= 0 {
				continue
			}
			i, _ := slices.BinarySearchFunc(best, c, better)
			best = slices.Insert(best, i, c)
			if len(best) > k {
				best = best[:k]
			}
		}
		return best
	}
	slices.SortFunc(cands, better)
	if len(cands) > k {
		cands = slices.Clip(cands[:k])
	}
	return cands
}
