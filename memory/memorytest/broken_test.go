package memorytest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/longterm"
)

// byQueryWords makes b rank the hits holding the most of the query's
// words first, whatever those words are and whoever said them.
func byQueryWords(b *broken) {
	b.query = func(ctx context.Context, q memory.Query) ([]memory.Hit, error) {
		hits, err := b.m.Query(ctx, q)
		out := slices.Clone(hits)
		words := func(h memory.Hit) int {
			n := 0
			for _, w := range strings.Fields(strings.ToLower(q.Text)) {
				if strings.Contains(strings.ToLower(h.Text), strings.Trim(w, "?")) {
					n++
				}
			}
			return n
		}
		slices.SortStableFunc(out, func(a, b memory.Hit) int { return words(b) - words(a) })
		return out, err
	}
}

// broken is a memory that passes every rule — a longterm.Memory, which
// it also makes return memory.ErrClosed from every method after Close and
// refuse a Forget with a done context (longterm's known failures) —
// except where a hook replaces a method: each breaker below sets hooks
// that break one rule, and TestMemorytestCatchesBroken checks that the
// rule fails.
type broken struct {
	m      *longterm.Memory
	closed atomic.Bool

	update   func(ctx context.Context, segment string) error
	search   func(ctx context.Context, question string) ([]memory.Hit, error)
	add      func(ctx context.Context, rec memory.Record) (string, error)
	addBatch func(ctx context.Context, recs []memory.Record) ([]string, error)
	get      func(id string) (memory.Record, bool)
	forget   func(ctx context.Context, id string) error
	query    func(ctx context.Context, q memory.Query) ([]memory.Hit, error)
	list     func(ctx context.Context, opts memory.ListOptions) ([]memory.Record, int, error)
	holds    func(ctx context.Context, ns string) (bool, error)
	close    func() error

	remember  func(ctx context.Context, recs ...memory.Record) ([]memory.Outcome, error)
	supersede func(ctx context.Context, old string, rec memory.Record) (memory.Outcome, error)
	history   func(ctx context.Context, id string) ([]memory.Record, error)
}

var (
	_ memory.Records = (*broken)(nil)
	_ memory.Querier = (*broken)(nil)
	_ memory.Lister  = (*broken)(nil)
	_ memory.Facts   = (*broken)(nil)

	_ memory.NamespaceHolder = (*broken)(nil)
)

func (b *broken) Remember(ctx context.Context, recs ...memory.Record) ([]memory.Outcome, error) {
	if b.remember != nil {
		return b.remember(ctx, recs...)
	}
	return b.m.Remember(ctx, recs...)
}

func (b *broken) Supersede(ctx context.Context, old string, rec memory.Record) (memory.Outcome, error) {
	if b.supersede != nil {
		return b.supersede(ctx, old, rec)
	}
	return b.m.Supersede(ctx, old, rec)
}

func (b *broken) History(ctx context.Context, id string) ([]memory.Record, error) {
	if b.history != nil {
		return b.history(ctx, id)
	}
	return b.m.History(ctx, id)
}

func (b *broken) Update(ctx context.Context, segment string) error {
	if b.update != nil {
		return b.update(ctx, segment)
	}
	return b.m.Update(ctx, segment)
}

func (b *broken) Search(ctx context.Context, question string) ([]memory.Hit, error) {
	if b.search != nil {
		return b.search(ctx, question)
	}
	if b.closed.Load() {
		return nil, memory.ErrClosed
	}
	return b.m.Search(ctx, question)
}

func (b *broken) Add(ctx context.Context, rec memory.Record) (string, error) {
	if b.add != nil {
		return b.add(ctx, rec)
	}
	return b.m.Add(ctx, rec)
}

func (b *broken) AddBatch(ctx context.Context, recs []memory.Record) ([]string, error) {
	if b.addBatch != nil {
		return b.addBatch(ctx, recs)
	}
	return b.m.AddBatch(ctx, recs)
}

func (b *broken) Get(id string) (memory.Record, bool) {
	if b.get != nil {
		return b.get(id)
	}
	return b.m.Get(id)
}

func (b *broken) Forget(ctx context.Context, id string) error {
	if b.forget != nil {
		return b.forget(ctx, id)
	}
	if err := ctx.Err(); err != nil {
		return err // longterm's Forget half forgets with a done context
	}
	return b.m.Forget(ctx, id)
}

func (b *broken) Query(ctx context.Context, q memory.Query) ([]memory.Hit, error) {
	if b.query != nil {
		return b.query(ctx, q)
	}
	if b.closed.Load() {
		return nil, memory.ErrClosed
	}
	return b.m.Query(ctx, q)
}

func (b *broken) List(ctx context.Context, opts memory.ListOptions) ([]memory.Record, int, error) {
	if b.list != nil {
		return b.list(ctx, opts)
	}
	return b.m.List(ctx, opts)
}

func (b *broken) HoldsNamespace(ctx context.Context, ns string) (bool, error) {
	if b.holds != nil {
		return b.holds(ctx, ns)
	}
	return b.m.HoldsNamespace(ctx, ns)
}

func (b *broken) Close() error {
	if b.close != nil {
		return b.close()
	}
	b.closed.Store(true)
	return b.m.Close()
}

// openBroken returns an Open of a longterm store on a directory, with
// Reopen, each handle wrapped in a broken that spoil sets the hooks of.
// The longterm memory is closed as the rule ends, whatever the hooks do.
func openBroken(spoil func(b *broken)) Open {
	return OpenDir(func(ctx context.Context, dir string) (memory.Memory, error) {
		m, err := longterm.Open(ctx, dir, embedder)
		if err != nil {
			return nil, err
		}
		b := &broken{m: m}
		if spoil != nil {
			spoil(b)
		}
		return b, nil
	})
}

// A breaker breaks one rule.
type breaker struct {
	rule, why string
	open      Open
}

// spoil is a breaker of rule that sets hooks.
func spoil(rule, why string, f func(b *broken)) breaker {
	return breaker{rule, why, openBroken(f)}
}

// spoilQuery is a breaker of rule whose Query changes the query first.
func spoilQuery(rule, why string, change func(q *memory.Query)) breaker {
	return spoil(rule, why, func(b *broken) {
		b.query = func(ctx context.Context, q memory.Query) ([]memory.Hit, error) {
			change(&q)
			return b.m.Query(ctx, q)
		}
	})
}

// spoilList is a breaker of rule whose List changes the options first.
func spoilList(rule, why string, change func(opts *memory.ListOptions)) breaker {
	return spoil(rule, why, func(b *broken) {
		b.list = func(ctx context.Context, opts memory.ListOptions) ([]memory.Record, int, error) {
			change(&opts)
			return b.m.List(ctx, opts)
		}
	})
}

// inflight counts the calls in progress of a hook, which sleeps so that
// concurrent calls overlap.
type inflight struct {
	mu  sync.Mutex
	ids map[string]int
}

func (f *inflight) enter(id string) (others int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ids == nil {
		f.ids = map[string]int{}
	}
	others = f.ids[""]
	if id != "" {
		others = f.ids[id]
		f.ids[id]++
	}
	f.ids[""]++
	return others
}

func (f *inflight) leave(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ids[""]--
	if id != "" {
		f.ids[id]--
	}
}

func reversed[S ~[]E, E any](s S) S {
	s = slices.Clone(s)
	slices.Reverse(s)
	return s
}

var breakers = []breaker{
	spoil("SearchEmpty", "finds a phantom hit", func(b *broken) {
		b.search = func(context.Context, string) ([]memory.Hit, error) {
			return []memory.Hit{{ID: "phantom", Text: "phantom"}}, nil
		}
	}),
	spoil("UpdateSearch", "drops every Update", func(b *broken) {
		b.update = func(context.Context, string) error { return nil }
	}),
	spoil("UpdateEmptyText", "stores a blank segment as a word", func(b *broken) {
		b.update = func(ctx context.Context, s string) error {
			if strings.TrimSpace(s) == "" {
				s = "blank"
			}
			return b.m.Update(ctx, s)
		}
	}),
	spoil("QueryTextRepaired", "refuses a question that is not valid UTF-8", func(b *broken) {
		b.search = func(ctx context.Context, q string) ([]memory.Hit, error) {
			if strings.ToValidUTF8(q, "") != q {
				return nil, memory.ErrInvalidArgument
			}
			return b.m.Search(ctx, q)
		}
	}),
	spoil("Concurrent", "drops an Add made while another is in progress", func(b *broken) {
		var f inflight
		b.add = func(ctx context.Context, rec memory.Record) (string, error) {
			others := f.enter("")
			defer f.leave("")
			time.Sleep(2 * time.Millisecond)
			if others > 0 {
				return rec.ID, nil
			}
			return b.m.Add(ctx, rec)
		}
	}),
	spoil("ContextCancelled", "forgets a record although its context is cancelled, and says it failed", func(b *broken) {
		b.forget = func(ctx context.Context, id string) error {
			if err := b.m.Forget(context.WithoutCancel(ctx), id); err != nil {
				return err
			}
			return ctx.Err()
		}
	}),
	spoil("CloseIdempotent", "fails a second Close", func(b *broken) {
		var done atomic.Bool
		b.close = func() error {
			if done.Swap(true) {
				return errors.New("already closed")
			}
			return b.m.Close()
		}
	}),
	spoil("UseAfterClose", "goes on working after Close", func(b *broken) {
		var calls atomic.Int32
		b.close = func() error {
			if calls.Add(1) == 1 {
				return nil // the rule's Close; the cleanup's closes
			}
			return b.m.Close()
		}
	}),
	spoil("CloseWhileBusy", "fails a search after Close with an error of its own", func(b *broken) {
		b.search = func(ctx context.Context, q string) ([]memory.Hit, error) {
			if b.closed.Load() {
				return nil, errors.New("search index released")
			}
			return b.m.Search(ctx, q)
		}
	}),
	{"Reopen", "forgets everything when reopened", func(t *testing.T) Subject {
		return Subject{Memory: openLongterm(t), Reopen: func() (memory.Memory, error) { return openLongterm(t), nil }}
	}},
	spoil("AddGet", "loses a record's speaker and tags", func(b *broken) {
		b.get = func(id string) (memory.Record, bool) {
			r, ok := b.m.Get(id)
			r.Speaker, r.Tags = "", nil
			return r, ok
		}
	}),
	spoil("GeneratedIDs", "gives every record without an id the same one", func(b *broken) {
		b.add = func(ctx context.Context, rec memory.Record) (string, error) {
			if rec.ID == "" {
				rec.ID = "generated"
			}
			return b.m.Add(ctx, rec)
		}
	}),
	spoil("AddSameIDReplaces", "answers Get with the first record stored under an id", func(b *broken) {
		var mu sync.Mutex
		first := map[string]memory.Record{}
		b.add = func(ctx context.Context, rec memory.Record) (string, error) {
			id, err := b.m.Add(ctx, rec)
			if err == nil {
				mu.Lock()
				if _, ok := first[id]; !ok {
					rec.ID = id
					first[id] = rec
				}
				mu.Unlock()
			}
			return id, err
		}
		b.get = func(id string) (memory.Record, bool) {
			mu.Lock()
			r, ok := first[id]
			mu.Unlock()
			if ok {
				return r, true
			}
			return b.m.Get(id)
		}
	}),
	spoil("AddBatch", "returns a batch's ids in reverse order", func(b *broken) {
		b.addBatch = func(ctx context.Context, recs []memory.Record) ([]string, error) {
			ids, err := b.m.AddBatch(ctx, recs)
			return reversed(ids), err
		}
	}),
	spoil("AddBatchAtomic", "adds a batch one record at a time", func(b *broken) {
		b.addBatch = func(ctx context.Context, recs []memory.Record) ([]string, error) {
			var ids []string
			for _, r := range recs {
				id, err := b.m.Add(ctx, r)
				if err != nil {
					return nil, err
				}
				ids = append(ids, id)
			}
			return ids, nil
		}
	}),
	spoil("Forget", "forgets nothing", func(b *broken) {
		b.forget = func(context.Context, string) error { return nil }
	}),
	spoil("AddEmptyText", "stores a blank record as a word", func(b *broken) {
		b.add = func(ctx context.Context, rec memory.Record) (string, error) {
			if strings.TrimSpace(rec.Text) == "" {
				rec.Text = "blank"
			}
			return b.m.Add(ctx, rec)
		}
	}),
	spoil("InvalidUTF8", "repairs a record that is not valid UTF-8", func(b *broken) {
		b.add = func(ctx context.Context, rec memory.Record) (string, error) {
			fix := func(s string) string { return strings.ToValidUTF8(s, "") }
			rec.ID, rec.Text, rec.Namespace, rec.Speaker = fix(rec.ID), fix(rec.Text), fix(rec.Namespace), fix(rec.Speaker)
			rec.Tags = slices.Clone(rec.Tags)
			for i := range rec.Tags {
				rec.Tags[i] = fix(rec.Tags[i])
			}
			return b.m.Add(ctx, rec)
		}
	}),
	spoil("ReturnsCopies", "answers Get from a cache that shares its Tags", func(b *broken) {
		var mu sync.Mutex
		cache := map[string]memory.Record{}
		b.get = func(id string) (memory.Record, bool) {
			mu.Lock()
			defer mu.Unlock()
			if r, ok := cache[id]; ok {
				return r, true
			}
			r, ok := b.m.Get(id)
			if ok {
				cache[id] = r
			}
			return r, ok
		}
	}),
	spoil("ConcurrentSameID", "stores an Add of an id that another Add is storing under a second id", func(b *broken) {
		var f inflight
		b.add = func(ctx context.Context, rec memory.Record) (string, error) {
			id := rec.ID
			if f.enter(id) > 0 {
				rec.ID += "-again"
			}
			defer f.leave(id)
			time.Sleep(2 * time.Millisecond)
			return b.m.Add(ctx, rec)
		}
	}),
	spoil("QueryFindsText", "leaves out the best hit", func(b *broken) {
		b.query = func(ctx context.Context, q memory.Query) ([]memory.Hit, error) {
			hits, err := b.m.Query(ctx, q)
			if len(hits) > 0 {
				hits = hits[1:]
			}
			return hits, err
		}
	}),
	spoilQuery("QueryModes", "runs every Query in Hybrid mode", func(q *memory.Query) {
		q.Mode = memory.Hybrid
	}),
	spoil("QueryRelevance", "ignores MinRelevance", func(b *broken) {
		b.query = func(ctx context.Context, q memory.Query) ([]memory.Hit, error) {
			min := q.MinRelevance
			q.MinRelevance = -1
			hits, err := b.m.Query(ctx, q)
			if min > 0 && len(hits) > 0 {
				// Every hit claims at least the minimum, the weakest
				// below it.
				hits[len(hits)-1].Relevance = min / 2
			}
			return hits, err
		}
	}),
	spoilQuery("QueryTokenBudget", "ignores MaxTokens", func(q *memory.Query) {
		q.MaxTokens = 0
	}),
	spoilQuery("QueryK", "ignores K", func(q *memory.Query) {
		q.K = 0
	}),
	spoilQuery("QueryMinScore", "ignores MinScore", func(q *memory.Query) {
		q.MinScore = 0
	}),
	spoilQuery("QueryInvalid", "takes a negative K or an unknown Mode for the default", func(q *memory.Query) {
		q.K = max(q.K, 0)
		if q.Mode < memory.Hybrid || q.Mode > memory.KeywordOnly {
			q.Mode = memory.Hybrid
		}
	}),
	spoilQuery("QueryTimeRange", "ignores From and To", func(q *memory.Query) {
		q.From, q.To = time.Time{}, time.Time{}
	}),
	spoilQuery("QueryNeighbours", "ignores Neighbours", func(q *memory.Query) {
		q.Neighbours = 0
	}),
	spoilQuery("Namespaces", "ignores a Query's Namespace", func(q *memory.Query) {
		q.Namespace = ""
	}),
	spoil("QueryRecap", "loses the newest record", func(b *broken) {
		b.query = func(ctx context.Context, q memory.Query) ([]memory.Hit, error) {
			hits, err := b.m.Query(ctx, q)
			return slices.DeleteFunc(hits, func(h memory.Hit) bool { return h.ID == "r2" }), err
		}
	}),
	spoil("QueryNotes", "returns the records written around each hit too", func(b *broken) {
		b.query = func(ctx context.Context, q memory.Query) ([]memory.Hit, error) {
			q.Neighbours = 1
			hits, err := b.m.Query(ctx, q)
			out := slices.Clone(hits)
			for _, h := range hits {
				for _, r := range slices.Concat(h.Before, h.After) {
					if !slices.ContainsFunc(out, func(o memory.Hit) bool { return o.ID == r.ID }) {
						out = append(out, memory.Hit{ID: r.ID, Text: r.Text, Relevance: h.Relevance})
					}
				}
			}
			return out, err
		}
	}),
	spoil("QueryFunctionWords", "ranks the note with the most of the query's words first", byQueryWords),
	spoil("QuerySpeakerRoles", "ranks the turn with the most of the query's words first, whoever said it", byQueryWords),
	spoil("QuerySpeakerNames", "ranks the turn with the most of the query's words first, whoever said it", byQueryWords),
	spoil("QueryNewerVersion", "ranks by score alone", func(b *broken) {
		b.query = func(ctx context.Context, q memory.Query) ([]memory.Hit, error) {
			hits, err := b.m.Query(ctx, q)
			slices.SortStableFunc(hits, func(a, b memory.Hit) int { return cmp.Compare(b.Score, a.Score) })
			return hits, err
		}
	}),
	spoil("ListOrder", "lists newest first", func(b *broken) {
		b.list = func(ctx context.Context, opts memory.ListOptions) ([]memory.Record, int, error) {
			recs, total, err := b.m.List(ctx, opts)
			return reversed(recs), total, err
		}
	}),
	spoilList("ListPaging", "ignores Offset", func(opts *memory.ListOptions) {
		opts.Offset = 0
	}),
	spoil("HoldsNamespace", "answers whether the store holds a namespace with that prefix", func(b *broken) {
		b.holds = func(ctx context.Context, ns string) (bool, error) {
			recs, _, err := b.m.List(ctx, memory.ListOptions{})
			return slices.ContainsFunc(recs, func(r memory.Record) bool { return strings.HasPrefix(r.Namespace, ns) }), err
		}
	}),
	spoilList("ListFilter", "ignores From and To", func(opts *memory.ListOptions) {
		opts.From, opts.To = time.Time{}, time.Time{}
	}),
	spoil("FactsDuplicates", "stores every text again", func(b *broken) {
		store := func(ctx context.Context, rec memory.Record) (string, error) {
			if rec.ID == "" {
				rec.ID = fmt.Sprint("dup-", time.Now().UnixNano())
			}
			return b.m.Add(ctx, rec)
		}
		b.add = store
		b.remember = func(ctx context.Context, recs ...memory.Record) ([]memory.Outcome, error) {
			var outs []memory.Outcome
			for _, rec := range recs {
				id, err := store(ctx, rec)
				if err != nil {
					return nil, err
				}
				outs = append(outs, memory.Outcome{ID: id})
			}
			return outs, nil
		}
	}),
	spoil("FactsNearDuplicates", "reports no near-duplicate", func(b *broken) {
		b.remember = func(ctx context.Context, recs ...memory.Record) ([]memory.Outcome, error) {
			outs, err := b.m.Remember(ctx, recs...)
			for i := range outs {
				outs[i].Similar = nil
			}
			return outs, err
		}
	}),
	spoilQuery("FactsSupersede", "reads every version, always", func(q *memory.Query) { q.History = true }),
	spoil("FactsConflict", "supersedes without checking", func(b *broken) {
		b.supersede = func(ctx context.Context, old string, rec memory.Record) (memory.Outcome, error) {
			out, err := b.m.Supersede(ctx, old, rec)
			if errors.Is(err, memory.ErrSuperseded) || errors.Is(err, memory.ErrNotFound) {
				rec.Supersedes = ""
				id, err := b.m.Add(ctx, rec)
				return memory.Outcome{ID: id, Superseded: old}, err
			}
			return out, err
		}
	}),
	spoil("FactsValidity", "drops ValidUntil", func(b *broken) {
		b.add = func(ctx context.Context, rec memory.Record) (string, error) {
			rec.ValidUntil = time.Time{}
			return b.m.Add(ctx, rec)
		}
	}),
	spoil("FactsReopen", "loses the Seen counts", func(b *broken) {
		b.history = func(ctx context.Context, id string) ([]memory.Record, error) {
			h, err := b.m.History(ctx, id)
			for i := range h {
				h[i].Seen = 0
			}
			return h, err
		}
	}),
}

// checkRule runs one rule against the memories open makes, reporting to
// a recorder.
func checkRule(t *testing.T, name string, open Open, opts ...Option) *recorder {
	t.Helper()
	r := findRule(name)
	require.NotNil(t, r, "no rule %q", name)
	c := &config{}
	for _, o := range opts {
		o(c)
	}
	return record(t, func(tt tb) {
		r.check(&env{t: tt, open: func() Subject { return open(t) }, cfg: c})
	})
}

// TestMemorytestWrapperConforms checks that broken without hooks passes
// every rule, so that what a breaker's rule catches is its hook.
func TestMemorytestWrapperConforms(t *testing.T) {
	Run(t, openBroken(nil))
}

// TestMemorytestCatchesBroken checks that each rule fails on a memory
// that breaks it, and that every rule has such a memory.
func TestMemorytestCatchesBroken(t *testing.T) {
	covered := map[string]bool{}
	for _, b := range breakers {
		covered[b.rule] = true
		t.Run(b.rule, func(t *testing.T) {
			rec := checkRule(t, b.rule, b.open)
			switch {
			case rec.skipped:
				t.Errorf("rule %s skipped on a memory that %s:\n%s", b.rule, b.why, rec.report())
			case !rec.failed:
				t.Errorf("rule %s passed on a memory that %s", b.rule, b.why)
			case !strings.Contains(rec.report(), "rule: "):
				t.Errorf("rule %s failed on a memory that %s without saying which rule:\n%s", b.rule, b.why, rec.report())
			default:
				t.Logf("rule %s catches a memory that %s:\n%s", b.rule, b.why, firstLines(rec.report(), 5))
			}
		})
	}
	for _, r := range rules {
		if !covered[r.name] {
			t.Errorf("rule %s is not shown to catch a broken memory: add a breaker", r.name)
		}
	}
}

// firstLines returns the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
