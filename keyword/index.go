// Package keyword is the exact-match path of long-term memory: a tokenizer
// that keeps names, codes, numbers and identifiers findable in English,
// Chinese, Japanese and Korean, and an in-memory BM25 inverted index over
// int64 ids.
//
// The index stores terms, not texts: callers keep their texts and hand
// them to [Index.Add]. [Index.Export] and [Index.Import] write and read a
// versioned, checksummed snapshot so that reopening a large index does not
// tokenize anything again.
//
// Chinese is cut by default into overlapping character bigrams plus
// single characters. The gse dictionary segmenter ([WithCJK]([Segmenter]))
// did no better on a 72-passage, 40-question Chinese sample
// (testdata/zh_retrieval.json: bigrams hit@1 0.900, hit@5 1.000, MRR 0.942;
// segmenter 0.900, 0.975, 0.933), and it costs seconds to load its
// dictionary, over 100 MB of heap, ~33 MB of binary and several times the
// tokenizing time, so it is linked only by importing
// github.com/agentmem/agentmem/keyword/gse. Choose it when word-level
// precision on Chinese matters more than those costs.
//
// Stop words are a short list ([DefaultStopWords]); BM25's idf does the
// rest. Single Latin letters are not indexed ("C" in "C++" is lost).
package keyword

import (
	"cmp"
	"math"
	"slices"
	"strings"
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

// WithQueryTF makes a word that a query repeats count more: qtf times
// gives the weight (k3+1)·qtf/(k3+qtf) (Robertson's k3; 1 for one
// occurrence, approaching k3+1). 0 (the default), negative or NaN values
// make a repeated word count once. It matters for long queries (a user's
// message as the question), not for short ones.
func WithQueryTF(k3 float64) IndexOption {
	return func(ix *Index) {
		if k3 > 0 && !math.IsInf(k3, 0) {
			ix.k3 = k3
		}
	}
}

// WithQueryIDF weights each word of a query by its idf as well, as the
// query vector of classic tf·idf does: a matching term then scores
// idf²·tf·(k1+1)/(tf + …) instead of idf·…, so that the rare words of a
// query outweigh its common ones more than BM25 alone lets them. It
// matters for long queries (a user's message of several sentences, most
// of whose words are ordinary), where plain BM25 lets a document win by
// matching many common words; with one content word it changes nothing.
// Off by default (plain Okapi BM25).
func WithQueryIDF() IndexOption {
	return func(ix *Index) { ix.queryIDF = true }
}

// Index is a BM25 inverted index over documents identified by int64 ids.
// The zero value is not usable; call [NewIndex]. An Index is safe for
// concurrent use by multiple goroutines: searches run in parallel, and
// tokenizing happens outside the lock.
type Index struct {
	tok   Tokenizer
	k1, b float64
	k3    float64 // query term frequency saturation; 0: a repeated word counts once
	// queryIDF weights query words by their idf too (WithQueryIDF).
	queryIDF bool

	mu       sync.RWMutex
	termIDs  map[string]uint32 // term → index into terms and postings
	terms    []string          // term id → term
	postings [][]posting       // per term, unordered; len = document frequency
	slots    map[int64]uint32  // document id → slot
	ids      []int64           // per slot
	lens     []uint32          // per slot: document length in tokens
	refs     [][]termRef       // per slot: the document's distinct terms, sorted
	free     []uint32          // unused slots
	totalLen int64             // sum of lens
	added    []termRef         // AppendCounts' scratch: terms new to a document
}

type posting struct {
	slot uint32
	tf   uint32
}

// termRef is one distinct term of a document and where the document sits
// in that term's posting list, so that Delete is O(terms of the document)
// whatever the terms' frequencies.
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
	ix.termIDs = map[string]uint32{}
	ix.slots = map[int64]uint32{}
	return ix
}

// Tokenizer returns the index's tokenizer.
func (ix *Index) Tokenizer() Tokenizer { return ix.tok }

// Len returns the number of documents, including those without terms.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.slots)
}

// AvgLength returns the mean length of its documents in tokens (0 for an
// empty index): BM25's average document length.
func (ix *Index) AvgLength() float64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if len(ix.slots) == 0 {
		return 0
	}
	return float64(ix.totalLen) / float64(len(ix.slots))
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

// AddTokens is [Index.Add] for a text already tokenized: toks must be
// what the index's tokenizer returns for the text (its Tokens). A caller
// that tokenizes elsewhere, for example on several goroutines before
// taking a lock of its own, indexes with AddTokens what Add would. The
// index keeps the terms, not the slice.
func (ix *Index) AddTokens(id int64, toks []string) {
	ix.AddCounts(id, Count(toks))
}

// AddCounts is [Index.AddTokens] for tokens already counted ([Count]): a
// caller that indexes one text in several indexes counts it once.
func (ix *Index) AddCounts(id int64, c Counts) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.addCounts(id, c)
}

// addTokens indexes toks under id; ix.mu is held.
func (ix *Index) addTokens(id int64, toks []string) {
	ix.addCounts(id, Count(toks))
}

// addCounts indexes c under id; ix.mu is held.
func (ix *Index) addCounts(id int64, c Counts) {
	ix.delete(id)
	var slot uint32
	if n := len(ix.free); n > 0 {
		slot = ix.free[n-1]
		ix.free = ix.free[:n-1]
	} else {
		slot = uint32(len(ix.ids))
		ix.ids = append(ix.ids, 0)
		ix.lens = append(ix.lens, 0)
		ix.refs = append(ix.refs, nil)
	}
	refs := make([]termRef, len(c.Terms))
	for i, t := range c.Terms {
		tid := ix.termID(t)
		refs[i] = termRef{term: tid, pos: uint32(len(ix.postings[tid]))}
		ix.postings[tid] = append(ix.postings[tid], posting{slot: slot, tf: c.N[i]})
	}
	sortRefs(refs)
	ix.ids[slot], ix.lens[slot], ix.refs[slot] = id, uint32(c.Len), refs
	ix.slots[id] = slot
	ix.totalLen += int64(c.Len)
}

// termID returns term's id, giving a new term the next one. ix.mu is held
// for writing.
func (ix *Index) termID(t string) uint32 {
	tid, ok := ix.termIDs[t]
	if !ok {
		tid = uint32(len(ix.terms))
		ix.termIDs[t] = tid
		ix.terms = append(ix.terms, t)
		ix.postings = append(ix.postings, nil)
	}
	return tid
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
	for _, ref := range ix.refs[slot] {
		ix.dropPosting(slot, ref)
	}
	ix.totalLen -= int64(ix.lens[slot])
	ix.ids[slot], ix.lens[slot], ix.refs[slot] = -1, 0, nil
	ix.free = append(ix.free, slot)
	delete(ix.slots, id)
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
	st := Stats{Docs: len(ix.slots)}
	for _, p := range ix.postings {
		if len(p) > 0 {
			st.Terms++
		}
	}
	if st.Docs > 0 {
		st.AvgLength = float64(ix.totalLen) / float64(st.Docs)
	}
	return st
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

// scratch is Search's reusable working memory.
type scratch struct {
	scores   []float64 // per slot: the document's score
	main     []float64 // per slot: best whole-form score in the current group
	parts    []float64 // per slot: weighted part scores in the current group
	touched  []uint32  // slots with a score
	gtouched []uint32  // slots with a score in the current group
	cands    []Result
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// PartWeight is what all the parts of a code are worth together, relative
// to its whole (see [Index.Search]).
const PartWeight = 0.5

// queryGroup is one word or code of a query: its whole forms and parts.
type queryGroup struct {
	main, parts []string
	weight      float64 // 0 means 1
}

// groups returns the distinct groups of a query's terms.
func (ix *Index) groups(query string) []queryGroup {
	var terms []string
	var meta []termMeta
	if t, ok := ix.tok.(*tokenizer); ok {
		terms, meta = t.analyze(query)
	} else {
		terms = ix.tok.Tokens(query)
		meta = make([]termMeta, len(terms))
		for i := range meta {
			meta[i].group = int32(i)
		}
	}
	var out []queryGroup
	index := map[int32]int{}
	for i, term := range terms {
		k, ok := index[meta[i].group]
		if !ok {
			k = len(out)
			index[meta[i].group] = k
			out = append(out, queryGroup{})
		}
		if meta[i].part {
			out[k].parts = append(out[k].parts, term)
		} else {
			out[k].main = append(out[k].main, term)
		}
	}
	// A term is a group's whole or its part, once; equal groups count once
	// (or, WithQueryTF, by how often they occur).
	seen := map[string]int{}
	uniq := out[:0]
	for _, g := range out {
		slices.Sort(g.main)
		g.main = slices.Compact(g.main)
		g.parts = slices.DeleteFunc(g.parts, func(p string) bool { return slices.Contains(g.main, p) })
		slices.Sort(g.parts)
		g.parts = slices.Compact(g.parts)
		key := strings.Join(g.main, "\x00") + "\x01" + strings.Join(g.parts, "\x00")
		if i, ok := seen[key]; ok {
			uniq[i].weight++
			continue
		}
		seen[key] = len(uniq)
		g.weight = 1
		uniq = append(uniq, g)
	}
	for i := range uniq {
		if qtf := uniq[i].weight; ix.k3 > 0 {
			uniq[i].weight = (ix.k3 + 1) * qtf / (ix.k3 + qtf)
		} else {
			uniq[i].weight = 1
		}
	}
	return uniq
}

// Search returns the k best documents for query by BM25, best first, ties
// broken by ascending id. keep, if not nil, is asked about matching ids and
// a false answer drops the id; it is called without the index's lock held,
// so it may use the index. A query without terms (only punctuation, say),
// k ≤ 0 or an empty index give no results (nil). The returned slice is the
// caller's.
//
// Each term scores idf·tf·(k1+1)/(tf + k1·(1 − b + b·len/avglen)) with
// idf = ln(1 + (N − df + 0.5)/(df + 0.5)), as in Lucene (idf² with
// [WithQueryIDF]), and a document's score is the sum over the query's words. A word that is a code counts
// once, whichever of its forms match: the best of its whole forms
// (138-0013-8000, 13800138000), or [PartWeight] times the mean score of its
// parts (138, 0013, 8000) if that is higher; so a document with the whole
// number beats one that shares two of its digit groups. A repeated word
// counts once. (With a Tokenizer not made by [NewTokenizer], each distinct
// term is a word of its own.)
func (ix *Index) Search(query string, k int, keep func(id int64) bool) []Result {
	if k <= 0 {
		return nil
	}
	return ix.searchGroups(ix.groups(query), ix.params(), k, keep)
}

// SearchGroups is Search for a query already split into groups
// ([ParseQuery], [WeightedGroups]), scored with p's K1, B and QueryIDF
// instead of the index's own (p.K3 is in the groups' weights already).
func (ix *Index) SearchGroups(groups []QueryGroup, p Params, k int, keep func(id int64) bool) []Result {
	if k <= 0 {
		return nil
	}
	return ix.searchGroups(queryGroups(groups), p, k, keep)
}

// queryGroups returns groups as the index scores them.
func queryGroups(groups []QueryGroup) []queryGroup {
	gs := make([]queryGroup, len(groups))
	for i, g := range groups {
		gs[i] = queryGroup{main: g.Main, parts: g.Parts, weight: g.Weight}
	}
	return gs
}

// SelectGroups is SearchGroups without the order: it appends to dst[:0]
// the same k documents with the same scores, in no particular order, and
// so does not sort them, and returns it. A caller that only sums their
// scores per document (the keyword path of package engine) saves the
// sort, and reuses dst from one search to the next.
func (ix *Index) SelectGroups(dst []Result, groups []QueryGroup, p Params, k int, keep func(id int64) bool) []Result {
	dst = dst[:0]
	if k <= 0 || len(groups) == 0 {
		return dst
	}
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	return appendBest(dst, ix.matches(queryGroups(groups), p, s, keep), k)
}

// searchGroups is Search's and SearchTerms' common part.
func (ix *Index) searchGroups(groups []queryGroup, p Params, k int, keep func(id int64) bool) []Result {
	if len(groups) == 0 {
		return nil
	}
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	return topK(ix.matches(groups, p, s, keep), k)
}

// matches returns the documents that groups match, with their scores,
// those keep (if not nil) refuses left out, in s's memory.
func (ix *Index) matches(groups []queryGroup, p Params, s *scratch, keep func(id int64) bool) []Result {
	cands := ix.score(groups, p, s)
	if keep != nil {
		cands = slices.DeleteFunc(cands, func(r Result) bool { return !keep(r.ID) })
	}
	return cands
}

// score puts every document matching at least one term, with its score,
// in s.cands and returns it.
func (ix *Index) score(groups []queryGroup, p Params, s *scratch) []Result {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	s.cands = s.cands[:0]
	n := float64(len(ix.slots))
	if n == 0 {
		return s.cands
	}
	if len(s.scores) < len(ix.ids) {
		s.scores = make([]float64, len(ix.ids))
		s.main = make([]float64, len(ix.ids))
		s.parts = make([]float64, len(ix.ids))
	}
	avg := float64(ix.totalLen) / n
	if avg == 0 {
		avg = 1
	}
	// tf·(k1+1)/(tf + c0 + c1·len), with c0, c1 fixed for this search.
	c0, c1 := p.K1*(1-p.B), p.K1*p.B/avg
	lens := ix.lens
	postings := func(term string) ([]posting, float64) {
		tid, ok := ix.termIDs[term]
		if !ok {
			return nil, 0
		}
		list := ix.postings[tid]
		return list, TermWeight(n, float64(len(list)), p.QueryIDF) * (p.K1 + 1)
	}
	for _, g := range groups {
		gw := cmp.Or(g.weight, 1)
		if len(g.main) == 1 && len(g.parts) == 0 {
			// A plain word: straight into the document scores.
			list, w := postings(g.main[0])
			w *= gw
			for _, p := range list {
				tf := float64(p.tf)
				if s.scores[p.slot] == 0 {
					s.touched = append(s.touched, p.slot)
				}
				s.scores[p.slot] += w * tf / (tf + c0 + c1*float64(lens[p.slot]))
			}
			continue
		}
		for _, term := range g.main {
			list, w := postings(term)
			for _, p := range list {
				tf := float64(p.tf)
				v := w * tf / (tf + c0 + c1*float64(lens[p.slot]))
				if s.main[p.slot] == 0 && s.parts[p.slot] == 0 {
					s.gtouched = append(s.gtouched, p.slot)
				}
				s.main[p.slot] = max(s.main[p.slot], v)
			}
		}
		pw := PartWeight / float64(max(len(g.parts), 1))
		for _, term := range g.parts {
			list, w := postings(term)
			for _, p := range list {
				tf := float64(p.tf)
				v := w * tf / (tf + c0 + c1*float64(lens[p.slot]))
				if s.main[p.slot] == 0 && s.parts[p.slot] == 0 {
					s.gtouched = append(s.gtouched, p.slot)
				}
				s.parts[p.slot] += pw * v
			}
		}
		for _, slot := range s.gtouched {
			if s.scores[slot] == 0 {
				s.touched = append(s.touched, slot)
			}
			s.scores[slot] += gw * max(s.main[slot], s.parts[slot])
			s.main[slot], s.parts[slot] = 0, 0
		}
		s.gtouched = s.gtouched[:0]
	}
	for _, slot := range s.touched {
		s.cands = append(s.cands, Result{ID: ix.ids[slot], Score: s.scores[slot]})
		s.scores[slot] = 0
	}
	s.touched = s.touched[:0]
	return s.cands
}

// A WeightedTerm is a term as the tokenizer emits it ("support" for
// "supporting" with stemming) and its weight in a query.
type WeightedTerm struct {
	Term   string
	Weight float64
}

// SearchTerms is Search for terms given directly, each scoring its BM25
// contribution times its weight (terms with a weight ≤ 0 are ignored; a
// term given twice counts twice). It serves query expansion: terms added
// to a query at a lower weight than its own words.
func (ix *Index) SearchTerms(terms []WeightedTerm, k int, keep func(id int64) bool) []Result {
	return ix.SearchGroups(WeightedGroups(terms), ix.params(), k, keep)
}

// A TermCount is a term of a document and how often it occurs there.
type TermCount struct {
	Term  string
	Count int
}

// Terms returns the document's distinct terms with their counts and the
// document's length in tokens (nil, 0 for an unknown id), for relevance
// feedback. Terms come in no particular order.
func (ix *Index) Terms(id int64) ([]TermCount, int) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	slot, ok := ix.slots[id]
	if !ok {
		return nil, 0
	}
	refs := ix.refs[slot]
	out := make([]TermCount, len(refs))
	for i, r := range refs {
		out[i] = TermCount{ix.terms[r.term], int(ix.postings[r.term][r.pos].tf)}
	}
	return out, int(ix.lens[slot])
}

// IDF returns BM25's idf of term, ln(1 + (N − df + 0.5)/(df + 0.5)), or 0
// for a term in no document.
func (ix *Index) IDF(term string) float64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	tid, ok := ix.termIDs[term]
	if !ok || len(ix.postings[tid]) == 0 {
		return 0
	}
	n, df := float64(len(ix.slots)), float64(len(ix.postings[tid]))
	return IDF(n, df)
}

// IDF is BM25's inverse document frequency of a term in df of n
// documents: ln(1 + (n − df + 0.5)/(df + 0.5)), as in Lucene (never
// negative).
func IDF(n, df float64) float64 {
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// TermWeight is what a query term in df of n documents weighs, before the
// term-frequency part of its score: its idf, or with queryIDF (see
// [WithQueryIDF]) idf².
func TermWeight(n, df float64, queryIDF bool) float64 {
	w := IDF(n, df)
	if queryIDF {
		w *= w
	}
	return w
}

// Append adds text's terms to document id, as if text had been indexed
// with it: counts and length grow, a new term joins the postings. An
// unknown id is a new document. It costs O(terms of text), however long
// the document already is, so a document that grows by pieces (all the
// turns of a conversation) stays cheap to keep.
func (ix *Index) Append(id int64, text string) {
	ix.AppendTokens(id, ix.tok.Tokens(text))
}

// AppendTokens is [Index.Append] for a text already tokenized: toks must
// be what the index's tokenizer returns for the text (see
// [Index.AddTokens]).
func (ix *Index) AppendTokens(id int64, toks []string) {
	ix.AppendCounts(id, Count(toks))
}

// AppendCounts is [Index.AppendTokens] for tokens already counted
// ([Count]).
func (ix *Index) AppendCounts(id int64, c Counts) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	slot, ok := ix.slots[id]
	if !ok {
		ix.addCounts(id, c)
		return
	}
	refs := ix.refs[slot]
	added := ix.added[:0]
	for i, t := range c.Terms {
		tid := ix.termID(t)
		if k, found := findRef(refs, tid); found {
			ix.postings[tid][refs[k].pos].tf += c.N[i]
			continue
		}
		added = append(added, termRef{term: tid, pos: uint32(len(ix.postings[tid]))})
		ix.postings[tid] = append(ix.postings[tid], posting{slot: slot, tf: c.N[i]})
	}
	if len(added) > 0 {
		sortRefs(added)
		ix.refs[slot] = mergeRefs(refs, added)
	}
	ix.added = added[:0]
	ix.lens[slot] += uint32(c.Len)
	ix.totalLen += int64(c.Len)
}

// sortRefs sorts refs, whose terms are distinct, by term: as integers
// (term, then position, in one uint64), which sort several times faster
// than structs through a comparison function.
func sortRefs(refs []termRef) {
	if len(refs) < 2 {
		return
	}
	keys := refBufs.Get().(*[]uint64)
	k := (*keys)[:0]
	for _, r := range refs {
		k = append(k, uint64(r.term)<<32|uint64(r.pos))
	}
	slices.Sort(k)
	for i, v := range k {
		refs[i] = termRef{term: uint32(v >> 32), pos: uint32(v)}
	}
	*keys = k
	refBufs.Put(keys)
}

// refBufs recycles sortRefs' keys.
var refBufs = sync.Pool{New: func() any { return new([]uint64) }}

// mergeRefs merges added (sorted, with terms refs lacks) into refs
// (sorted), in place when refs has room: one pass from the back instead
// of one insertion, and shift, per new term.
func mergeRefs(refs, added []termRef) []termRef {
	i, j := len(refs)-1, len(added)-1
	out := slices.Grow(refs, len(added))[:len(refs)+len(added)]
	for k := len(out) - 1; j >= 0; k-- {
		if i >= 0 && out[i].term > added[j].term {
			out[k] = out[i]
			i--
		} else {
			out[k] = added[j]
			j--
		}
	}
	return out
}

// Withdraw takes text's terms out of document id again, the reverse of
// Append: counts and length shrink, never below zero, and a term whose
// count reaches zero leaves the document. The document itself stays (see
// Delete). An unknown id is ignored.
func (ix *Index) Withdraw(id int64, text string) {
	c := Count(ix.tok.Tokens(text))
	ix.mu.Lock()
	defer ix.mu.Unlock()
	slot, ok := ix.slots[id]
	if !ok {
		return
	}
	var removed uint32
	for i, t := range c.Terms {
		tid, ok := ix.termIDs[t]
		if !ok {
			continue
		}
		n := c.N[i]
		refs := ix.refs[slot]
		k, found := findRef(refs, tid)
		if !found {
			continue
		}
		p := &ix.postings[tid][refs[k].pos]
		if p.tf > n {
			p.tf -= n
			removed += n
			continue
		}
		removed += p.tf
		ix.dropPosting(slot, refs[k])
		ix.refs[slot] = slices.Delete(ix.refs[slot], k, k+1)
	}
	removed = min(removed, ix.lens[slot])
	ix.lens[slot] -= removed
	ix.totalLen -= int64(removed)
}

// Counts is a tokenized text counted ([Count]): its distinct terms in the
// order they first occur, N[i] the occurrences of Terms[i], and Len the
// number of tokens.
type Counts struct {
	Terms []string
	N     []uint32
	Len   int
}

// countMaps recycles Count's scratch maps.
var countMaps = sync.Pool{New: func() any { return map[string]int32{} }}

// Count counts toks, a tokenizer's tokens of one text, for
// [Index.AddCounts] and [Index.AppendCounts]. Counting once and handing
// the counts to several indexes (or counting outside their locks) costs
// each index one lookup per distinct term instead of one per token.
func Count(toks []string) Counts {
	c := Counts{Len: len(toks)}
	if len(toks) == 0 {
		return c
	}
	c.Terms = make([]string, 0, len(toks))
	c.N = make([]uint32, 0, len(toks))
	seen := countMaps.Get().(map[string]int32)
	for _, t := range toks {
		if k, ok := seen[t]; ok {
			c.N[k]++
			continue
		}
		seen[t] = int32(len(c.Terms))
		c.Terms = append(c.Terms, t)
		c.N = append(c.N, 1)
	}
	if len(seen) <= 4096 { // clear would walk a huge map's buckets on every later use
		clear(seen)
		countMaps.Put(seen)
	}
	return c
}

// dropPosting removes slot's posting of ref.term, moving the list's last
// posting into its place. ix.mu is held for writing.
func (ix *Index) dropPosting(slot uint32, ref termRef) {
	list := ix.postings[ref.term]
	last := len(list) - 1
	if int(ref.pos) != last {
		moved := list[last]
		list[ref.pos] = moved
		// Point the moved document's reference at its new position.
		mrefs := ix.refs[moved.slot]
		k, _ := findRef(mrefs, ref.term)
		mrefs[k].pos = ref.pos
	}
	ix.postings[ref.term] = list[:last]
}

// findRef finds term in a document's sorted references: its position, or
// where it would go.
func findRef(refs []termRef, term uint32) (int, bool) {
	return slices.BinarySearchFunc(refs, term, func(r termRef, t uint32) int { return cmp.Compare(r.term, t) })
}
