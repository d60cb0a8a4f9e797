package memorytest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory"
)

// recordRules are the rules of memory.Records.
var recordRules = []rule{
	{"AddGet", addGet},
	{"GeneratedIDs", generatedIDs},
	{"AddSameIDReplaces", addSameIDReplaces},
	{"AddBatch", addBatch},
	{"AddBatchAtomic", addBatchAtomic},
	{"Forget", forget},
	{"AddEmptyText", addEmptyText},
	{"InvalidUTF8", invalidUTF8},
	{"ReturnsCopies", returnsCopies},
	{"ConcurrentSameID", concurrentSameID},
}

func addGet(e *env) {
	s := e.fresh(needRecords)
	recs := []memory.Record{
		{ID: "r1", Text: sentence(0), Time: hour(1), Namespace: "alpha", Speaker: "user", Tags: []string{"travel", "plan"}},
		{ID: "r2", Text: sentence(1), Time: hour(2), Speaker: "assistant"},
		{ID: "r 3/ü", Text: sentence(2) + "\nA second line, ünïcödé ✓.", Time: hour(3), Tags: []string{"two words", "ü", "", "ü", " a "}},
		{ID: " ", Text: sentence(4), Time: hour(4)},
	}
	for _, r := range recs {
		s.add(e, r, "rule: Add succeeds")
	}
	before := time.Now()
	now := s.add(e, memory.Record{ID: "now", Text: sentence(3)}, "rule: Add succeeds")
	after := time.Now()
	for _, want := range recs {
		got, ok := s.rs.Get(want.ID)
		if !assert.True(e.t, ok, "rule: Get finds a record stored by Add: %q", want.ID) {
			continue
		}
		if d := diffRecord(want, got); d != "" {
			e.t.Errorf("rule: Get returns the record as Add stored it: Get(%q): %s", want.ID, d)
		}
	}
	if got, ok := s.rs.Get(now.ID); assert.True(e.t, ok, "rule: Get finds a record stored by Add") {
		if got.Time.Before(before.Add(-time.Second)) || got.Time.After(after.Add(time.Second)) {
			e.t.Errorf("rule: a zero Time means the time of Add: got %v, Add ran from %v to %v", got.Time, before, after)
		}
		r2, _ := s.rs.Get("r2")
		assert.Equal(e.t, r2.Namespace, got.Namespace, "rule: every record without a Namespace is in the one default namespace")
	}
	_, ok := s.rs.Get("missing")
	assert.False(e.t, ok, "rule: Get of an id never stored finds nothing")
	s.checkCount(e, len(recs)+1, "rule: each Add of a new id stores one record")
	fine := hour(5).Add(123456789 * time.Nanosecond).In(zone)
	s.add(e, memory.Record{ID: "fine", Text: sentence(5), Time: fine}, "rule: Add succeeds")
	if got, _ := s.rs.Get("fine"); got.Time.Sub(fine).Abs() >= time.Microsecond {
		e.t.Errorf("rule: a record's Time is kept to the microsecond at least: got %v, want %v", got.Time, fine)
	}
	if _, err := s.rs.Add(e.ctx(), memory.Record{ID: "nul", Text: "a NUL \x00 byte"}); err != nil {
		assert.ErrorIs(e.t, err, memory.ErrInvalidArgument, "rule: a text with a NUL byte is stored as given or refused with ErrInvalidArgument")
	} else {
		got, _ := s.rs.Get("nul")
		assert.Equal(e.t, "a NUL \x00 byte", got.Text, "rule: a text with a NUL byte is stored as given or refused with ErrInvalidArgument")
	}
	for _, want := range recs {
		hits, err := s.m.Search(e.ctx(), want.Text)
		require.NoError(e.t, err, "rule: Search succeeds")
		if assert.NotEmpty(e.t, hits, "rule: Search finds a record stored by Add, in any namespace: %q", want.ID) {
			if d := diffHit(want, hits[0]); d != "" {
				e.t.Errorf("rule: Search finds a record stored by Add first by its own text, as stored: %s", d)
			}
		}
	}
}

func generatedIDs(e *env) {
	s := e.fresh(needRecords)
	a := s.add(e, memory.Record{Text: sentence(0)}, "rule: Add of a record without an id succeeds")
	b := s.add(e, memory.Record{Text: sentence(0)}, "rule: Add of a record without an id succeeds")
	c := s.add(e, memory.Record{Text: sentence(7)}, "rule: Add of a record without an id succeeds")
	ids, err := s.rs.AddBatch(e.ctx(), []memory.Record{{Text: sentence(1)}, {Text: sentence(2)}, {Text: sentence(2)}})
	require.NoError(e.t, err, "rule: AddBatch of records without ids succeeds")
	require.Len(e.t, ids, 3, "rule: AddBatch returns one id per record")
	all := append([]string{a.ID, b.ID, c.ID}, ids...)
	if s.facts != nil {
		// A Facts memory stores a fact once: the same text again is the
		// same record.
		assert.Equal(e.t, a.ID, b.ID, "rule: a Facts memory stores a record without an id once: Add of the same text returns the first one's id")
		assert.Equal(e.t, ids[1], ids[2], "rule: a Facts memory stores a record without an id once, within a batch too")
		all = []string{a.ID, c.ID, ids[0], ids[1]}
	}
	seen := map[string]bool{}
	for _, id := range all {
		assert.NotEmpty(e.t, id, "rule: a record without an id is given one")
		assert.False(e.t, seen[id], "rule: every generated id is new: %q twice in %q", id, all)
		seen[id] = true
		_, ok := s.rs.Get(id)
		assert.True(e.t, ok, "rule: Get finds a record by its generated id %q", id)
	}
	if s.facts != nil {
		s.checkCount(e, 4, "rule: a Facts memory stores each text without an id once")
		return
	}
	s.checkCount(e, 6, "rule: every record without an id is stored as a record of its own, even with the same text")
}

func addSameIDReplaces(e *env) {
	s := e.fresh(needRecords)
	s.add(e, memory.Record{ID: "x", Text: sentence(0), Time: hour(1), Speaker: "user", Tags: []string{"old"}}, "rule: Add succeeds")
	s.add(e, memory.Record{ID: "y", Text: sentence(2), Time: hour(2)}, "rule: Add succeeds")
	want := s.add(e, memory.Record{ID: "x", Text: sentence(1), Time: hour(3), Speaker: "assistant"}, "rule: Add with a stored id succeeds")
	got, ok := s.rs.Get("x")
	if assert.True(e.t, ok, "rule: Add with a stored id keeps a record under it") {
		if d := diffRecord(want, got); d != "" {
			e.t.Errorf("rule: Add with a stored id replaces the record: Get returns the new one: %s", d)
		}
	}
	s.checkCount(e, 2, "rule: Add with a stored id replaces the record: one record under the id, not two")
	hits, err := s.m.Search(e.ctx(), sentence(1))
	require.NoError(e.t, err)
	if assert.NotEmpty(e.t, hits, "rule: the new text of a replaced record is found") {
		assert.Equal(e.t, "x", hits[0].ID, "rule: the new text of a replaced record is found under its id")
	}
	hits, err = s.m.Search(e.ctx(), sentence(0))
	require.NoError(e.t, err)
	for _, h := range hits {
		assert.NotEqual(e.t, sentence(0), h.Text, "rule: the old text of a replaced record is not found")
	}
	if s.q != nil {
		hits := s.query(e, memory.Query{Text: topics[0], Mode: memory.KeywordOnly}, "rule: Query succeeds")
		assert.Empty(e.t, hitIDs(hits), "rule: the old text of a replaced record is not found: its words are gone from the keyword path")
	}
	// The same record again is still one record.
	s.add(e, want, "rule: Add of the same record again succeeds")
	s.checkCount(e, 2, "rule: Add of the same record twice stores it once")

	// A replacement's Time moves the record in List and in time ranges.
	s.add(e, memory.Record{ID: "x", Text: sentence(1), Time: hour(0)}, "rule: Add with a stored id succeeds")
	if s.l != nil {
		recs, _ := s.list(e, memory.ListOptions{}, "rule: List succeeds")
		assert.Equal(e.t, []string{"x", "y"}, recordIDs(recs), "rule: Add with a stored id replaces the record's Time: List orders it by the new one")
		recs, _ = s.list(e, memory.ListOptions{From: hour(1)}, "rule: List succeeds")
		assert.Equal(e.t, []string{"y"}, recordIDs(recs), "rule: Add with a stored id replaces the record's Time: List's From sees the new one")
	}
	if s.q != nil {
		for _, mode := range modes {
			hits := s.query(e, memory.Query{Text: sentence(1), Mode: mode, MinScore: everything, From: hour(1)}, "rule: Query succeeds")
			assert.Nil(e.t, find(hits, "x"), "rule: Add with a stored id replaces the record's Time: a Query's From sees the new one (%v)", mode)
			hits = s.query(e, memory.Query{Text: sentence(1), Mode: mode, MinScore: everything, To: hour(1)}, "rule: Query succeeds")
			assert.NotNil(e.t, find(hits, "x"), "rule: Add with a stored id replaces the record's Time: a Query's To sees the new one (%v)", mode)
		}
	}
}

func addBatch(e *env) {
	s := e.fresh(needRecords)
	batch := []memory.Record{
		{ID: "b1", Text: sentence(0), Time: hour(1), Namespace: "alpha"},
		{ID: "b2", Text: sentence(1), Time: hour(2), Speaker: "user", Tags: []string{"t"}},
		{Text: sentence(2), Time: hour(3)},
	}
	ids, err := s.rs.AddBatch(e.ctx(), batch)
	require.NoError(e.t, err, "rule: AddBatch succeeds")
	require.Len(e.t, ids, len(batch), "rule: AddBatch returns one id per record, in order")
	assert.Equal(e.t, []string{"b1", "b2"}, ids[:2], "rule: AddBatch returns the ids of records that name one, in order")
	batch[2].ID = ids[2]
	for _, want := range batch {
		got, ok := s.rs.Get(want.ID)
		if !assert.True(e.t, ok, "rule: Get finds a record stored by AddBatch: %q", want.ID) {
			continue
		}
		if d := diffRecord(want, got); d != "" {
			e.t.Errorf("rule: Get returns the record as AddBatch stored it: %s", d)
		}
	}
	ids, err = s.rs.AddBatch(e.ctx(), []memory.Record{{ID: "d", Text: sentence(3)}, {ID: "d", Text: sentence(4)}})
	require.NoError(e.t, err, "rule: AddBatch that repeats an id succeeds")
	assert.Equal(e.t, []string{"d", "d"}, ids, "rule: AddBatch returns one id per record, in order")
	if got, ok := s.rs.Get("d"); assert.True(e.t, ok, "rule: AddBatch stores a repeated id") {
		assert.Equal(e.t, sentence(4), got.Text, "rule: AddBatch stores in order: of records repeating an id, the last one wins")
	}
	s.checkCount(e, 4, "rule: AddBatch that repeats an id stores one record under it")
	for _, empty := range [][]memory.Record{nil, {}} {
		ids, err = s.rs.AddBatch(e.ctx(), empty)
		if err != nil {
			assert.ErrorIs(e.t, err, memory.ErrEmptyText, "rule: an empty AddBatch stores nothing, and fails only with ErrEmptyText")
		}
		assert.Empty(e.t, ids, "rule: an empty AddBatch returns no ids")
	}
	s.checkCount(e, 4, "rule: an empty AddBatch stores nothing")
}

// addBatchAtomic: a batch with one bad record stores nothing, and
// replaces nothing.
func addBatchAtomic(e *env) {
	s := e.fresh(needRecords)
	s.add(e, memory.Record{ID: "x", Text: sentence(0)}, "rule: Add succeeds")
	bads := map[string]memory.Record{
		"empty text":                {Text: ""},
		"white-space text":          {Text: "   "},
		"text not valid UTF-8":      {Text: "bad \xff UTF-8"},
		"id not valid UTF-8":        {ID: "bad\xff", Text: sentence(3)},
		"namespace not valid UTF-8": {Text: sentence(3), Namespace: "\xff"},
	}
	for what, bad := range bads {
		for _, at := range []int{0, 2} {
			batch := []memory.Record{{ID: "x", Text: sentence(1)}, {ID: "new", Text: sentence(2)}}
			batch = slices.Insert(batch, at, bad)
			ids, err := s.rs.AddBatch(e.ctx(), batch)
			if !errors.Is(err, memory.ErrEmptyText) && !errors.Is(err, memory.ErrInvalidArgument) {
				e.t.Errorf("rule: AddBatch with a bad record (%s at %d) fails with ErrEmptyText or ErrInvalidArgument: got ids %q, error %v", what, at, ids, err)
			}
			got, _ := s.rs.Get("x")
			assert.Equal(e.t, sentence(0), got.Text, "rule: a failed AddBatch replaces nothing (%s at %d)", what, at)
			_, ok := s.rs.Get("new")
			assert.False(e.t, ok, "rule: a failed AddBatch stores nothing (%s at %d)", what, at)
		}
	}
	s.checkCount(e, 1, "rule: a failed AddBatch stores nothing")
}

func forget(e *env) {
	s := e.fresh(needRecords)
	for i := range 3 {
		s.add(e, memory.Record{ID: fmt.Sprint("f", i), Text: harbor(i), Time: hour(i)}, "rule: Add succeeds")
	}
	require.NoError(e.t, s.rs.Forget(e.ctx(), "f1"), "rule: Forget of a stored id succeeds")
	_, ok := s.rs.Get("f1")
	assert.False(e.t, ok, "rule: Get does not find a forgotten record")
	for _, id := range []string{"f0", "f2"} {
		_, ok := s.rs.Get(id)
		assert.True(e.t, ok, "rule: Forget leaves the other records: %q", id)
	}
	s.checkCount(e, 2, "rule: Forget removes the record")
	hits, err := s.m.Search(e.ctx(), harbor(1))
	require.NoError(e.t, err)
	assert.Nil(e.t, find(hits, "f1"), "rule: Search does not find a forgotten record")
	if s.q != nil {
		for _, mode := range modes {
			hits := s.query(e, memory.Query{Text: shared, Mode: mode, K: 10, MinScore: everything}, "rule: Query succeeds")
			assert.Nil(e.t, find(hits, "f1"), "rule: Query does not find a forgotten record (%v)", mode)
			assert.ElementsMatch(e.t, []string{"f0", "f2"}, hitIDs(hits), "rule: Forget leaves the other records findable (%v)", mode)
		}
	}
	if s.l != nil {
		recs, _ := s.list(e, memory.ListOptions{}, "rule: List succeeds")
		assert.Equal(e.t, []string{"f0", "f2"}, recordIDs(recs), "rule: List does not list a forgotten record")
	}
	assert.ErrorIs(e.t, s.rs.Forget(e.ctx(), "f1"), memory.ErrNotFound, "rule: Forget of a forgotten id fails with ErrNotFound")
	assert.ErrorIs(e.t, s.rs.Forget(e.ctx(), "never"), memory.ErrNotFound, "rule: Forget of an id never stored fails with ErrNotFound")
	assert.ErrorIs(e.t, s.rs.Forget(e.ctx(), ""), memory.ErrNotFound, "rule: Forget of the empty id fails with ErrNotFound")
	s.add(e, memory.Record{ID: "f1", Text: harbor(5), Time: hour(5)}, "rule: a forgotten id can be added again")
	if got, ok := s.rs.Get("f1"); assert.True(e.t, ok, "rule: a forgotten id can be added again") {
		assert.Equal(e.t, harbor(5), got.Text, "rule: a forgotten id can be added again")
	}
	s.checkCount(e, 3, "rule: a forgotten id can be added again")
}

func addEmptyText(e *env) {
	s := e.fresh(needRecords)
	for _, text := range []string{"", " ", "\t\n  "} {
		_, err := s.rs.Add(e.ctx(), memory.Record{ID: "e", Text: text})
		assert.ErrorIs(e.t, err, memory.ErrEmptyText, "rule: Add of an empty or white-space text %q fails with ErrEmptyText", text)
		_, err = s.rs.AddBatch(e.ctx(), []memory.Record{{ID: "e", Text: text}})
		assert.ErrorIs(e.t, err, memory.ErrEmptyText, "rule: AddBatch of an empty or white-space text %q fails with ErrEmptyText", text)
	}
	for _, text := range []string{"?!", "... --- ...", "🙂"} {
		_, err := s.rs.Add(e.ctx(), memory.Record{ID: "e", Text: text})
		if !errors.Is(err, memory.ErrEmptyText) && !errors.Is(err, memory.ErrInvalidArgument) {
			e.t.Errorf("rule: a record's text must contain a letter or a digit: Add(%q) fails with ErrEmptyText or ErrInvalidArgument, got %v", text, err)
		}
	}
	_, ok := s.rs.Get("e")
	assert.False(e.t, ok, "rule: a refused record is not stored")
	s.checkCount(e, 0, "rule: a refused record is not stored")
}

func invalidUTF8(e *env) {
	s := e.fresh(needRecords)
	good := memory.Record{ID: "u", Text: sentence(0), Namespace: "alpha", Speaker: "user", Tags: []string{"t"}}
	bads := map[string]func(*memory.Record){
		"Text":      func(r *memory.Record) { r.Text = "The note \xff about the kumquat" },
		"ID":        func(r *memory.Record) { r.ID = "u\xc3" },
		"Namespace": func(r *memory.Record) { r.Namespace = "al\xffpha" },
		"Speaker":   func(r *memory.Record) { r.Speaker = "\xfeuser" },
		"Tags":      func(r *memory.Record) { r.Tags = []string{"t", "t\xff"} },
	}
	for field, spoil := range bads {
		rec := good
		spoil(&rec)
		_, err := s.rs.Add(e.ctx(), rec)
		assert.ErrorIs(e.t, err, memory.ErrInvalidArgument, "rule: Add of a record whose %s is not valid UTF-8 fails with ErrInvalidArgument", field)
		_, ok := s.rs.Get(rec.ID)
		assert.False(e.t, ok, "rule: a record that is not valid UTF-8 is refused, not repaired and stored (%s)", field)
	}
	s.checkCount(e, 0, "rule: a record that is not valid UTF-8 is not stored")
	s.add(e, good, "rule: Add of a valid record succeeds")
}

func returnsCopies(e *env) {
	s := e.fresh(needRecords)
	tags := []string{"one", "two"}
	s.add(e, memory.Record{ID: "c", Text: sentence(0), Tags: tags}, "rule: Add succeeds")
	tags[0] = "changed"
	want := []string{"one", "two"}
	got, _ := s.rs.Get("c")
	assert.Equal(e.t, want, got.Tags, "rule: Add does not keep the caller's Tags slice")
	if len(got.Tags) > 0 {
		got.Tags[0] = "changed"
	}
	got, _ = s.rs.Get("c")
	assert.Equal(e.t, want, got.Tags, "rule: Get returns a copy: changing its Tags changes nothing stored")
	if s.q != nil {
		hits := s.query(e, memory.Query{Text: sentence(0)}, "rule: Query succeeds")
		for _, h := range hits {
			if len(h.Tags) > 0 {
				h.Tags[0] = "changed"
			}
		}
		got, _ = s.rs.Get("c")
		assert.Equal(e.t, want, got.Tags, "rule: Query returns copies: changing a hit's Tags changes nothing stored")
	}
	if s.l != nil {
		recs, _ := s.list(e, memory.ListOptions{}, "rule: List succeeds")
		for _, r := range recs {
			if len(r.Tags) > 0 {
				r.Tags[0] = "changed"
			}
		}
		got, _ = s.rs.Get("c")
		assert.Equal(e.t, want, got.Tags, "rule: List returns copies: changing a record's Tags changes nothing stored")
	}
}

// concurrentSameID: concurrent Adds of one id leave exactly one record.
func concurrentSameID(e *env) {
	s := e.fresh(needRecords)
	const writers, each = 4, 3
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := s.rs.Add(e.ctx(), memory.Record{ID: "same", Text: harbor(w*each + i)}); err != nil {
					e.t.Errorf("rule: concurrent Adds of one id succeed: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	got, ok := s.rs.Get("same")
	require.True(e.t, ok, "rule: concurrent Adds of one id leave a record under it")
	s.checkCount(e, 1, "rule: concurrent Adds of one id leave exactly one record")
	if s.q != nil {
		hits := s.query(e, memory.Query{Text: shared, Mode: memory.KeywordOnly, K: 20}, "rule: Query succeeds")
		if assert.Len(e.t, hitIDs(hits), 1, "rule: concurrent Adds of one id leave exactly one record to find") {
			assert.Equal(e.t, got.Text, hits[0].Text, "rule: the record Get returns is the one a search finds")
		}
	}
}
