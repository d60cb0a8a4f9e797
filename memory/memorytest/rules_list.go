package memorytest

import (
	"fmt"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentmem/agentmem/memory"
)

// listRules are the rules of memory.Lister.
var listRules = []rule{
	{"ListOrder", listOrder},
	{"ListPaging", listPaging},
	{"ListFilter", listFilter},
	{"HoldsNamespace", holdsNamespace},
}

func listOrder(e *env) {
	s := e.fresh(needRecords | needLister)
	recs := []memory.Record{
		{ID: "c", Time: hour(2)},
		{ID: "a", Time: hour(0)},
		{ID: "b2", Time: hour(1)},
		{ID: "tz", Time: hour(1).Add(30 * time.Minute).In(zone)},
		{ID: "b1", Time: hour(1)},
		{ID: "z", Time: hour(-1), Namespace: "beta"},
	}
	for i, r := range recs {
		r.Text = sentence(i)
		s.add(e, r, "rule: Add succeeds")
	}
	got, total := s.list(e, memory.ListOptions{}, "rule: List succeeds")
	assert.Equal(e.t, []string{"z", "a", "b1", "b2", "tz", "c"}, recordIDs(got), "rule: List lists every record oldest first (by Time, then by id), across namespaces")
	assert.Equal(e.t, len(recs), total, "rule: List's total counts every matching record")
	for _, r := range got {
		want, _ := s.rs.Get(r.ID)
		if d := diffRecord(want, r); d != "" {
			e.t.Errorf("rule: List returns the records as Get does: %s", d)
		}
	}
}

func listPaging(e *env) {
	s := e.fresh(needRecords | needLister)
	const n = 7
	var all []string
	for i := range n {
		id := fmt.Sprint("p", i)
		all = append(all, id)
		s.add(e, memory.Record{ID: id, Text: sentence(i), Time: hour(i)}, "rule: Add succeeds")
	}
	cases := []struct {
		offset, limit int
		want          []string
	}{
		{0, 0, all},
		{2, 3, all[2:5]},
		{0, 1, all[:1]},
		{5, 0, all[5:]},
		{5, 10, all[5:]},
		{0, 100, all},
		{n, 0, nil},
		{n + 10, 2, nil},
	}
	for _, c := range cases {
		got, total := s.list(e, memory.ListOptions{Offset: c.offset, Limit: c.limit}, "rule: List succeeds")
		assert.Equal(e.t, fmt.Sprint(c.want), fmt.Sprint(recordIDs(got)), "rule: Offset skips that many records and Limit caps how many are listed (0: no cap), oldest first (Offset %d, Limit %d)", c.offset, c.limit)
		assert.Equal(e.t, n, total, "rule: List's total counts the matching records before Offset and Limit (Offset %d, Limit %d)", c.offset, c.limit)
	}
	var walked []string
	for off := 0; off < n; off += 3 {
		got, _ := s.list(e, memory.ListOptions{Offset: off, Limit: 3}, "rule: List succeeds")
		walked = append(walked, recordIDs(got)...)
	}
	assert.Equal(e.t, all, walked, "rule: pages of List, Offset by Offset, list every record once")
	for _, o := range []memory.ListOptions{{Offset: -1}, {Limit: -1}, {Offset: -3, Limit: -3}} {
		_, _, err := s.l.List(e.ctx(), o)
		assert.ErrorIs(e.t, err, memory.ErrInvalidArgument, "rule: a negative Offset or Limit fails with ErrInvalidArgument (Offset %d, Limit %d)", o.Offset, o.Limit)
	}
}

func listFilter(e *env) {
	s := e.fresh(needRecords | needLister)
	recs := []memory.Record{
		{ID: "a0", Time: hour(0), Namespace: "alpha"},
		{ID: "a1", Time: hour(1), Namespace: "alpha"},
		{ID: "a2", Time: hour(2), Namespace: "alpha"},
		{ID: "a3", Time: hour(3), Namespace: "alpha"},
		{ID: "b1", Time: hour(1), Namespace: "beta"},
		{ID: "b2", Time: hour(2), Namespace: "beta"},
	}
	for i, r := range recs {
		r.Text = sentence(i)
		s.add(e, r, "rule: Add succeeds")
	}
	cases := []struct {
		what string
		opts memory.ListOptions
		want []string
	}{
		{"From t1, To t3", memory.ListOptions{From: hour(1), To: hour(3)}, []string{"a1", "b1", "a2", "b2"}},
		{"From t1, To t3, in UTC+9", memory.ListOptions{From: hour(1).In(zone), To: hour(3).In(zone)}, []string{"a1", "b1", "a2", "b2"}},
		{"From t2", memory.ListOptions{From: hour(2)}, []string{"a2", "b2", "a3"}},
		{"To t1", memory.ListOptions{To: hour(1)}, []string{"a0"}},
		{"From t1 + 1s", memory.ListOptions{From: hour(1).Add(time.Second)}, []string{"a2", "b2", "a3"}},
		{"From t1, To t1", memory.ListOptions{From: hour(1), To: hour(1)}, nil},
		{"alpha", memory.ListOptions{Namespace: "alpha"}, []string{"a0", "a1", "a2", "a3"}},
		{"alpha, From t1", memory.ListOptions{Namespace: "alpha", From: hour(1)}, []string{"a1", "a2", "a3"}},
		{"beta, To t2", memory.ListOptions{Namespace: "beta", To: hour(2)}, []string{"b1"}},
		{"nowhere", memory.ListOptions{Namespace: "nowhere"}, nil},
	}
	for _, c := range cases {
		got, total := s.list(e, c.opts, "rule: List with a Namespace, From and To succeeds")
		assert.Equal(e.t, fmt.Sprint(c.want), fmt.Sprint(recordIDs(got)), "rule: List lists exactly the records of the Namespace with From ≤ Time < To, oldest first (%s)", c.what)
		assert.Equal(e.t, len(c.want), total, "rule: List's total counts exactly the matching records (%s)", c.what)
	}
	got, total := s.list(e, memory.ListOptions{Namespace: "alpha", From: hour(1), Offset: 1, Limit: 1}, "rule: List succeeds")
	assert.Equal(e.t, []string{"a2"}, recordIDs(got), "rule: Offset and Limit page the filtered records")
	assert.Equal(e.t, 3, total, "rule: List's total counts the filtered records before Offset and Limit")
	recs2, _, err := s.l.List(e.ctx(), memory.ListOptions{From: hour(3), To: hour(1)})
	if err != nil {
		assert.ErrorIs(e.t, err, memory.ErrInvalidArgument, "rule: a List whose To is before its From lists nothing or fails with ErrInvalidArgument")
	} else {
		assert.Empty(e.t, recs2, "rule: a List whose To is before its From lists nothing or fails with ErrInvalidArgument")
	}
}

// holdsNamespace: memory.NamespaceHolder says a namespace holds records
// exactly when one of its records is stored, forgotten ones not counted,
// and is never fooled by a prefix of a name.
func holdsNamespace(e *env) {
	s := e.fresh(needRecords | needNamespaceHolder)
	if e.cfg.noNamespaces {
		e.t.Skipf("memorytest: the memory has no namespaces")
	}
	h := s.m.(memory.NamespaceHolder)
	holds := func(ns string) bool {
		ok, err := h.HoldsNamespace(e.ctx(), ns)
		if err != nil {
			e.t.Fatalf("rule: HoldsNamespace(%q) succeeds: %v", ns, err)
		}
		return ok
	}
	assert.False(e.t, holds("alpha"), "rule: an empty memory holds no namespace")
	s.add(e, memory.Record{ID: "h1", Namespace: "alpha", Text: sentence(1), Time: hour(0)}, "rule: Add succeeds")
	s.add(e, memory.Record{ID: "h2", Namespace: "alpha", Text: sentence(2), Time: hour(1)}, "rule: Add succeeds")
	assert.True(e.t, holds("alpha"), "rule: a namespace with records holds them")
	assert.False(e.t, holds("alp"), "rule: a prefix of a namespace's name is another namespace")
	assert.False(e.t, holds("beta"), "rule: a namespace never written holds nothing")
	for _, id := range []string{"h1", "h2"} {
		if err := s.rs.Forget(e.ctx(), id); err != nil {
			e.t.Fatalf("rule: Forget succeeds: %v", err)
		}
	}
	assert.False(e.t, holds("alpha"), "rule: a namespace whose records are all forgotten holds nothing")
}
