package longterm

// TEMPORARY stand-in for package keyword until it lands; replaced by an
// adapter over keyword.Index.

import (
	"encoding/gob"
	"io"
	"math"
	"slices"
	"strings"
	"unicode"
)

type tempKW struct {
	docs     map[int64][]string
	postings map[string]map[int64]int
	total    int
}

func newKeywordIndex() (keywordIndex, error) {
	return &tempKW{docs: map[int64][]string{}, postings: map[string]map[int64]int{}}, nil
}

func tempTokens(s string) []string {
	var out []string
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range f {
		rs := []rune(w)
		if unicode.Is(unicode.Han, rs[0]) && len(rs) > 1 {
			for i := 0; i+1 < len(rs); i++ {
				out = append(out, string(rs[i:i+2]))
			}
			continue
		}
		out = append(out, w)
	}
	return out
}

func (x *tempKW) Add(id int64, text string) {
	x.Delete(id)
	toks := tempTokens(text)
	x.docs[id] = toks
	x.total += len(toks)
	for _, t := range toks {
		p := x.postings[t]
		if p == nil {
			p = map[int64]int{}
			x.postings[t] = p
		}
		p[id]++
	}
}

func (x *tempKW) Delete(id int64) bool {
	toks, ok := x.docs[id]
	if !ok {
		return false
	}
	for _, t := range toks {
		delete(x.postings[t], id)
	}
	x.total -= len(toks)
	delete(x.docs, id)
	return true
}

func (x *tempKW) Search(q string, k int, keep func(int64) bool) []kwResult {
	n := float64(len(x.docs))
	avg := float64(x.total) / max(n, 1)
	sc := map[int64]float64{}
	for _, t := range tempTokens(q) {
		p := x.postings[t]
		idf := math.Log(1 + (n-float64(len(p))+0.5)/(float64(len(p))+0.5))
		for id, tf := range p {
			if keep != nil && !keep(id) {
				continue
			}
			dl := float64(len(x.docs[id]))
			sc[id] += idf * float64(tf) * 2.2 / (float64(tf) + 1.2*(0.25+0.75*dl/avg))
		}
	}
	out := make([]kwResult, 0, len(sc))
	for id, s := range sc {
		out = append(out, kwResult{id, s})
	}
	slices.SortFunc(out, func(a, b kwResult) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return int(a.ID - b.ID)
	})
	if len(out) > k {
		out = out[:k]
	}
	return out
}

func (x *tempKW) Len() int { return len(x.docs) }

func (x *tempKW) Export(w io.Writer) error { return gob.NewEncoder(w).Encode(x.docs) }

func (x *tempKW) Import(r io.Reader) error {
	var docs map[int64][]string
	if err := gob.NewDecoder(r).Decode(&docs); err != nil {
		return err
	}
	x.docs = map[int64][]string{}
	x.postings = map[string]map[int64]int{}
	x.total = 0
	for id, toks := range docs {
		x.docs[id] = toks
		x.total += len(toks)
		for _, t := range toks {
			p := x.postings[t]
			if p == nil {
				p = map[int64]int{}
				x.postings[t] = p
			}
			p[id]++
		}
	}
	return nil
}
