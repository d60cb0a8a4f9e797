package memorytest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/stretchr/testify/assert"

	"github.com/agentmem/agentmem/memory"
)

// cancelMsg is the ContextCancelled rule.
const cancelMsg = "rule: a call with a cancelled context fails with an error wrapping context.Canceled and changes nothing, or succeeds whole"

// contextCancelled: a write with a cancelled context is all or nothing;
// what it left is what Get, every search path, List and a reopened store
// see.
func contextCancelled(e *env) {
	s := e.fresh(0)
	ctx, cancel := context.WithCancel(e.ctx())
	cancel()
	failed := func(err error, what string) bool {
		e.t.Helper()
		if err != nil && !errors.Is(err, context.Canceled) {
			e.t.Errorf("%s: %s: %v", cancelMsg, what, err)
		}
		return err != nil
	}
	if s.rs == nil {
		if !failed(s.m.Update(ctx, sentence(0)), "Update") {
			s.checkCount(e, 1, cancelMsg+": Update")
		} else {
			s.checkCount(e, 0, cancelMsg+": Update")
		}
		_, err := s.m.Search(ctx, sentence(0))
		failed(err, "Search")
		return
	}
	want := map[string]string{}
	for i := range 4 {
		r := s.add(e, memory.Record{ID: fmt.Sprint("c", i), Text: harbor(i), Time: hour(i)}, "rule: Add succeeds")
		want[r.ID] = r.Text
	}
	all := []string{"c0", "c1", "c2", "c3", "c8", "c9"}
	extra := 0 // records stored by Update
	if !failed(s.rs.Forget(ctx, "c1"), "Forget") {
		delete(want, "c1")
	}
	if _, err := s.rs.Add(ctx, memory.Record{ID: "c2", Text: harbor(7), Time: hour(7)}); !failed(err, "Add of a stored id") {
		want["c2"] = harbor(7)
	}
	if _, err := s.rs.Add(ctx, memory.Record{ID: "c9", Text: harbor(9), Time: hour(9)}); !failed(err, "Add") {
		want["c9"] = harbor(9)
	}
	batch := []memory.Record{{ID: "c3", Text: harbor(8), Time: hour(8)}, {ID: "c8", Text: harbor(10), Time: hour(10)}}
	if _, err := s.rs.AddBatch(ctx, batch); !failed(err, "AddBatch") {
		want["c3"], want["c8"] = harbor(8), harbor(10)
	}
	if !failed(s.m.Update(ctx, sentence(0)), "Update") {
		extra++
	}
	_, err := s.m.Search(ctx, shared)
	failed(err, "Search")
	if s.q != nil {
		for _, mode := range modes {
			_, err := s.q.Query(ctx, memory.Query{Text: shared, Mode: mode})
			failed(err, fmt.Sprintf("Query (%v)", mode))
		}
	}
	if s.l != nil {
		_, _, err := s.l.List(ctx, memory.ListOptions{})
		failed(err, "List")
	}
	checkHolds(e, s, want, all, extra, "after writes with a cancelled context")
	if s.reopen != nil {
		s = e.reopened(s, "after writes with a cancelled context")
		checkHolds(e, s, want, all, extra, "after writes with a cancelled context and reopening the store")
	}
}

// checkHolds checks that of the records all, the memory holds exactly
// want (id → text), on every path, and extra other records.
func checkHolds(e *env, s *subject, want map[string]string, all []string, extra int, when string) {
	e.t.Helper()
	for _, id := range all {
		got, ok := s.rs.Get(id)
		text, wanted := want[id]
		switch {
		case ok != wanted:
			e.t.Errorf("%s (%s): Get(%q) finds a record: %v, want %v", cancelMsg, when, id, ok, wanted)
		case ok && got.Text != text:
			e.t.Errorf("%s (%s): Get(%q) = %q, want %q", cancelMsg, when, id, got.Text, text)
		}
	}
	s.checkCount(e, len(want)+extra, fmt.Sprintf("%s (%s)", cancelMsg, when))
	ids := slices.Sorted(maps.Keys(want))
	if s.q != nil {
		for _, mode := range modes {
			hits := s.query(e, memory.Query{Text: shared, Mode: mode, K: 20, MinScore: everything}, "rule: Query succeeds")
			var found []string
			for _, h := range hits {
				if slices.Contains(all, h.ID) {
					found = append(found, h.ID)
					if text, ok := want[h.ID]; ok {
						assert.Equal(e.t, text, h.Text, "%s (%s, %v)", cancelMsg, when, mode)
					}
				}
			}
			slices.Sort(found)
			assert.Equal(e.t, ids, found, "%s: every path finds what Get does (%s, %v)", cancelMsg, when, mode)
		}
	}
	if s.l != nil {
		recs, _ := s.list(e, memory.ListOptions{}, "rule: List succeeds")
		var listed []string
		for _, r := range recs {
			if slices.Contains(all, r.ID) {
				listed = append(listed, r.ID)
			}
		}
		slices.Sort(listed)
		assert.Equal(e.t, ids, listed, "%s: List lists what Get finds (%s)", cancelMsg, when)
	}
}
