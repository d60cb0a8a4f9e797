package engine

import (
	"iter"
	"sync"

	"github.com/agentmem/agentmem/keyword"
)

// denseIDs is the number of record ids a scoreSet keeps in slices indexed
// by id; ids past it (a namespace of more records) go into a map. A
// namespace numbers its records from 0 in the order written, so the
// records of a namespace of up to denseIDs records are all dense, and a
// set costs at most 12 bytes per id of them.
const denseIDs = 1 << 16

// scoreSet maps a namespace's record ids to scores, as a map[int64]float64
// would, for the keyword path: reading and writing a score is an index
// into a slice instead of a hash and a probe, and its ids are listed in
// the order they were first set. It is reused from one namespace (and one
// search) to the next: reset empties it in O(ids set).
type scoreSet struct {
	val []float64
	// mark[id] == gen: id is set (val[id] is its score).
	mark []uint32
	gen  uint32
	ids  []int64
	far  map[int64]float64 // ids outside [0, denseIDs)
}

// reset empties the set.
func (s *scoreSet) reset() {
	s.gen++
	if s.gen == 0 { // wrapped: every old mark could match again
		clear(s.mark)
		s.gen = 1
	}
	s.ids = s.ids[:0]
	clear(s.far)
}

// len returns how many ids are set.
func (s *scoreSet) len() int { return len(s.ids) }

// get returns id's score, 0 when it is not set.
func (s *scoreSet) get(id int64) float64 {
	if uint64(id) < uint64(len(s.val)) {
		if s.mark[id] == s.gen {
			return s.val[id]
		}
		return 0
	}
	return s.far[id]
}

// has reports whether id is set.
func (s *scoreSet) has(id int64) bool {
	if uint64(id) < uint64(len(s.val)) {
		return s.mark[id] == s.gen
	}
	_, ok := s.far[id]
	return ok
}

// slot returns where id's score is kept, setting it to 0 first when it
// is not set.
func (s *scoreSet) slot(id int64) *float64 {
	if uint64(id) >= uint64(len(s.val)) {
		if id < 0 || id >= denseIDs {
			v, ok := s.far[id]
			if !ok {
				if s.far == nil {
					s.far = map[int64]float64{}
				}
				s.ids = append(s.ids, id)
			}
			// A map's values cannot be addressed: set through a copy.
			s.far[id] = v
			return nil
		}
		s.grow(id)
	}
	if s.mark[id] != s.gen {
		s.mark[id] = s.gen
		s.val[id] = 0
		s.ids = append(s.ids, id)
	}
	return &s.val[id]
}

// grow makes the slices reach id (0 ≤ id < denseIDs).
func (s *scoreSet) grow(id int64) {
	n := max(len(s.val), 1024)
	for int64(n) <= id {
		n *= 2
	}
	n = min(n, denseIDs)
	val := make([]float64, n)
	copy(val, s.val)
	mark := make([]uint32, n)
	copy(mark, s.mark)
	s.val, s.mark = val, mark
	if s.gen == 0 {
		s.gen = 1
	}
}

// add adds v to id's score.
func (s *scoreSet) add(id int64, v float64) {
	if p := s.slot(id); p != nil {
		*p += v
		return
	}
	s.far[id] += v
}

// set sets id's score to v.
func (s *scoreSet) set(id int64, v float64) {
	if p := s.slot(id); p != nil {
		*p = v
		return
	}
	s.far[id] = v
}

// scale multiplies the score of id, which is set, by f.
func (s *scoreSet) scale(id int64, f float64) {
	s.set(id, s.get(id)*f)
}

// all yields the set's ids with their scores, in the order the ids were
// first set.
func (s *scoreSet) all() iter.Seq2[int64, float64] {
	return func(yield func(int64, float64) bool) {
		for _, id := range s.ids {
			if !yield(id, s.get(id)) {
				return
			}
		}
	}
}

// copyFrom makes s hold src's ids and scores.
func (s *scoreSet) copyFrom(src *scoreSet) {
	s.reset()
	for _, id := range src.ids {
		s.set(id, src.get(id))
	}
}

// kwScratch is the keyword path's reusable state: its score sets and id
// list. A search takes one from kwScratchPool and puts it back when done,
// so a server's concurrent searches reuse a few instead of each making its
// own.
type kwScratch struct {
	own, lent, scores scoreSet
	ids               []int64 // nsSearch.ids
	// found and inScope hold a field's results (Selector), lenders the
	// ids of those that lend, eps their episodes (addEpisodes), heap
	// kthLargest's heap (rank's list is search.ranked).
	found, inScope []keyword.Result
	lenders, eps   []int64
	heap           []float64
}

var kwScratchPool = sync.Pool{New: func() any { return new(kwScratch) }}
