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

var factRules = []rule{
	{"FactsDuplicates", factsDuplicates},
	{"FactsNearDuplicates", factsNearDuplicates},
	{"FactsSupersede", factsSupersede},
	{"FactsConflict", factsConflict},
	{"FactsValidity", factsValidity},
	{"FactsReopen", factsReopen},
}

// The facts of the rules: where Dana lives, before and after a move.
const (
	paris  = "Dana lives in Paris, near the kumquat market."
	berlin = "Dana moved: she lives in Berlin now, by the zeppelin hangar."
	where  = "where does Dana live"
)

// remember calls Remember, failing the rule if it fails.
func (s *subject) remember(e *env, rec memory.Record, msg string) memory.Outcome {
	e.t.Helper()
	outs, err := s.facts.Remember(e.ctx(), rec)
	require.NoError(e.t, err, "%s: Remember(%q)", msg, rec.Text)
	require.Len(e.t, outs, 1, "rule: Remember returns one outcome per record")
	require.NotEmpty(e.t, outs[0].ID, "rule: Remember returns an id")
	return outs[0]
}

// supersede calls Supersede, failing the rule if it fails.
func (s *subject) supersede(e *env, old string, rec memory.Record, msg string) memory.Outcome {
	e.t.Helper()
	out, err := s.facts.Supersede(e.ctx(), old, rec)
	require.NoError(e.t, err, "%s: Supersede(%q, %q)", msg, old, rec.Text)
	require.NotEmpty(e.t, out.ID, "rule: Supersede returns the new record's id")
	assert.Equal(e.t, old, out.Superseded, "rule: Supersede's outcome names the record it closed")
	return out
}

// factsDuplicates: a record without an id whose normalised text a current
// record of its namespace holds is not stored again; records with ids,
// other namespaces and other texts are.
func factsDuplicates(e *env) {
	s := e.fresh(needFacts)
	first := s.remember(e, memory.Record{Text: paris, Namespace: "dana", Time: hour(1)}, "rule: Remember succeeds")
	assert.False(e.t, first.Duplicate, "rule: the first write of a text is no duplicate")
	again := s.remember(e, memory.Record{Text: "  dana LIVES in paris, near the kumquat market ", Namespace: "dana", Time: hour(2)},
		"rule: Remember of the same text succeeds")
	assert.True(e.t, again.Duplicate, "rule: a text written again (case, spaces and end punctuation aside) is a duplicate")
	assert.Equal(e.t, first.ID, again.ID, "rule: a duplicate's outcome is the stored record's id")
	id, err := s.rs.Add(e.ctx(), memory.Record{Text: paris, Namespace: "dana"})
	require.NoError(e.t, err, "rule: Add of the same text succeeds")
	assert.Equal(e.t, first.ID, id, "rule: Add of a stored text without an id returns the stored record's id")
	got, ok := s.rs.Get(first.ID)
	if assert.True(e.t, ok, "rule: the record is kept") {
		assert.Equal(e.t, 2, got.Seen, "rule: a record counts the times its text was written again")
		assert.False(e.t, got.LastSeen.IsZero(), "rule: a record seen again says when")
		assert.Equal(e.t, paris, got.Text, "rule: a duplicate leaves the stored text as it was")
	}
	other := s.remember(e, memory.Record{Text: paris, Namespace: "elsewhere"}, "rule: Remember succeeds")
	assert.False(e.t, other.Duplicate, "rule: the same text in another namespace is no duplicate")
	ev1 := s.add(e, memory.Record{ID: "turn-1", Text: "Thanks!", Namespace: "dana", Time: hour(3)}, "rule: Add succeeds")
	ev2 := s.add(e, memory.Record{ID: "turn-2", Text: "Thanks!", Namespace: "dana", Time: hour(4)}, "rule: Add succeeds")
	assert.NotEqual(e.t, ev1.ID, ev2.ID, "rule: records with ids are events, kept however often their text repeats")
	s.checkCount(e, 4, "rule: duplicates are stored once, events each time")
	// Concurrent writers of one text store it once.
	var wg sync.WaitGroup
	ids := make([]string, 8)
	for i := range ids {
		wg.Go(func() {
			if outs, err := s.facts.Remember(e.ctx(), memory.Record{Text: "Dana's cat is called Miso.", Namespace: "dana"}); err == nil {
				ids[i] = outs[0].ID
			}
		})
	}
	wg.Wait()
	assert.NotEmpty(e.t, ids[0], "rule: concurrent Remember succeeds")
	for _, id := range ids {
		assert.Equal(e.t, ids[0], id, "rule: concurrent writers of one text store it once: %q", ids)
	}
	s.checkCount(e, 5, "rule: concurrent writers of one text store it once")
	// A superseded text is no longer current: said again, it is new.
	s.supersede(e, first.ID, memory.Record{Text: berlin, Time: hour(5)}, "rule: Supersede succeeds")
	back := s.remember(e, memory.Record{Text: paris, Namespace: "dana", Time: hour(6)}, "rule: Remember succeeds")
	assert.False(e.t, back.Duplicate, "rule: a text whose record was superseded is stored again (a fact that became true again)")
	assert.NotEqual(e.t, first.ID, back.ID, "rule: a text stored again has a new id")
}

// factsSupersede: the new version holds from its ValidFrom, the old one
// until then; a search reads what holds at its moment, history on
// request; History returns the chain oldest first.
func factsSupersede(e *env) {
	s := e.fresh(needFacts | needQuerier)
	old := s.add(e, memory.Record{ID: "paris", Text: paris, Namespace: "dana", Time: hour(1), Speaker: "Dana"}, "rule: Add succeeds")
	out := s.supersede(e, old.ID, memory.Record{Text: berlin, Time: hour(10), Speaker: "Dana"}, "rule: Supersede succeeds")
	assert.False(e.t, out.Duplicate, "rule: a new version is no duplicate")
	cur, ok := s.rs.Get(out.ID)
	require.True(e.t, ok, "rule: the new version is stored: Get(%q)", out.ID)
	assert.Equal(e.t, "dana", cur.Namespace, "rule: a new version without a namespace is in the old one's")
	assert.Equal(e.t, old.ID, cur.Supersedes, "rule: the new version names the one it supersedes")
	assert.True(e.t, cur.ValidUntil.IsZero(), "rule: the new version holds")
	prev, ok := s.rs.Get(old.ID)
	require.True(e.t, ok, "rule: a superseded record is kept, as history")
	assert.Equal(e.t, out.ID, prev.SupersededBy, "rule: the old version names its successor")
	assert.True(e.t, prev.ValidUntil.Equal(hour(10)), "rule: the old version holds until the new one's ValidFrom (its Time): %v", prev.ValidUntil)

	for _, mode := range modes {
		now := s.query(e, memory.Query{Text: where, Mode: mode, MinScore: everything}, "rule: Query succeeds")
		assert.Nil(e.t, find(now, old.ID), "rule: a search now does not find a superseded record (%v)", mode)
		assert.NotNil(e.t, find(now, out.ID), "rule: a search now finds the current version (%v)", mode)
		then := s.query(e, memory.Query{Text: where, Mode: mode, MinScore: everything, AsOf: hour(5)}, "rule: Query succeeds")
		assert.NotNil(e.t, find(then, old.ID), "rule: a search as of a moment before the change finds the old version (%v)", mode)
		assert.Nil(e.t, find(then, out.ID), "rule: a search as of a moment before the change does not find the new version (%v)", mode)
		before := s.query(e, memory.Query{Text: where, Mode: mode, MinScore: everything, AsOf: hour(0)}, "rule: Query succeeds")
		assert.Empty(e.t, before, "rule: a search as of a moment before anything held finds nothing (%v)", mode)
		all := s.query(e, memory.Query{Text: where, Mode: mode, MinScore: everything, History: true}, "rule: Query succeeds")
		if h := find(all, old.ID); assert.NotNil(e.t, h, "rule: a search of history finds the superseded version (%v)", mode) {
			assert.Equal(e.t, out.ID, h.SupersededBy, "rule: a superseded hit is marked: SupersededBy")
			assert.False(e.t, h.ValidUntil.IsZero(), "rule: a superseded hit is marked: ValidUntil")
		}
		if h := find(all, out.ID); assert.NotNil(e.t, h, "rule: a search of history finds the current version (%v)", mode) {
			assert.Empty(e.t, h.SupersededBy, "rule: the current version's hit is not marked")
			assert.Equal(e.t, old.ID, h.Supersedes, "rule: a hit names the version it supersedes")
		}
	}
	third := s.supersede(e, out.ID, memory.Record{ID: "lisbon", Text: "Dana lives in Lisbon since the spring.", ValidFrom: hour(20), Time: hour(21)},
		"rule: Supersede of the current version succeeds")
	for _, id := range []string{old.ID, out.ID, third.ID} {
		h, err := s.facts.History(e.ctx(), id)
		require.NoError(e.t, err, "rule: History succeeds")
		assert.Equal(e.t, []string{old.ID, out.ID, third.ID}, recordIDs(h), "rule: History(%q) is the whole chain, oldest first", id)
	}
	mid, _ := s.rs.Get(out.ID)
	assert.True(e.t, mid.ValidUntil.Equal(hour(20)), "rule: a version holds until its successor's ValidFrom, not its Time: %v", mid.ValidUntil)
	_, err := s.facts.History(e.ctx(), "nothing")
	assert.ErrorIs(e.t, err, memory.ErrNotFound, "rule: History of a missing id wraps ErrNotFound")
}

// factsConflict: Supersede is a compare and set: of a record superseded or
// forgotten meanwhile it fails with a named error and changes nothing;
// of concurrent ones, one wins.
func factsConflict(e *env) {
	s := e.fresh(needFacts)
	old := s.add(e, memory.Record{ID: "paris", Text: paris, Namespace: "dana", Time: hour(1)}, "rule: Add succeeds")
	s.supersede(e, old.ID, memory.Record{Text: berlin, Time: hour(2)}, "rule: Supersede succeeds")
	n := s.count(e)
	_, err := s.facts.Supersede(e.ctx(), old.ID, memory.Record{Text: "Dana lives in Rome.", Time: hour(3)})
	assert.ErrorIs(e.t, err, memory.ErrSuperseded, "rule: superseding a record superseded already wraps ErrSuperseded")
	_, err = s.facts.Supersede(e.ctx(), "nothing", memory.Record{Text: "Dana lives in Rome.", Time: hour(3)})
	assert.ErrorIs(e.t, err, memory.ErrNotFound, "rule: superseding a missing record wraps ErrNotFound")
	gone := s.add(e, memory.Record{ID: "gone", Text: sentence(3), Namespace: "dana"}, "rule: Add succeeds")
	require.NoError(e.t, s.rs.Forget(e.ctx(), gone.ID), "rule: Forget succeeds")
	_, err = s.facts.Supersede(e.ctx(), gone.ID, memory.Record{Text: sentence(4)})
	assert.ErrorIs(e.t, err, memory.ErrNotFound, "rule: superseding a forgotten record wraps ErrNotFound")
	_, err = s.facts.Supersede(e.ctx(), old.ID+"x", memory.Record{Text: sentence(5), Namespace: "other"})
	assert.Error(e.t, err, "rule: Supersede of a missing record fails")
	if n >= 0 {
		s.checkCount(e, n, "rule: a Supersede that fails stores nothing")
	}
	_, err = s.rs.Add(e.ctx(), memory.Record{ID: "x", Text: sentence(6), SupersededBy: old.ID})
	assert.ErrorIs(e.t, err, memory.ErrInvalidArgument, "rule: a write that sets SupersededBy (the store's) wraps ErrInvalidArgument")

	// Concurrent supersedes of one record: exactly one wins.
	cur := s.add(e, memory.Record{ID: "race", Text: "Dana's favourite colour is green.", Namespace: "dana", Time: hour(1)}, "rule: Add succeeds")
	const writers = 6
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Go(func() {
			_, errs[i] = s.facts.Supersede(e.ctx(), cur.ID, memory.Record{Text: fmt.Sprintf("Dana's favourite colour is %s.", topics[i]), Time: hour(2 + i)})
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		} else {
			assert.ErrorIs(e.t, err, memory.ErrSuperseded, "rule: a concurrent Supersede that lost wraps ErrSuperseded")
		}
	}
	assert.Equal(e.t, 1, won, "rule: of concurrent supersedes of one record exactly one succeeds: %v", errs)
	h, err := s.facts.History(e.ctx(), cur.ID)
	require.NoError(e.t, err, "rule: History succeeds")
	assert.Len(e.t, h, 2, "rule: a chain has one current version: %q", recordIDs(h))
}

// factsValidity: a record's ValidFrom and ValidUntil say when a search
// finds it.
func factsValidity(e *env) {
	s := e.fresh(needFacts | needQuerier)
	trip := s.add(e, memory.Record{ID: "trip", Text: "Dana is travelling in Japan with a walrus plush.", Namespace: "dana",
		Time: hour(1), ValidFrom: hour(2), ValidUntil: hour(30)}, "rule: Add with a validity succeeds")
	got, ok := s.rs.Get(trip.ID)
	if assert.True(e.t, ok, "rule: Get finds the record") {
		assert.True(e.t, got.ValidFrom.Equal(hour(2)) && got.ValidUntil.Equal(hour(30)), "rule: a record keeps its validity: %v..%v", got.ValidFrom, got.ValidUntil)
	}
	q := memory.Query{Text: "where is Dana travelling", MinScore: everything}
	for _, c := range []struct {
		at   time.Time
		want bool
	}{{hour(1), false}, {hour(2), true}, {hour(29), true}, {hour(30), false}, {time.Time{}, false}} {
		q.AsOf = c.at
		hits := s.query(e, q, "rule: Query succeeds")
		assert.Equal(e.t, c.want, find(hits, trip.ID) != nil, "rule: a record is found as of %v iff ValidFrom ≤ AsOf < ValidUntil (zero AsOf: now)", c.at)
	}
	q.AsOf, q.History = time.Time{}, true
	assert.NotNil(e.t, find(s.query(e, q, "rule: Query succeeds"), trip.ID), "rule: a search of history finds a record that no longer holds")
	for _, bad := range []memory.Record{
		{Text: sentence(1), ValidFrom: hour(5), ValidUntil: hour(5)},
		{Text: sentence(2), Time: hour(5), ValidUntil: hour(4)},
		{Text: sentence(3), Seen: 3},
	} {
		_, err := s.rs.Add(e.ctx(), bad)
		assert.ErrorIs(e.t, err, memory.ErrInvalidArgument, "rule: a record that ends before it starts, or sets the store's counts, wraps ErrInvalidArgument: %+v", bad)
	}
}

// factsReopen: validity, versions and counts survive closing and
// reopening the store.
func factsReopen(e *env) {
	s := e.fresh(needFacts)
	if s.reopen == nil {
		e.t.Skipf("memorytest: Open returned no Subject.Reopen, so %T is not persistent: rule not applicable", s.m)
	}
	old := s.remember(e, memory.Record{Text: paris, Namespace: "dana", Time: hour(1)}, "rule: Remember succeeds")
	s.remember(e, memory.Record{Text: paris, Namespace: "dana", Time: hour(2)}, "rule: Remember succeeds")
	cur := s.supersede(e, old.ID, memory.Record{Text: berlin, Time: hour(3), ValidFrom: hour(3), ValidUntil: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)}, "rule: Supersede succeeds")
	want, _ := s.facts.History(e.ctx(), cur.ID)
	for i := range 2 {
		s = e.reopened(s, fmt.Sprintf("(%d)", i+1))
		got, err := s.facts.History(e.ctx(), old.ID)
		require.NoError(e.t, err, "rule: History succeeds after reopening")
		if assert.Equal(e.t, recordIDs(want), recordIDs(got), "rule: a chain survives reopening") {
			for j := range got {
				w, g := want[j], got[j]
				assert.True(e.t, w.ValidFrom.Equal(g.ValidFrom) && w.ValidUntil.Equal(g.ValidUntil) &&
					w.Supersedes == g.Supersedes && w.SupersededBy == g.SupersededBy && w.Seen == g.Seen,
					"rule: a record's validity, versions and count survive reopening:\n%+v\n%+v", w, g)
			}
		}
		_, err = s.facts.Supersede(e.ctx(), old.ID, memory.Record{Text: "Dana lives in Rome."})
		assert.True(e.t, errors.Is(err, memory.ErrSuperseded), "rule: a superseded record stays superseded after reopening: %v", err)
		again := s.remember(e, memory.Record{Text: berlin, Namespace: "dana"}, "rule: Remember succeeds")
		assert.True(e.t, again.Duplicate && again.ID == cur.ID, "rule: a reopened store knows its texts: %+v", again)
		want, _ = s.facts.History(e.ctx(), cur.ID)
		if !slices.ContainsFunc(want, func(r memory.Record) bool { return r.ID == cur.ID && r.Seen == i+1 }) {
			e.t.Errorf("rule: Seen counts across reopening: %+v", want)
		}
	}
}

// factsNearDuplicates: a record written without an id whose words a
// current record of its namespace, said by the same speaker, repeats in
// another order is reported as its near-duplicate (and stored, by the
// default policy); another speaker's is not.
func factsNearDuplicates(e *env) {
	s := e.fresh(needFacts)
	first := s.remember(e, memory.Record{Text: "Dana now lives in Paris near the kumquat market.", Namespace: "dana", Speaker: "Dana"}, "rule: Remember succeeds")
	near := s.remember(e, memory.Record{Text: "Near the kumquat market Dana lives in Paris now.", Namespace: "dana", Speaker: "Dana"}, "rule: Remember succeeds")
	if assert.False(e.t, near.Duplicate, "rule: a near-duplicate is stored by default") {
		if assert.NotEmpty(e.t, near.Similar, "rule: a near-duplicate is reported (Outcome.Similar)") {
			assert.Equal(e.t, first.ID, near.Similar[0].ID, "rule: Outcome.Similar names the stored record")
			assert.Greater(e.t, near.Similar[0].Score, float32(0.5), "rule: Outcome.Similar says how similar")
		}
	}
	other := s.remember(e, memory.Record{Text: "Dana now lives in Paris, near the market of kumquats.", Namespace: "dana", Speaker: "Bob"}, "rule: Remember succeeds")
	assert.Empty(e.t, other.Similar, "rule: a near-duplicate is one of the same speaker")
	events := s.remember(e, memory.Record{ID: "turn", Text: "Near the kumquat market Dana now lives in Paris.", Namespace: "dana", Speaker: "Dana"}, "rule: Remember succeeds")
	assert.Empty(e.t, events.Similar, "rule: a record with an id (an event) is not checked for near-duplicates")
}
