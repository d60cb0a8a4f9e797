package longterm

import (
	"context"
	"slices"

	"github.com/agentmem/agentmem/memory/engine"
)

// Query searches the memory with its engine (package engine: the ranking
// every store shares; see WithEngine). A query without letters or digits,
// and a namespace with nothing in it, give an empty result and a nil
// error.
//
// The keyword path ranks whole records by BM25 with their namespace's
// statistics, the query's words weighted by their idf too
// (WithQueryIDF), plus what the previous and the next record score
// (WithNeighbourWeight, WithNextWeight) and their conversation
// (WithEpisodeWeight), and prefers records spoken by a speaker the query
// names; WithQueryExpansion, WithFeedback, WithQueryTF and WithTimePrior
// add to it (all off by default). The vector path, run beside it, ranks
// records by their best child's cosine. Hybrid fuses the two as
// WithMarginFusion, WithScoreFusion, WithRRF or WithWeightedFusion say.
// Each path brings 4·K candidates, at least 200, so that the first
// results are the same for every K up to 50: asking for more does not
// reorder them.
func (m *Memory) Query(ctx context.Context, q Query) ([]Hit, error) {
	return engine.Search(ctx, m.opts.engine, m, q)
}

// neighbours returns up to n records written just before and just after
// record id in its conversation (the turn index's neighbour links: same
// namespace, at most neighbourGap apart), oldest first. m.mu must be held
// for reading.
func (m *Memory) neighbours(id string, n int) (before, after []Record) {
	p := m.parents[id]
	if p == nil {
		return nil, nil // forgotten since the search
	}
	nt := m.turnIdx().get(p.rec.Namespace, m)
	tid, ok := nt.ids[p]
	if !ok {
		return nil, nil
	}
	walk := func(l *links) []Record {
		var out []Record
		for cur := tid; len(out) < n; {
			next, ok := l.get(cur)
			if !ok {
				break
			}
			r := nt.parents[next].rec
			r.Tags = slices.Clone(r.Tags)
			out = append(out, r)
			cur = next
		}
		return out
	}
	before = walk(&nt.leader)
	slices.Reverse(before)
	return before, walk(&nt.follower)
}

// turnIdx returns the keyword path's index, made on first use.
func (m *Memory) turnIdx() *turnIndex {
	m.turnsOnce.Do(func() { m.turns = newTurnIndex(m.tok) })
	return m.turns
}

// filter returns the keep function for a search's scope (its namespace,
// time range and moment), or nil when it keeps everything. m.mu must be
// held.
func (m *Memory) filter(scope engine.Scope) func(int64) bool {
	valid := m.validFilter(scope)
	if scope.Namespace == "" && !scope.Timed() && valid == nil {
		return nil
	}
	return func(id int64) bool {
		ref, ok := m.children[id]
		if !ok {
			return false
		}
		r := &ref.p.rec
		return (scope.Namespace == "" || r.Namespace == scope.Namespace) && scope.Contains(r.Time) &&
			(valid == nil || valid(r))
	}
}

// validFilter returns the test of a record's validity that a search's
// scope needs, or nil when every record passes it: the search reads
// history, or no record has ended and none starts after the search's
// moment. m.mu must be held.
func (m *Memory) validFilter(scope engine.Scope) func(*Record) bool {
	if scope.History || !m.facts.needsFilter(scope.AsOf) {
		return nil
	}
	return func(r *Record) bool { return r.Current(scope.AsOf) }
}
