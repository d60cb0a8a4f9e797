package memorytest

import (
	"fmt"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory"
)

// kept is what a persistent memory must hold after reopening: the
// segments stored by Update, and (for a memory.Records) the records by id
// and the ids forgotten.
type kept struct {
	segments []string
	records  map[string]memory.Record
	gone     []string
	// conv are the sentences of the records of namespace "conv", which
	// are ids "c8", "c9"…, in the order they were written.
	conv []int
}

// addConv adds the record of sentence i to the conversation.
func (k *kept) addConv(e *env, s *subject, i int) {
	e.t.Helper()
	k.put(s.add(e, memory.Record{ID: fmt.Sprint("c", i), Text: sentence(i), Time: base.Add(time.Duration(i) * time.Minute), Namespace: "conv"}, "rule: Add succeeds"))
	k.conv = append(k.conv, i)
}

// reopen: everything written (updates, adds, replacements, batches,
// forgets) survives closing and reopening the store, twice.
func reopen(e *env) {
	s := e.fresh(0)
	if s.reopen == nil {
		e.t.Skipf("memorytest: Open returned no Subject.Reopen, so %T is not persistent: rule not applicable", s.m)
	}
	k := kept{records: map[string]memory.Record{}}
	k.segments = append(k.segments, sentence(0))
	require.NoError(e.t, s.m.Update(e.ctx(), sentence(0)), "rule: Update succeeds")
	if s.rs != nil {
		k.put(s.add(e, memory.Record{ID: "keep", Text: sentence(1), Time: hour(1), Namespace: "alpha", Speaker: "user", Tags: []string{"x", "y"}}, "rule: Add succeeds"))
		s.add(e, memory.Record{ID: "replaced", Text: sentence(2), Time: hour(2)}, "rule: Add succeeds")
		k.put(s.add(e, memory.Record{ID: "replaced", Text: sentence(3), Time: hour(3), Namespace: "beta"}, "rule: Add of a stored id succeeds"))
		s.add(e, memory.Record{ID: "forgotten", Text: sentence(4), Time: hour(4)}, "rule: Add succeeds")
		require.NoError(e.t, s.rs.Forget(e.ctx(), "forgotten"), "rule: Forget of a stored id succeeds")
		k.gone = append(k.gone, "forgotten")
		batch := []memory.Record{{ID: "batch-1", Text: sentence(5), Time: hour(5)}, {Text: sentence(6), Time: hour(6)}}
		ids, err := s.rs.AddBatch(e.ctx(), batch)
		require.NoError(e.t, err, "rule: AddBatch succeeds")
		require.Len(e.t, ids, 2, "rule: AddBatch returns one id per record")
		for i := range batch {
			batch[i].ID = ids[i]
			k.put(batch[i])
		}
		for i := 8; i < 11; i++ {
			k.addConv(e, s, i)
		}
	}
	s = e.reopened(s, "after Close")
	k.check(e, s, "after closing and reopening the store")

	if s.rs != nil {
		k.put(s.add(e, memory.Record{ID: "later", Text: sentence(7), Time: hour(7), Speaker: "assistant"}, "rule: Add to a reopened memory succeeds"))
		require.NoError(e.t, s.rs.Forget(e.ctx(), "keep"), "rule: Forget in a reopened memory succeeds")
		delete(k.records, "keep")
		k.gone = append(k.gone, "keep")
		k.addConv(e, s, 11)
		require.NoError(e.t, s.rs.Forget(e.ctx(), "c8"), "rule: Forget in a reopened memory succeeds")
		delete(k.records, "c8")
		k.gone = append(k.gone, "c8")
		k.conv = k.conv[1:]
	} else {
		require.NoError(e.t, s.m.Update(e.ctx(), sentence(7)), "rule: Update of a reopened memory succeeds")
		k.segments = append(k.segments, sentence(7))
	}
	s = e.reopened(s, "a second time")
	k.check(e, s, "after reopening the store a second time")
}

func (k *kept) put(r memory.Record) { k.records[r.ID] = r }

// reopened closes s and reopens its store.
func (e *env) reopened(s *subject, when string) *subject {
	e.t.Helper()
	if s.closer != nil {
		require.NoError(e.t, s.closer.Close(), "rule: Close succeeds")
	}
	m, err := s.reopen()
	require.NoError(e.t, err, "rule: a store opens again %s", when)
	require.NotNil(e.t, m, "memorytest: Subject.Reopen returned no memory")
	return newSubject(m, s.reopen)
}

func (k *kept) check(e *env, s *subject, when string) {
	e.t.Helper()
	for _, seg := range k.segments {
		hits, err := s.m.Search(e.ctx(), seg)
		require.NoError(e.t, err, "rule: Search succeeds %s", when)
		if assert.NotEmpty(e.t, hits, "rule: a segment stored by Update is found %s: %q", when, seg) {
			assert.Equal(e.t, seg, hits[0].Text, "rule: a segment stored by Update is found %s", when)
		}
	}
	if s.rs == nil {
		return
	}
	for id, want := range k.records {
		got, ok := s.rs.Get(id)
		if !assert.True(e.t, ok, "rule: a stored record is kept %s: Get(%q)", when, id) {
			continue
		}
		if d := diffRecord(want, got); d != "" {
			e.t.Errorf("rule: a record is kept as it was stored (the last one Added under its id) %s: Get(%q): %s", when, id, d)
		}
	}
	for _, id := range k.gone {
		_, ok := s.rs.Get(id)
		assert.False(e.t, ok, "rule: a forgotten record stays forgotten %s: Get(%q)", when, id)
		assert.ErrorIs(e.t, s.rs.Forget(e.ctx(), id), memory.ErrNotFound, "rule: a forgotten record stays forgotten %s: Forget(%q)", when, id)
	}
	s.checkCount(e, len(k.records)+len(k.segments), fmt.Sprintf("rule: the records kept %s are the ones stored", when))
	if s.q == nil {
		return
	}
	for id, want := range k.records {
		// In its namespace: keyword scores of namespaces with their own
		// statistics need not compare.
		got, _ := s.rs.Get(id)
		hits := s.query(e, memory.Query{Text: want.Text, Mode: memory.KeywordOnly, Namespace: got.Namespace}, "rule: Query succeeds "+when)
		if assert.NotEmpty(e.t, hits, "rule: a stored record is found by its text %s: %q", when, id) {
			assert.Equal(e.t, id, hits[0].ID, "rule: a stored record is found by its text %s", when)
		}
	}
	// A conversation keeps its order: each record's neighbours are the
	// records written before and after it.
	for j, i := range k.conv {
		hits := s.query(e, memory.Query{Text: topics[i], Mode: memory.KeywordOnly, Namespace: "conv", Neighbours: 1}, "rule: Query succeeds "+when)
		h := find(hits, fmt.Sprint("c", i))
		if !assert.NotNil(e.t, h, "rule: a stored record is found by a word only it contains %s: c%d", when, i) {
			continue
		}
		var before, after []string
		if j > 0 {
			before = []string{fmt.Sprint("c", k.conv[j-1])}
		}
		if j+1 < len(k.conv) {
			after = []string{fmt.Sprint("c", k.conv[j+1])}
		}
		assert.Equal(e.t, fmt.Sprint(before, after), fmt.Sprint(recordIDs(h.Before), recordIDs(h.After)),
			"rule: a record's neighbours (before, after) are kept %s: c%d", when, i)
	}
	// The replaced text is gone from the keyword index, the forgotten
	// records from every path.
	for _, mode := range modes {
		hits := s.query(e, memory.Query{Text: sentence(2), Mode: mode, K: 20, MinScore: everything}, "rule: Query succeeds "+when)
		for _, h := range hits {
			assert.NotEqual(e.t, sentence(2), h.Text, "rule: a replaced text is not found %s (%v)", when, mode)
			for _, id := range k.gone {
				assert.NotEqual(e.t, id, h.ID, "rule: a forgotten record is not found %s (%v)", when, mode)
			}
		}
	}
}
