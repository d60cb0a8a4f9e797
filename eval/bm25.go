package eval

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"
)

// The reference BM25's parameters, as in bm25.py.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// isWordRune is Python's \w on str: a letter, a number or "_".
func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) }

// wordTokens is bm25.py's "word" tokenizer: lower case, runs of \w.
func wordTokens(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !isWordRune(r) })
}

func isCJK(r rune) bool {
	return (r >= 0x3400 && r <= 0x4dbf) || (r >= 0x4e00 && r <= 0x9fff) ||
		(r >= 0xf900 && r <= 0xfaff) || (r >= 0x20000 && r <= 0x2ffff)
}

// bigramTokens is bm25.py's "bigram" tokenizer: words as in wordTokens,
// every run of CJK characters inside a word as its overlapping character
// bigrams (a run of one character stays a unigram).
func bigramTokens(text string) []string {
	var out []string
	for _, w := range wordTokens(text) {
		rs := []rune(w)
		start := 0
		for i := 0; i < len(rs); {
			if !isCJK(rs[i]) {
				i++
				continue
			}
			j := i
			for j < len(rs) && isCJK(rs[j]) {
				j++
			}
			if i > start {
				out = append(out, string(rs[start:i]))
			}
			if j-i == 1 {
				out = append(out, string(rs[i]))
			} else {
				for a := i; a+1 < j; a++ {
					out = append(out, string(rs[a:a+2]))
				}
			}
			start, i = j, j
		}
		if start < len(rs) {
			out = append(out, string(rs[start:]))
		}
	}
	return out
}

// refBM25 is bm25.py's Okapi BM25 over one conversation's turns, grown
// turn by turn (recall_prefix.py's prefix index): N, avgdl and df describe
// the turns added so far.
type refBM25 struct {
	tok      func(string) []string
	tfs      []map[string]int
	lens     []int
	df       map[string]int
	postings map[string][]int
	total    int
}

func newRefBM25(tok func(string) []string) *refBM25 {
	return &refBM25{tok: tok, df: map[string]int{}, postings: map[string][]int{}}
}

// add appends a turn.
func (b *refBM25) add(text string) {
	toks := b.tok(text)
	tf := map[string]int{}
	for _, t := range toks {
		tf[t]++
	}
	i := len(b.tfs)
	for t := range tf {
		b.df[t]++
		b.postings[t] = append(b.postings[t], i)
	}
	b.tfs = append(b.tfs, tf)
	b.lens = append(b.lens, len(toks))
	b.total += len(toks)
}

// rank returns the indexes of the k best turns for query: only turns with
// a score > 0, ties in turn order.
func (b *refBM25) rank(query string, k int) []int {
	out, _ := b.rankScored(query, k)
	return out
}

// rankScored is rank with each turn's score.
func (b *refBM25) rankScored(query string, k int) ([]int, []float64) {
	n := len(b.tfs)
	if n == 0 {
		return nil, nil
	}
	avgdl := float64(b.total) / float64(n)
	scores := map[int]float64{}
	seen := map[string]bool{}
	for _, t := range b.tok(query) {
		if seen[t] {
			continue
		}
		seen[t] = true
		df := b.df[t]
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
		for _, i := range b.postings[t] {
			f := float64(b.tfs[i][t])
			norm := bm25K1
			if avgdl > 0 {
				norm = bm25K1 * (1 - bm25B + bm25B*float64(b.lens[i])/avgdl)
			}
			scores[i] += idf * f * (bm25K1 + 1) / (f + norm)
		}
	}
	out := make([]int, 0, len(scores))
	for i, s := range scores {
		if s > 0 {
			out = append(out, i)
		}
	}
	slices.SortFunc(out, func(a, c int) int {
		if d := cmp.Compare(scores[c], scores[a]); d != 0 {
			return d
		}
		return cmp.Compare(a, c)
	})
	out = out[:min(k, len(out))]
	sc := make([]float64, len(out))
	for j, i := range out {
		sc[j] = scores[i]
	}
	return out, sc
}
