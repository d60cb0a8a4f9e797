package longterm

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/engine"
	"github.com/agentmem/agentmem/vdb"
)

// A long-term memory is the engine's source of its own records
// (engine.Store): a view holds the memory's read lock, so that a search
// reads one state of it.
var (
	_ engine.Store[*parent]         = (*Memory)(nil)
	_ engine.Adjacent               = (*nsView)(nil)
	_ engine.Selector               = (*nsView)(nil)
	_ engine.During                 = (*nsView)(nil)
	_ engine.VectorBatcher[*parent] = (*view)(nil)
)

// View returns a view of the memory for one search: its read lock, held
// until the view's Close.
func (m *Memory) View(ctx context.Context) (engine.Source[*parent], error) {
	m.mu.RLock()
	if m.closed {
		m.mu.RUnlock()
		return nil, ErrClosed
	}
	return &view{m: m}, nil
}

// view is the engine's source over a memory whose read lock it holds.
type view struct {
	m    *Memory
	once sync.Once
}

// Parallel: the keyword and the vector path only read, under the read
// lock, and may run side by side.
func (v *view) Parallel() bool { return true }

func (v *view) Close() error {
	v.once.Do(v.m.mu.RUnlock)
	return nil
}

func (v *view) Namespaces(ctx context.Context, ns string) ([]engine.Namespace[*parent], error) {
	ti := v.m.turnIdx()
	names := []string{ns}
	if ns == "" {
		names = ti.namespaces(v.m)
	}
	out := make([]engine.Namespace[*parent], 0, len(names))
	for i, n := range ti.getAll(names, v.m) {
		if len(n.parents) > 0 {
			out = append(out, &nsView{m: v.m, name: names[i], n: n})
		}
	}
	return out, nil
}

func (v *view) Vectors(ctx context.Context, scope engine.Scope, qvec []float32, n int, minScore float32) ([]engine.Chunk[*parent], bool, error) {
	m := v.m
	q := Query{Namespace: scope.Namespace, From: scope.From, To: scope.To}
	res, err := m.vectorSearch(ctx, q, qvec, n, minScore, m.filter(scope))
	if err != nil {
		return nil, false, err
	}
	return m.chunks(res), len(res) < n || n >= len(m.children), nil
}

// VectorsBatch is Vectors for each of qvecs in scope's namespace, through
// one batch search of its vectors (engine.VectorBatcher): the best n
// chunks of the namespace with a score of at least minScore, those of
// records out of scope left out, as Vectors finds them (exactly, where a
// namespace past WithANN's size has Vectors search approximately). A
// scope with a time range, which Vectors searches deeper for, or without
// a namespace is searched a vector at a time.
func (v *view) VectorsBatch(ctx context.Context, scope engine.Scope, qvecs [][]float32, n int, minScore float32) ([][]engine.Chunk[*parent], error) {
	m := v.m
	out := make([][]engine.Chunk[*parent], len(qvecs))
	db := m.vecs[scope.Namespace]
	if scope.Namespace == "" || scope.Timed() || db == nil || db.Len() == 0 || n <= 0 {
		for i, q := range qvecs {
			var err error
			if out[i], _, err = v.Vectors(ctx, scope, q, n, minScore); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	res, err := db.SearchBatch(ctx, qvecs, min(n, db.Len()))
	if err != nil {
		return nil, fmt.Errorf("longterm: vector search: %w", err)
	}
	keep := m.filter(scope)
	for i, rs := range res {
		kept := rs[:0]
		for _, r := range rs {
			if r.Score < minScore {
				break
			}
			if keep == nil || keep(r.ID) {
				kept = append(kept, r)
			}
		}
		out[i] = m.chunks(kept)
	}
	return out, nil
}

// chunks returns the engine's chunks of vector results, each its child's
// record and index, leaving out an id no child has. m.mu must be held.
func (m *Memory) chunks(res []vdb.Result) []engine.Chunk[*parent] {
	out := make([]engine.Chunk[*parent], 0, len(res))
	for _, r := range res {
		if ref, ok := m.children[r.ID]; ok {
			out = append(out, engine.Chunk[*parent]{Record: ref.p, Index: ref.i, Score: float64(r.Score)})
		}
	}
	return out
}

func (v *view) Docs(ctx context.Context, keys []*parent) ([]engine.Doc, error) {
	out := make([]engine.Doc, len(keys))
	for i, p := range keys {
		texts := make([]string, len(p.children))
		for j, ch := range p.children {
			texts[j] = ch.text
		}
		out[i] = engine.Doc{Record: p.rec, Chunks: texts}
	}
	return out, nil
}

func (v *view) Neighbours(ctx context.Context, keys []*parent, n int) (before, after [][]memory.Record, err error) {
	before, after = make([][]memory.Record, len(keys)), make([][]memory.Record, len(keys))
	for i, p := range keys {
		before[i], after[i] = v.m.neighbours(p.rec.ID, n)
	}
	return before, after, nil
}

// nsView is the engine's source of one namespace's keyword path: its turn
// index.
type nsView struct {
	m    *Memory
	name string
	n    *nsTurns
}

func (s *nsView) Name() string { return s.name }

func (s *nsView) Key(id int64) *parent { return s.n.parents[id] }

func (s *nsView) Speakers() []string {
	out := make([]string, 0, len(s.n.speakers))
	for sp := range s.n.speakers {
		out = append(out, sp)
	}
	slices.Sort(out)
	return out
}

func (s *nsView) Search(ctx context.Context, groups []keyword.QueryGroup, p keyword.Params, k int, scope engine.Scope) ([]keyword.Result, error) {
	return s.n.text.SearchGroups(groups, p, k, s.keep(scope)), nil
}

// Select is Search's results in no order (engine.Selector).
func (s *nsView) Select(ctx context.Context, dst []keyword.Result, groups []keyword.QueryGroup, p keyword.Params, k int, scope engine.Scope) ([]keyword.Result, error) {
	return s.n.text.SelectGroups(dst, groups, p, k, s.keep(scope)), nil
}

// keep returns the test of a record id that scope needs, or nil when it
// keeps every record.
func (s *nsView) keep(scope engine.Scope) func(int64) bool {
	valid := s.m.validFilter(scope)
	if valid == nil && !scope.Timed() {
		return nil
	}
	return func(id int64) bool {
		p := s.n.parents[id]
		return p != nil && scope.Contains(p.rec.Time) && (valid == nil || valid(&p.rec))
	}
}

func (s *nsView) Episodes(ctx context.Context, groups []keyword.QueryGroup, p keyword.Params, k int) ([]keyword.Result, error) {
	return s.n.episodes.SearchGroups(groups, p, k, nil), nil
}

func (s *nsView) EpisodeOf(id int64) int64 { return s.n.episodeOf.at(id) }

func (s *nsView) Owner(id int64) (string, string, bool) {
	p := s.n.parents[id]
	if p == nil {
		return "", "", false
	}
	return p.rec.ID, p.rec.Speaker, true
}

// Links has nothing to read: Link looks the records up.
func (s *nsView) Links(ctx context.Context, ids, around []int64) error { return nil }

func (s *nsView) Link(id int64) (engine.Link, bool) {
	p := s.n.parents[id]
	if p == nil {
		return engine.Link{}, false
	}
	l := engine.Link{ID: p.rec.ID, Speaker: p.rec.Speaker, Time: p.rec.Time, Since: p.rec.Since(), Until: p.rec.ValidUntil,
		Episode: s.n.episodeOf.at(id), Prev: -1, Next: -1}
	if prev, ok := s.n.leader.get(id); ok {
		l.Prev = prev
	}
	if next, ok := s.n.follower.get(id); ok {
		l.Next = next
	}
	return l, true
}

// Adjacent is Link(id)'s Prev and Next (-1 for none), without reading
// the record (engine.Adjacent).
func (s *nsView) Adjacent(id int64) (prev, next int64) {
	prev, next = -1, -1
	if p, ok := s.n.leader.get(id); ok {
		prev = p
	}
	if f, ok := s.n.follower.get(id); ok {
		next = f
	}
	return prev, next
}

func (s *nsView) Terms(ctx context.Context, id int64) ([]keyword.TermCount, int, error) {
	terms, n := s.n.text.Terms(id)
	return terms, n, nil
}

func (s *nsView) Newest(ctx context.Context) (time.Time, error) {
	if s.n.last == nil {
		return time.Time{}, nil
	}
	return s.n.last.rec.Time, nil
}

func (s *nsView) DocFreqs(ctx context.Context, terms []string) (int, []int, error) {
	df := make([]int, len(terms))
	for i, t := range terms {
		df[i] = s.n.text.DocFreq(t)
	}
	return s.n.text.Len(), df, nil
}

func (s *nsView) AvgLength() float64 { return s.n.text.AvgLength() }

// AllHold: the memory's counters (facts.needsFilter) answer for every
// namespace at once.
func (s *nsView) AllHold(t time.Time) bool { return !s.m.facts.needsFilter(t) }

// During returns up to n of the namespace's records said in [from, to),
// by ascending id (engine.During): the first n of them by time, found by
// a binary search of the namespace's records ordered by time.
func (s *nsView) During(ctx context.Context, from, to time.Time, n int) ([]int64, error) {
	byTime := s.n.timeOrder()
	lo, _ := slices.BinarySearchFunc(byTime, from, func(e timeID, t time.Time) int { return e.t.Compare(t) })
	var out []int64
	for _, e := range byTime[lo:] {
		if !e.t.Before(to) || len(out) == n {
			break
		}
		out = append(out, e.id)
	}
	slices.Sort(out)
	return out, nil
}
