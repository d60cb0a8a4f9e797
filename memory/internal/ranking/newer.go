package ranking

import (
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmem/agentmem/keyword"
)

// NewerScoreRatio and NewerOverlap say when NewerFirst reads two hits as
// versions of one statement: the later scores at least NewerScoreRatio of
// the earlier's, and the two share at least NewerOverlap of their words
// (Jaccard: the words both hold over the words either holds). Measured
// 2026-12-05 on the facts stories added without supersede (testdata/facts,
// `go test ./eval -run TestStories_FileStore -v`, default minimum
// relevance): the current version comes before every stale one for 66 of
// the 240 questions without NewerFirst, 89 with these values; with a ratio
// of 0.7, 96, but the lookup probe (scripts/lookup-probe.py: a turn's own
// words asked back) loses two of its 982 first places to a later turn that
// holds the same words of the query; with 0.9, 86. With an overlap of
// 0.25, 93, the lookup probe losing one first place; with none, 95; with
// 0.5, 84. RealMem's, MemoryBank's (both languages) and the bundled set's
// recall is the same with any of them.
const (
	NewerScoreRatio = 0.8
	NewerOverlap    = 0.35
)

// NewerMaxRunes is the longest text NewerFirst reads as a statement, in
// characters: a fact is said in a sentence or two, while a longer record
// (a chat turn that answers at length) says many things, and a later one
// holding the same words of the query says something else, not the same
// thing anew.
const NewerMaxRunes = 280

// A Statement is what NewerFirst reads of a hit.
type Statement struct {
	// Source is whose statement it is (its namespace and speaker): only
	// one source's statements are versions of each other.
	Source string
	// From is when what it says starts to hold (its valid_from).
	From time.Time
	// Score is its score, by which the hits are ordered.
	Score float64
	// Text is its text.
	Text string
}

// NewerFirst returns the order in which a search returns hits, given in
// score order: each hit placed before the best ranked earlier version of
// it, so that of "My manager is Tom." (said in January) and "My manager is
// Ingrid now." (May), asked "Who is my manager?", the second comes first
// though the first, shorter, scores more. Where memories are added beside
// each other rather than superseding (memory.Facts.Supersede), a query
// that two of them answer alike cannot tell the current from the stale by
// its words, and the later said is the likelier current. An earlier
// version of a hit is one of its source, said before it (From), that holds
// the same words of the query (qterms: the query's terms as tok cuts them,
// its question words left out) and shares NewerOverlap of its words: two
// turns that share a phrase of the query are no versions of one fact. No
// hit passes one whose every word the query holds: a query that quotes a
// memory ("writer 6 note 0 about the deploy") asks for it, not for what
// is said now. A hit passes over no hit that scores more than
// 1/NewerScoreRatio of its score, and a hit of score 0 (that matched
// nothing the fusion counts) moves not at all, so that the first k hits of
// a search do not depend on how many more it returns when it orders every
// hit scoring at least NewerScoreRatio of the k-th. It returns the order
// (a permutation of the indexes of hits) and, when some hit moved, for
// each hit the indexes of the earlier versions it passed.
func NewerFirst(tok keyword.Tokenizer, qterms map[string]bool, hits []Statement) (order []int, earlier [][]int) {
	order = make([]int, len(hits))
	for i := range order {
		order[i] = i
	}
	type words struct {
		all  map[string]bool
		held string // the query's terms it holds, sorted and joined
	}
	read := make([]*words, len(hits))
	wordsOf := func(i int) *words {
		if read[i] == nil {
			w := &words{all: map[string]bool{}}
			var held []string
			for _, t := range tok.Tokens(hits[i].Text) {
				if !w.all[t] {
					w.all[t] = true
					if qterms[t] {
						held = append(held, t)
					}
				}
			}
			slices.Sort(held)
			w.held = strings.Join(held, " ")
			read[i] = w
		}
		return read[i]
	}
	for j := 1; j < len(order); j++ {
		b := order[j]
		if hits[b].Score <= 0 {
			continue // matched nothing the fusion counts: no version of anything
		}
		to := j
		for i := j - 1; i >= 0; i-- {
			a := order[i]
			if hits[b].Score < NewerScoreRatio*hits[a].Score {
				break
			}
			if hits[a].Source != hits[b].Source || !hits[b].From.After(hits[a].From) || !short(hits[a].Text) || !short(hits[b].Text) {
				continue
			}
			wa, wb := wordsOf(a), wordsOf(b)
			if wb.held == "" || wa.held != wb.held || overlap(wa.all, wb.all) < NewerOverlap {
				continue
			}
			if quoted(wa.all, qterms) {
				break // the query quotes a: it asks for a, not for what is said now
			}
			to = i
			if earlier == nil {
				earlier = make([][]int, len(hits))
			}
			earlier[b] = slices.Insert(earlier[b], 0, a) // in rank order
		}
		if to < j {
			copy(order[to+1:j+1], order[to:j])
			order[to] = b
		}
	}
	return order, earlier
}

// quoted reports whether every word of a text is one of the query's.
func quoted(words, qterms map[string]bool) bool {
	for t := range words {
		if !qterms[t] {
			return false
		}
	}
	return true
}

// short reports whether text is short enough to be one statement
// (NewerMaxRunes).
func short(text string) bool {
	return len(text) <= NewerMaxRunes || utf8.RuneCountInString(text) <= NewerMaxRunes
}

// overlap is the Jaccard similarity of two sets of words.
func overlap(a, b map[string]bool) float64 {
	both := 0
	for t := range a {
		if b[t] {
			both++
		}
	}
	if either := len(a) + len(b) - both; either > 0 {
		return float64(both) / float64(either)
	}
	return 0
}
