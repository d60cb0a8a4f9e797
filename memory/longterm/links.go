package longterm

import (
	"maps"
	"slices"
)

// links maps a namespace's record ids to record (or episode) ids: a
// record's follower, leader or episode. The turn index numbers a
// namespace's records from 0 as they are written, so the ids are dense and
// a slice indexed by id answers a search's many lookups (every candidate's
// neighbours and episode) without hashing. Ids beyond the slice's reach
// (only a snapshot can bring one: it names its ids) are kept in a map.
type links struct {
	dense []int64         // dense[id] is the linked id + 1; 0: none
	spill map[int64]int64 // ids too far beyond dense to grow it
	n     int             // ids linked
}

// get returns what id is linked to, and whether it is.
func (l *links) get(id int64) (int64, bool) {
	if uint64(id) < uint64(len(l.dense)) {
		v := l.dense[id]
		return v - 1, v != 0
	}
	v, ok := l.spill[id]
	return v, ok
}

// at returns what id is linked to, or 0 (as a map's missing key would).
func (l *links) at(id int64) int64 {
	v, _ := l.get(id)
	return v
}

// set links id to v (v ≥ -1).
func (l *links) set(id, v int64) {
	if _, ok := l.get(id); !ok {
		l.n++
	}
	if id >= 0 && id < 2*int64(len(l.dense))+1024 {
		if id >= int64(len(l.dense)) {
			l.grow(id + 1)
		}
		l.dense[id] = v + 1
		return
	}
	if l.spill == nil {
		l.spill = map[int64]int64{}
	}
	l.spill[id] = v
}

// grow extends dense to at least n ids, moving the spilled ids it now
// reaches into it.
func (l *links) grow(n int64) {
	l.dense = slices.Grow(l.dense, int(n)-len(l.dense))
	l.dense = l.dense[:cap(l.dense)]
	for id, v := range l.spill {
		if 0 <= id && id < int64(len(l.dense)) {
			l.dense[id] = v + 1
			delete(l.spill, id)
		}
	}
}

// del unlinks id.
func (l *links) del(id int64) {
	if uint64(id) < uint64(len(l.dense)) {
		if l.dense[id] != 0 {
			l.dense[id] = 0
			l.n--
		}
		return
	}
	if _, ok := l.spill[id]; ok {
		delete(l.spill, id)
		l.n--
	}
}

// len returns how many ids are linked.
func (l *links) len() int { return l.n }

// keys returns the linked ids in ascending order.
func (l *links) keys() []int64 {
	out := make([]int64, 0, l.n)
	for id, v := range l.dense {
		if v != 0 {
			out = append(out, int64(id))
		}
	}
	if len(l.spill) == 0 {
		return out
	}
	out = append(out, slices.Collect(maps.Keys(l.spill))...)
	slices.Sort(out)
	return out
}
