package postgres

import (
	"slices"

	"github.com/agentmem/agentmem/memory/engine"
)

// linkTable is a complete cache's links (nsCache.table): its records'
// seqs in increasing order and their links, at the same positions. A
// search asks for thousands of links (its candidates' owners, episodes
// and neighbours); a map of links cost 0.9 ms of a 10,000-record search's
// CPU in a profile of BenchmarkTurns, against 0.04 ms for the directory
// store's slices. A namespace written alone has consecutive seqs, so a
// record is mostly found at its seq's offset from the first; otherwise by
// binary search.
type linkTable struct {
	seqs  []int64
	links []engine.Link
}

// newLinkTable returns the table of links, a record's seq to its link.
func newLinkTable(links map[int64]engine.Link) *linkTable {
	t := &linkTable{seqs: make([]int64, 0, len(links)), links: make([]engine.Link, len(links))}
	for seq := range links {
		t.seqs = append(t.seqs, seq)
	}
	slices.Sort(t.seqs)
	for i, seq := range t.seqs {
		t.links[i] = links[seq]
	}
	return t
}

// find returns the position of seq, or -1: at seq's offset from the
// first seq when the seqs are consecutive (a namespace written alone),
// else near where its value puts it between the first and the last (the
// namespaces of a store written in turns: at 10 of them, 1,000 records
// each, a search of all found each link by binary search, 0.4 ms of its
// 7.9, BenchmarkAllNamespaces), else by binary search.
func (t *linkTable) find(seq int64) int {
	n := len(t.seqs)
	if n == 0 {
		return -1
	}
	first, last := t.seqs[0], t.seqs[n-1]
	if seq < first || seq > last {
		return -1
	}
	i := int(seq - first)
	if span := last - first; span != int64(n-1) {
		i = int((seq - first) * int64(n-1) / span)
	}
	lo, hi := 0, n
	for range 4 {
		switch s := t.seqs[i]; {
		case s == seq:
			return i
		case s < seq:
			lo, i = i+1, i+1
		default:
			hi, i = i, i-1
		}
		if i < lo || i >= hi {
			return -1
		}
	}
	if j, ok := slices.BinarySearch(t.seqs[lo:hi], seq); ok {
		return lo + j
	}
	return -1
}

// at returns seq's link in t, or nil.
func (t *linkTable) at(seq int64) *engine.Link {
	if i := t.find(seq); i >= 0 {
		return &t.links[i]
	}
	return nil
}

// get returns the link of seq.
func (t *linkTable) get(seq int64) (engine.Link, bool) {
	if i := t.find(seq); i >= 0 {
		return t.links[i], true
	}
	return engine.Link{}, false
}

// last returns the largest seq, or 0.
func (t *linkTable) last() int64 {
	if len(t.seqs) == 0 {
		return 0
	}
	return t.seqs[len(t.seqs)-1]
}

// add adds the link of seq, which is larger than any in t, and makes it
// the Next of the record it follows if that has none, or a later one.
func (t *linkTable) add(seq int64, l engine.Link) {
	if i := t.find(l.Prev); l.Prev >= 0 && i >= 0 {
		if p := &t.links[i]; p.Next < 0 || seq < p.Next {
			p.Next = seq
		}
	}
	t.seqs = append(t.seqs, seq)
	t.links = append(t.links, l)
}

// clone returns a copy of t that add does not share with it.
func (t *linkTable) clone() *linkTable {
	return &linkTable{seqs: slices.Clone(t.seqs), links: slices.Clone(t.links)}
}
