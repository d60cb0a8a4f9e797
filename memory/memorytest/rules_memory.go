package memorytest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory"
)

// memoryRules are the rules of memory.Memory, and of closing and
// reopening one.
var memoryRules = []rule{
	{"SearchEmpty", searchEmpty},
	{"UpdateSearch", updateSearch},
	{"UpdateEmptyText", updateEmptyText},
	{"QueryTextRepaired", queryTextRepaired},
	{"Concurrent", concurrent},
	{"ContextCancelled", contextCancelled},
	{"CloseIdempotent", closeIdempotent},
	{"UseAfterClose", useAfterClose},
	{"CloseWhileBusy", closeWhileBusy},
	{"Reopen", reopen},
}

func searchEmpty(e *env) {
	s := e.fresh(0)
	hits, err := s.m.Search(e.ctx(), "kumquat harbor")
	require.NoError(e.t, err, "rule: Search of an empty memory is not an error")
	assert.Empty(e.t, hitIDs(hits), "rule: Search of an empty memory finds nothing")
	if s.q != nil {
		for _, mode := range modes {
			hits, err := s.q.Query(e.ctx(), memory.Query{Text: "kumquat harbor", Mode: mode, MinScore: everything})
			require.NoError(e.t, err, "rule: Query of an empty memory is not an error (%v)", mode)
			assert.Empty(e.t, hitIDs(hits), "rule: Query of an empty memory finds nothing (%v)", mode)
		}
	}
	if s.l != nil {
		recs, total := s.list(e, memory.ListOptions{}, "rule: List of an empty memory is not an error")
		assert.Empty(e.t, recs, "rule: List of an empty memory lists nothing")
		assert.Zero(e.t, total, "rule: List of an empty memory counts 0")
	}
	if s.rs != nil {
		_, ok := s.rs.Get("kumquat")
		assert.False(e.t, ok, "rule: Get of an empty memory finds nothing")
	}
}

func updateSearch(e *env) {
	s := e.fresh(0)
	const n = 5
	segs := make([]string, n)
	for i := range segs {
		segs[i] = sentence(i)
		require.NoError(e.t, s.m.Update(e.ctx(), segs[i]), "rule: Update stores a segment")
	}
	for _, seg := range segs {
		hits, err := s.m.Search(e.ctx(), seg)
		require.NoError(e.t, err, "rule: Search succeeds")
		checkHits(e.t, hits, 0, fmt.Sprintf("Search(%q)", seg))
		if !assert.NotEmpty(e.t, hits, "rule: Search finds a segment stored by Update by its own text: %q", seg) {
			continue
		}
		assert.Equal(e.t, seg, hits[0].Text, "rule: a segment is the best match for its own text")
		for _, h := range hits {
			assert.Contains(e.t, segs, h.Text, "rule: a hit's Text is a stored segment, whole")
			assert.NotEmpty(e.t, h.ID, "rule: a hit has the ID of its record")
		}
	}
	s.checkCount(e, n, "rule: each Update stores one record")
}

func updateEmptyText(e *env) {
	s := e.fresh(0)
	for _, seg := range []string{"", " ", " \t\n "} {
		err := s.m.Update(e.ctx(), seg)
		assert.ErrorIs(e.t, err, memory.ErrEmptyText, "rule: Update of an empty or white-space segment %q fails with ErrEmptyText", seg)
	}
	s.checkCount(e, 0, "rule: a failed Update stores nothing")
}

// queryTextRepaired: a question is never refused for its text.
func queryTextRepaired(e *env) {
	s := e.fresh(0)
	seg := sentence(0)
	require.NoError(e.t, s.m.Update(e.ctx(), seg))
	for _, q := range []string{"?!", "", "   ", "kumquat \xff\xfe harbor", "\xc3"} {
		hits, err := s.m.Search(e.ctx(), q)
		assert.NoError(e.t, err, "rule: Search repairs a question (invalid UTF-8, no letter or digit) rather than refusing it: %q", q)
		checkHits(e.t, hits, 0, fmt.Sprintf("Search(%q)", q))
		if s.q == nil {
			continue
		}
		for _, mode := range modes {
			hits, err := s.q.Query(e.ctx(), memory.Query{Text: q, Mode: mode})
			assert.NoError(e.t, err, "rule: Query repairs a question (invalid UTF-8, no letter or digit) rather than refusing it: %q, %v", q, mode)
			checkHits(e.t, hits, 0, fmt.Sprintf("Query(%q, %v)", q, mode))
		}
	}
	hits, err := s.m.Search(e.ctx(), "The note about the kumquat\xff was written by Alice")
	require.NoError(e.t, err)
	if assert.NotEmpty(e.t, hits, "rule: a question with invalid UTF-8 is repaired and still finds what its valid words match") {
		assert.Equal(e.t, seg, hits[0].Text, "rule: a question with invalid UTF-8 is repaired and still finds what its valid words match")
	}
}

// concurrent: writers and readers at once (meaningful under -race); every
// write is kept.
func concurrent(e *env) {
	s := e.fresh(0)
	const writers, each = 4, 6
	text := func(w, i int) string {
		return fmt.Sprintf("%s wrote about the %s on day %s.", people[w], topics[i], days[(w+i)%len(days)])
	}
	var wg, rg sync.WaitGroup
	stop := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				var err error
				if s.rs != nil {
					_, err = s.rs.Add(e.ctx(), memory.Record{ID: fmt.Sprintf("w%d-%d", w, i), Text: text(w, i)})
				} else {
					err = s.m.Update(e.ctx(), text(w, i))
				}
				if err != nil {
					e.t.Errorf("rule: concurrent writes succeed: writer %d, write %d: %v", w, i, err)
					return
				}
			}
		})
	}
	for r := range 2 {
		rg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.m.Search(e.ctx(), text(r, n%each)); err != nil {
					e.t.Errorf("rule: Search runs beside writers: %v", err)
					return
				}
				if s.q != nil {
					if _, err := s.q.Query(e.ctx(), memory.Query{Text: topics[n%each], Mode: modes[n%3]}); err != nil {
						e.t.Errorf("rule: Query runs beside writers: %v", err)
						return
					}
				}
				if s.l != nil {
					if _, _, err := s.l.List(e.ctx(), memory.ListOptions{Limit: 5}); err != nil {
						e.t.Errorf("rule: List runs beside writers: %v", err)
						return
					}
				}
				if s.rs != nil {
					s.rs.Get(fmt.Sprintf("w%d-%d", r, n%each))
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	rg.Wait()
	s.checkCount(e, writers*each, "rule: every concurrent write is kept")
	for w := range writers {
		for i := range each {
			if s.rs != nil {
				rec, ok := s.rs.Get(fmt.Sprintf("w%d-%d", w, i))
				if assert.True(e.t, ok, "rule: every concurrent write is kept: w%d-%d", w, i) {
					assert.Equal(e.t, text(w, i), rec.Text, "rule: every concurrent write is kept whole")
				}
				continue
			}
			hits, err := s.m.Search(e.ctx(), text(w, i))
			require.NoError(e.t, err)
			if assert.NotEmpty(e.t, hits, "rule: every concurrent write is kept: %q", text(w, i)) {
				assert.Equal(e.t, text(w, i), hits[0].Text, "rule: every concurrent write is kept whole")
			}
		}
	}
}

func closeIdempotent(e *env) {
	s := e.fresh(needCloser)
	require.NoError(e.t, s.m.Update(e.ctx(), sentence(0)))
	assert.NoError(e.t, s.closer.Close(), "rule: Close succeeds")
	assert.NoError(e.t, s.closer.Close(), "rule: Close is idempotent: a second Close succeeds")
}

func useAfterClose(e *env) {
	s := e.fresh(needCloser)
	var id string
	if s.rs != nil {
		id = s.add(e, memory.Record{ID: "closed-1", Text: sentence(0)}, "rule: Add succeeds").ID
	} else {
		require.NoError(e.t, s.m.Update(e.ctx(), sentence(0)))
	}
	require.NoError(e.t, s.closer.Close(), "rule: Close succeeds")
	const msg = "rule: every method returns ErrClosed after Close"
	assert.ErrorIs(e.t, s.m.Update(e.ctx(), sentence(1)), memory.ErrClosed, "%s: Update", msg)
	_, err := s.m.Search(e.ctx(), sentence(0))
	assert.ErrorIs(e.t, err, memory.ErrClosed, "%s: Search", msg)
	_, err = s.m.Search(e.ctx(), "?!")
	assert.ErrorIs(e.t, err, memory.ErrClosed, "%s: Search of a question without letters or digits", msg)
	if s.rs != nil {
		_, err = s.rs.Add(e.ctx(), memory.Record{Text: sentence(1)})
		assert.ErrorIs(e.t, err, memory.ErrClosed, "%s: Add", msg)
		_, err = s.rs.AddBatch(e.ctx(), []memory.Record{{Text: sentence(1)}, {Text: sentence(2)}})
		assert.ErrorIs(e.t, err, memory.ErrClosed, "%s: AddBatch", msg)
		assert.ErrorIs(e.t, s.rs.Forget(e.ctx(), id), memory.ErrClosed, "%s: Forget", msg)
		s.rs.Get(id) // may answer either way, but must not panic
	}
	if s.q != nil {
		for _, mode := range modes {
			_, err = s.q.Query(e.ctx(), memory.Query{Text: sentence(0), Mode: mode})
			assert.ErrorIs(e.t, err, memory.ErrClosed, "%s: Query (%v)", msg, mode)
		}
		_, err = s.q.Query(e.ctx(), memory.Query{Text: "?!"})
		assert.ErrorIs(e.t, err, memory.ErrClosed, "%s: Query of a question without letters or digits", msg)
	}
	if s.l != nil {
		_, _, err = s.l.List(e.ctx(), memory.ListOptions{})
		assert.ErrorIs(e.t, err, memory.ErrClosed, "%s: List", msg)
	}
}

// closeWhileBusy: Close while other goroutines use the memory; each call
// either does its work or fails with ErrClosed, and once Close has
// returned every call fails with ErrClosed.
func closeWhileBusy(e *env) {
	s := e.fresh(needCloser)
	for i := range 4 {
		require.NoError(e.t, s.m.Update(e.ctx(), harbor(i)), "rule: Update succeeds")
	}
	// call makes a call of one of five kinds; what is "" for a kind the
	// memory does not implement.
	call := func(kind, g, i int) (what string, err error) {
		switch kind {
		case 0:
			return "Update", s.m.Update(e.ctx(), harbor(i))
		case 1:
			_, err = s.m.Search(e.ctx(), harbor(i))
			return "Search", err
		case 2:
			if s.q != nil {
				_, err = s.q.Query(e.ctx(), memory.Query{Text: shared, Mode: modes[i%3], Neighbours: 1})
				return "Query", err
			}
		case 3:
			if s.l != nil {
				_, _, err = s.l.List(e.ctx(), memory.ListOptions{Limit: 3})
				return "List", err
			}
		case 4:
			if s.rs != nil {
				_, err = s.rs.Add(e.ctx(), memory.Record{ID: fmt.Sprint("g", g), Text: harbor(i)})
				return "Add", err
			}
		}
		return "", nil
	}
	var closed atomic.Bool
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				after := closed.Load()
				what, err := call((g+i)%5, g, i)
				if err != nil && !errors.Is(err, memory.ErrClosed) {
					e.t.Errorf("rule: a call made while the memory closes succeeds or fails with ErrClosed: %s: %v", what, err)
					return
				}
				if err != nil {
					break
				}
				if after && what != "" {
					e.t.Errorf("rule: every call fails with ErrClosed once Close has returned: %s succeeded", what)
					return
				}
				if i == 100000 {
					e.t.Errorf("rule: every call fails with ErrClosed once Close has returned: goroutine %d never saw ErrClosed", g)
					return
				}
			}
			for !closed.Load() {
				time.Sleep(time.Millisecond)
			}
			for kind := range 5 {
				if what, err := call(kind, g, kind); what != "" && !errors.Is(err, memory.ErrClosed) {
					e.t.Errorf("rule: every call fails with ErrClosed once Close has returned: %s: %v", what, err)
				}
			}
		})
	}
	for i := range 10 {
		if s.rs != nil {
			s.rs.Get(fmt.Sprint("g", i%4))
		} else {
			_, _ = s.m.Search(e.ctx(), shared)
		}
	}
	assert.NoError(e.t, s.closer.Close(), "rule: Close succeeds while the memory is in use")
	closed.Store(true)
	wg.Wait()
}
