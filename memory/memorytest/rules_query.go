package memorytest

import (
	"errors"
	"fmt"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory"
)

// queryRules are the rules of memory.Querier, and of namespaces.
var queryRules = []rule{
	{"QueryFindsText", queryFindsText},
	{"QueryModes", queryModes},
	{"QueryRelevance", queryRelevance},
	{"QueryTokenBudget", queryTokenBudget},
	{"QueryK", queryK},
	{"QueryMinScore", queryMinScore},
	{"QueryInvalid", queryInvalid},
	{"QueryTimeRange", queryTimeRange},
	{"QueryNeighbours", queryNeighbours},
	{"Namespaces", namespaces},
	{"QueryRecap", queryRecap},
	{"QueryNotes", queryNotes},
	{"QueryFunctionWords", queryFunctionWords},
	{"QuerySpeakerRoles", querySpeakerRoles},
	{"QuerySpeakerNames", querySpeakerNames},
	{"QueryNewerVersion", queryNewerVersion},
}

// zone is a time zone other than UTC, for bounds that name an instant
// with another wall clock.
var zone = time.FixedZone("UTC+9", 9*3600)

func queryFindsText(e *env) {
	s := e.fresh(needRecords | needQuerier)
	var recs []memory.Record
	for i := range 6 {
		r := memory.Record{ID: fmt.Sprint("q", i), Text: sentence(i), Time: hour(i)}
		if i%2 == 0 {
			r.Namespace, r.Speaker, r.Tags = "alpha", "user", []string{"even"}
		}
		recs = append(recs, s.add(e, r, "rule: Add succeeds"))
	}
	for i, want := range recs {
		for _, mode := range modes {
			hits := s.query(e, memory.Query{Text: want.Text, Mode: mode}, "rule: Query succeeds")
			if !assert.NotEmpty(e.t, hits, "rule: Query finds a record by its own text (%v): %q", mode, want.ID) {
				continue
			}
			if d := diffHit(want, hits[0]); d != "" {
				e.t.Errorf("rule: a record is the best match for its own text, and the hit is the record as stored (%v): %s", mode, d)
			}
		}
		hits := s.query(e, memory.Query{Text: topics[i], Mode: memory.KeywordOnly}, "rule: Query succeeds")
		if assert.NotEmpty(e.t, hits, "rule: a KeywordOnly Query finds a record by a word only it contains: %q", topics[i]) {
			assert.Equal(e.t, want.ID, hits[0].ID, "rule: a KeywordOnly Query finds a record by a word only it contains: %q", topics[i])
		}
	}
}

// queryModes: each mode runs the paths it names.
func queryModes(e *env) {
	s := e.fresh(needRecords | needQuerier)
	for i := range 6 {
		s.add(e, memory.Record{ID: fmt.Sprint("h", i), Text: harbor(i), Time: hour(i)}, "rule: Add succeeds")
	}
	hits := s.query(e, memory.Query{Text: absent, Mode: memory.KeywordOnly, MinScore: everything}, "rule: Query succeeds")
	assert.Empty(e.t, hitIDs(hits), "rule: KeywordOnly runs only the keyword path: a word that no record contains finds nothing, whatever MinScore says")
	for _, mode := range []memory.Mode{memory.VectorOnly, memory.Hybrid} {
		// "zeppelinns" is no record's word, but spelt nearly as one is: the
		// vector path alone finds it (a lexical embedder's character
		// n-grams, a model's meaning).
		hits := s.query(e, memory.Query{Text: "zeppelinns", Mode: mode, K: 3, MinScore: everything, MinRelevance: everything}, "rule: Query succeeds")
		assert.NotEmpty(e.t, hits, "rule: %v runs the vector path: a word spelt nearly as a record's is found by it", mode)
		for _, h := range hits {
			assert.Positive(e.t, h.VectorRank, "rule: %v runs the vector path: a hit for a word no record contains was found by it: %q", mode, h.ID)
		}
		hits = s.query(e, memory.Query{Text: absent, Mode: mode, K: 3, MinScore: everything, MinRelevance: everything}, "rule: Query succeeds")
		for _, h := range hits {
			assert.Positive(e.t, h.Score, "rule: %v returns no hit that matched nothing: %q for %q", mode, h.ID, absent)
		}
	}
	hits = s.query(e, memory.Query{Text: topics[2], Mode: memory.KeywordOnly}, "rule: Query succeeds")
	if assert.NotEmpty(e.t, hits, "rule: KeywordOnly finds a record by a word only it contains") {
		assert.Equal(e.t, "h2", hits[0].ID, "rule: KeywordOnly finds a record by a word only it contains")
	}
	for _, h := range hits {
		assert.Zero(e.t, h.VectorRank, "rule: a KeywordOnly hit has no VectorRank (the vector path did not run): %q", h.ID)
	}
	hits = s.query(e, memory.Query{Text: harbor(2), Mode: memory.VectorOnly, K: 6, MinScore: everything}, "rule: Query succeeds")
	if assert.NotEmpty(e.t, hits, "rule: VectorOnly finds a record by its own text") {
		assert.Equal(e.t, "h2", hits[0].ID, "rule: VectorOnly finds a record by its own text first")
	}
	for _, h := range hits {
		assert.Zero(e.t, h.KeywordRank, "rule: a VectorOnly hit has no KeywordRank (the keyword path did not run): %q", h.ID)
	}
	def := s.query(e, memory.Query{Text: harbor(4), K: 6, MinScore: everything}, "rule: Query succeeds")
	hyb := s.query(e, memory.Query{Text: harbor(4), Mode: memory.Hybrid, K: 6, MinScore: everything}, "rule: Query succeeds")
	assert.Equal(e.t, hitIDs(hyb), hitIDs(def), "rule: Query's zero Mode is Hybrid")
}

func queryK(e *env) {
	s := e.fresh(needRecords | needQuerier)
	const n = 8
	for i := range n {
		s.add(e, memory.Record{ID: fmt.Sprint("k", i), Text: harbor(i), Time: hour(i)}, "rule: Add succeeds")
	}
	for _, mode := range modes {
		q := memory.Query{Text: shared, Mode: mode, MinScore: everything}
		for _, k := range []int{1, 3, n, n + 1, 50} {
			q.K = k
			hits := s.query(e, q, "rule: Query succeeds")
			assert.Len(e.t, hitIDs(hits), min(k, n), "rule: Query returns K hits when at least K records match, else every match (%v, K=%d, %d match)", mode, k, n)
		}
		q.K = 0
		hits := s.query(e, q, "rule: Query succeeds")
		assert.NotEmpty(e.t, hits, "rule: K 0 means the memory's default, which is not 0 (%v)", mode)
		assert.LessOrEqual(e.t, len(hits), n, "rule: a Query finds only stored records (%v)", mode)
	}
}

func queryMinScore(e *env) {
	s := e.fresh(needRecords | needQuerier)
	for i := range 6 {
		s.add(e, memory.Record{ID: fmt.Sprint("m", i), Text: sentence(i), Time: hour(i)}, "rule: Add succeeds")
	}
	hits := s.query(e, memory.Query{Text: sentence(3), Mode: memory.VectorOnly, K: 6, MinScore: everything}, "rule: Query succeeds")
	require.Len(e.t, hitIDs(hits), 6, "rule: with MinScore -1 every record matches on the vector path")
	assert.Equal(e.t, "m3", hits[0].ID, "rule: VectorOnly finds a record by its own text first")
	assert.InDelta(e.t, 1, hits[0].Score, 1e-3, "rule: a VectorOnly hit's Score is its cosine similarity: 1 for the record's own text")
	for _, h := range hits {
		assert.True(e.t, h.Score >= -1-1e-3 && h.Score <= 1+1e-3, "rule: a VectorOnly hit's Score is its cosine similarity, in [-1, 1]: %q %v", h.ID, h.Score)
	}
	cut := (hits[1].Score + hits[0].Score) / 2
	if hits[1].Score < hits[0].Score {
		top := s.query(e, memory.Query{Text: sentence(3), Mode: memory.VectorOnly, K: 6, MinScore: cut}, "rule: Query succeeds")
		assert.Equal(e.t, []string{"m3"}, hitIDs(top), "rule: MinScore is the least cosine a VectorOnly hit has (MinScore %v, cosines %v and below)", cut, hits[1].Score)
	}
	// The keyword path has no threshold.
	for _, mode := range []memory.Mode{memory.KeywordOnly, memory.Hybrid} {
		hits := s.query(e, memory.Query{Text: "note", Mode: mode, K: 10, MinScore: 0.999}, "rule: Query succeeds")
		assert.Len(e.t, hitIDs(hits), 6, "rule: MinScore does not apply to the keyword path: every keyword match is found (%v)", mode)
	}
}

func queryInvalid(e *env) {
	s := e.fresh(needRecords | needQuerier)
	s.add(e, memory.Record{ID: "v", Text: harbor(0), Time: hour(1)}, "rule: Add succeeds")
	bad := map[string]memory.Query{
		"K -1":                         {K: -1},
		"K -100":                       {K: -100},
		"Mode 3":                       {Mode: 3},
		"Mode -1":                      {Mode: -1},
		"Neighbours -1":                {Neighbours: -1},
		"Neighbours MaxNeighbours + 1": {Neighbours: memory.MaxNeighbours + 1},
	}
	for what, q := range bad {
		q.Text = shared
		_, err := s.q.Query(e.ctx(), q)
		assert.ErrorIs(e.t, err, memory.ErrInvalidArgument, "rule: Query with %s fails with ErrInvalidArgument", what)
	}
	s.query(e, memory.Query{Text: shared, Neighbours: memory.MaxNeighbours}, "rule: Query with Neighbours MaxNeighbours is valid")
	for _, mode := range modes {
		q := memory.Query{Text: shared, Mode: mode, From: hour(2), To: hour(0), MinScore: everything}
		hits, err := s.q.Query(e.ctx(), q)
		if err != nil {
			assert.ErrorIs(e.t, err, memory.ErrInvalidArgument, "rule: a Query whose To is before its From finds nothing or fails with ErrInvalidArgument (%v)", mode)
		} else {
			assert.Empty(e.t, hitIDs(hits), "rule: a Query whose To is before its From finds nothing or fails with ErrInvalidArgument (%v)", mode)
		}
		hits = s.query(e, memory.Query{Text: shared, Mode: mode, From: hour(1), To: hour(1), MinScore: everything}, "rule: a Query whose From equals its To is valid")
		assert.Empty(e.t, hitIDs(hits), "rule: From ≤ Time < To: a Query whose From equals its To finds nothing (%v)", mode)
	}
}

func queryTimeRange(e *env) {
	s := e.fresh(needRecords | needQuerier)
	for i := range 4 {
		s.add(e, memory.Record{ID: fmt.Sprint("t", i), Text: harbor(i), Time: hour(i)}, "rule: Add succeeds")
	}
	cases := []struct {
		what     string
		from, to time.Time
		want     []string
	}{
		{"From t1, To t3", hour(1), hour(3), []string{"t1", "t2"}},
		{"From t1", hour(1), time.Time{}, []string{"t1", "t2", "t3"}},
		{"To t1", time.Time{}, hour(1), []string{"t0"}},
		{"From t1 + 1s", hour(1).Add(time.Second), time.Time{}, []string{"t2", "t3"}},
		{"To t3 - 1s", time.Time{}, hour(3).Add(-time.Second), []string{"t0", "t1", "t2"}},
		{"From t1, To t3, in UTC+9", hour(1).In(zone), hour(3).In(zone), []string{"t1", "t2"}},
		{"From t5", hour(5), time.Time{}, nil},
	}
	for _, c := range cases {
		for _, mode := range modes {
			hits := s.query(e, memory.Query{Text: shared, Mode: mode, K: 10, MinScore: everything, From: c.from, To: c.to}, "rule: Query with From and To succeeds")
			assert.ElementsMatch(e.t, c.want, hitIDs(hits), "rule: a Query finds exactly the matching records with From ≤ Time < To (%s, %v)", c.what, mode)
		}
	}
}

func queryNeighbours(e *env) {
	s := e.fresh(needRecords | needQuerier)
	minute := func(i int) time.Time { return base.Add(time.Duration(i) * time.Minute) }
	for i := range 5 {
		s.add(e, memory.Record{ID: fmt.Sprint("n", i), Text: sentence(i), Time: minute(i), Namespace: "conv"}, "rule: Add succeeds")
		if i == 2 {
			s.add(e, memory.Record{ID: "other", Text: sentence(8), Time: minute(2).Add(30 * time.Second), Namespace: "elsewhere"}, "rule: Add succeeds")
		}
	}
	s.add(e, memory.Record{ID: "n5", Text: sentence(5), Time: base.Add(48 * time.Hour), Namespace: "conv"}, "rule: Add succeeds")

	around := func(i, n int, ns string) (before, after []string) {
		e.t.Helper()
		id := fmt.Sprint("n", i)
		hits := s.query(e, memory.Query{Text: topics[i], Mode: memory.KeywordOnly, Namespace: ns, Neighbours: n}, "rule: Query with Neighbours succeeds")
		h := find(hits, id)
		require.NotNil(e.t, h, "rule: a KeywordOnly Query finds a record by a word only it contains: %q", id)
		for _, r := range h.Before {
			before = append(before, r.ID)
			assert.Equal(e.t, s.text(e, r.ID), r.Text, "rule: a neighbour is a whole record")
		}
		for _, r := range h.After {
			after = append(after, r.ID)
			assert.Equal(e.t, s.text(e, r.ID), r.Text, "rule: a neighbour is a whole record")
		}
		return before, after
	}
	for _, ns := range []string{"conv", ""} {
		b, a := around(2, 1, ns)
		assert.Equal(e.t, []string{"n1"}, b, "rule: Neighbours 1 gives the record written just before, in the hit's namespace (Query namespace %q)", ns)
		assert.Equal(e.t, []string{"n3"}, a, "rule: Neighbours 1 gives the record written just after, in the hit's namespace (Query namespace %q)", ns)
	}
	b, a := around(2, 2, "conv")
	assert.Equal(e.t, []string{"n0", "n1"}, b, "rule: Neighbours gives the records before a hit oldest first")
	assert.Equal(e.t, []string{"n3", "n4"}, a, "rule: Neighbours gives the records after a hit oldest first")
	b, a = around(2, 0, "conv")
	assert.Empty(e.t, append(b, a...), "rule: Neighbours 0 gives no neighbours")
	b, a = around(0, 3, "conv")
	assert.Empty(e.t, b, "rule: the first record of a conversation has nothing before it")
	assert.Equal(e.t, []string{"n1", "n2", "n3"}, a, "rule: Neighbours gives up to that many records after a hit")
	_, a = around(4, 2, "conv")
	assert.Empty(e.t, a, "rule: a gap of more than a few hours (here two days) ends a conversation: nothing after its last record")
	require.NoError(e.t, s.rs.Forget(e.ctx(), "n1"), "rule: Forget succeeds")
	b, _ = around(2, 1, "conv")
	assert.Equal(e.t, []string{"n0"}, b, "rule: a forgotten record leaves the records around it next to each other")

	// Neighbours are the records written before and after, in the order
	// they were written, whatever their Times say.
	for _, i := range []int{6, 8, 7} {
		s.add(e, memory.Record{ID: fmt.Sprint("n", i), Text: sentence(i), Time: base.Add(100*time.Hour + time.Duration(i)*time.Minute), Namespace: "conv"}, "rule: Add succeeds")
	}
	b, a = around(8, 2, "conv")
	assert.Equal(e.t, []string{"n6"}, b, "rule: Neighbours are the records written just before a hit, in the order written (not by Time)")
	assert.Equal(e.t, []string{"n7"}, a, "rule: Neighbours are the records written just after a hit, in the order written (not by Time)")
	_, a = around(6, 2, "conv")
	assert.Equal(e.t, []string{"n8", "n7"}, a, "rule: Neighbours are the records written just after a hit, in the order written (not by Time)")
}

// text returns the stored text of id.
func (s *subject) text(e *env, id string) string {
	r, _ := s.rs.Get(id)
	return r.Text
}

func namespaces(e *env) {
	if e.cfg.noNamespaces {
		e.t.Skipf("memorytest: Run was given NoNamespaces: rule not applicable")
	}
	s := e.fresh(needRecords | needQuerier)
	recs := []memory.Record{
		{ID: "a1", Text: harbor(0), Time: hour(0), Namespace: "alpha"},
		{ID: "a2", Text: harbor(1), Time: hour(1), Namespace: "alpha"},
		{ID: "b1", Text: harbor(2), Time: hour(2), Namespace: "beta"},
		{ID: "d1", Text: harbor(3), Time: hour(3)},
	}
	for _, r := range recs {
		s.add(e, r, "rule: Add succeeds")
	}
	d1, _ := s.rs.Get("d1")
	check := func(ns string, want []string, rule string) {
		e.t.Helper()
		for _, mode := range modes {
			hits := s.query(e, memory.Query{Text: shared, Namespace: ns, Mode: mode, K: 10, MinScore: everything}, "rule: Query succeeds")
			assert.ElementsMatch(e.t, want, hitIDs(hits), "rule: %s (namespace %q, %v)", rule, ns, mode)
			for _, h := range hits {
				if h.Namespace != "" && ns != "" {
					assert.Equal(e.t, ns, h.Namespace, "rule: a hit's Namespace is its record's")
				}
			}
		}
		if s.l != nil {
			recs, total := s.list(e, memory.ListOptions{Namespace: ns}, "rule: List succeeds")
			assert.ElementsMatch(e.t, want, recordIDs(recs), "rule: List %s (namespace %q)", rule, ns)
			assert.Equal(e.t, len(want), total, "rule: List counts %s (namespace %q)", rule, ns)
		}
	}
	check("alpha", []string{"a1", "a2"}, "with a Namespace finds only that namespace's records")
	check("beta", []string{"b1"}, "with a Namespace finds only that namespace's records")
	check("", []string{"a1", "a2", "b1", "d1"}, "without a Namespace searches every namespace")
	check("nowhere", nil, "of a namespace that holds nothing finds nothing, and is no error")
	if d1.Namespace != "" {
		check(d1.Namespace, []string{"d1"}, "a record without a Namespace is in the default namespace, the one Get reports")
	}
	hits, err := s.m.Search(e.ctx(), harbor(2))
	require.NoError(e.t, err)
	if assert.NotEmpty(e.t, hits, "rule: Search searches every namespace") {
		assert.Equal(e.t, "b1", hits[0].ID, "rule: Search searches every namespace")
	}
	// An id is the store's, not a namespace's: adding it in another
	// namespace moves the record.
	s.add(e, memory.Record{ID: "b1", Text: harbor(2), Time: hour(2), Namespace: "alpha"}, "rule: Add with a stored id succeeds")
	check("beta", nil, "Add with a stored id in another namespace moves the record: nothing left behind")
	check("alpha", []string{"a1", "a2", "b1"}, "Add with a stored id in another namespace moves the record there")
	got, _ := s.rs.Get("b1")
	assert.Equal(e.t, "alpha", got.Namespace, "rule: Add with a stored id in another namespace moves the record there")
	var err2 error
	_, err2 = s.rs.Add(e.ctx(), memory.Record{ID: "s", Text: harbor(4), Namespace: "with space/ü"})
	if err2 == nil {
		check("with space/ü", []string{"s"}, "with a Namespace finds only that namespace's records")
	} else if !errors.Is(err2, memory.ErrInvalidArgument) {
		e.t.Errorf("rule: a namespace name the memory does not accept is refused with ErrInvalidArgument: %v", err2)
	}
}

// queryRelevance: a hit's relevance is in [0, 1], none is below the
// query's MinRelevance, a higher minimum keeps no more hits, and a hit
// that matched nothing (a word no record holds, asked of the keyword
// path) is never returned.
func queryRelevance(e *env) {
	s := e.fresh(needRecords | needQuerier)
	for i := range 6 {
		s.add(e, memory.Record{ID: fmt.Sprint("r", i), Text: harbor(i), Time: hour(i)}, "rule: Add succeeds")
	}
	all := s.query(e, memory.Query{Text: harbor(3), K: 6, MinRelevance: everything}, "rule: Query succeeds")
	require.NotEmpty(e.t, all, "rule: a record is found by its own text with no minimum relevance")
	best := all[0].Relevance
	for _, h := range all {
		best = max(best, h.Relevance)
	}
	if best > 0 {
		above := s.query(e, memory.Query{Text: harbor(3), K: 6, MinRelevance: best}, "rule: Query succeeds")
		assert.NotEmpty(e.t, above, "rule: the best hit's relevance as the minimum keeps it")
		assert.LessOrEqual(e.t, len(above), len(all), "rule: a higher MinRelevance keeps no more hits")
		for _, h := range above {
			assert.GreaterOrEqual(e.t, h.Relevance, best, "rule: no hit is below the query's MinRelevance: %q", h.ID)
		}
	}
	none := s.query(e, memory.Query{Text: absent, Mode: memory.KeywordOnly, MinRelevance: everything}, "rule: Query succeeds")
	assert.Empty(e.t, hitIDs(none), "rule: a hit that matched nothing is never returned, whatever the minimum relevance")
}

// queryTokenBudget: with MaxTokens, the hits cost no more than the budget
// (Hit.Tokens, summed) and come in the order of the search without it;
// a budget too small for any hit returns none, and a negative one is an
// error. A memory that does not count tokens (every Tokens 0 with a
// budget that keeps hits) fails.
func queryTokenBudget(e *env) {
	s := e.fresh(needRecords | needQuerier)
	for i := range 6 {
		s.add(e, memory.Record{ID: fmt.Sprint("b", i), Text: harbor(i), Time: hour(i)}, "rule: Add succeeds")
	}
	q := memory.Query{Text: shared, K: 6, MinRelevance: everything}
	all := s.query(e, q, "rule: Query succeeds")
	require.NotEmpty(e.t, all, "rule: a shared word finds the records")
	q.MaxTokens = 40
	got := s.query(e, q, "rule: Query with a token budget succeeds")
	assert.LessOrEqual(e.t, memory.Tokens(got), q.MaxTokens, "rule: the hits cost no more than MaxTokens")
	if assert.NotEmpty(e.t, got, "rule: a budget that holds a hit keeps one") {
		assert.Positive(e.t, got[0].Tokens, "rule: a hit kept under a token budget says what it costs")
	}
	at := 0
	for _, h := range got {
		for at < len(all) && all[at].ID != h.ID {
			at++
		}
		assert.Less(e.t, at, len(all), "rule: a token budget keeps hits in the search's order: %q", h.ID)
	}
	q.MaxTokens = 1
	assert.Empty(e.t, hitIDs(s.query(e, q, "rule: Query succeeds")), "rule: a budget too small for any hit returns none")
	q.MaxTokens = -1
	_, err := s.q.Query(e.ctx(), q)
	assert.ErrorIs(e.t, err, memory.ErrInvalidArgument, "rule: a negative MaxTokens is an error wrapping ErrInvalidArgument")
}

// queryRecap: a recap question ("What did we talk about yesterday?",
// which shares no word with its answer) is answered with the talk of the
// period it names, in the order it was said, its newest record included (a store that keeps times
// to the microsecond must not lose it at the period's end), and nothing
// else, in both modes that read words; "yesterday" as of a given moment
// (Query.AsOf) is the calendar day before that moment, without the talk
// of that moment's day, which "this morning" asks for; and "last week"
// the calendar week before that moment's (Monday to Sunday), "last
// weekend" its Saturday and Sunday.
func queryRecap(e *env) {
	s := e.fresh(needRecords | needQuerier)
	at := base.Add(5 * 24 * time.Hour)
	for _, r := range []memory.Record{
		{ID: "old", Speaker: "Ann", Text: "We planted tomatoes in the garden.", Time: base},
		{ID: "morning", Speaker: "Ann", Text: "Good morning, one more question.", Time: base.Add(24 * time.Hour)},
		{ID: "r1", Speaker: "Ann", Text: "Can you help me draft a cover letter for Acme?", Time: at.Add(500 * time.Microsecond)},
		{ID: "r2", Speaker: "Bot", Text: "Open with the Spark pipeline you built.", Time: at.Add(time.Minute + 250*time.Microsecond)},
	} {
		s.add(e, r, "rule: Add succeeds")
	}
	for _, mode := range []memory.Mode{memory.KeywordOnly, memory.Hybrid} {
		hits := s.query(e, memory.Query{Text: "What did we talk about yesterday?", Mode: mode}, "rule: Query succeeds")
		assert.Equal(e.t, []string{"r1", "r2"}, hitIDs(hits),
			"rule: a recap question finds the talk of the period it names, its newest record included, and nothing else, as the talk went (%v)", mode)
		hits = s.query(e, memory.Query{Text: "What did we talk about yesterday?", Mode: mode, AsOf: base.Add(30 * time.Hour)}, "rule: Query succeeds")
		assert.Equal(e.t, []string{"old"}, hitIDs(hits),
			"rule: a query's time references count back from its AsOf when it gives one, and its yesterday is the calendar day before it (%v)", mode)
		hits = s.query(e, memory.Query{Text: "What did we talk about this morning?", Mode: mode, AsOf: base.Add(30 * time.Hour)}, "rule: Query succeeds")
		assert.Equal(e.t, []string{"morning"}, hitIDs(hits), "rule: a recap of the day of asking finds that day's talk so far (%v)", mode)
		// base is a Saturday: asked on the Monday nine days later, last
		// week is Monday 3 to Sunday 9 March, without the weekend before.
		hits = s.query(e, memory.Query{Text: "What did we talk about last week?", Mode: mode, AsOf: base.Add(9*24*time.Hour + 2*time.Hour)}, "rule: Query succeeds")
		assert.Equal(e.t, []string{"r1", "r2"}, hitIDs(hits), "rule: asked at a known moment, a recap of last week finds the calendar week's talk (%v)", mode)
		hits = s.query(e, memory.Query{Text: "What did we talk about last weekend?", Mode: mode, AsOf: base.Add(4 * 24 * time.Hour)}, "rule: Query succeeds")
		assert.Equal(e.t, []string{"old", "morning"}, hitIDs(hits), "rule: and of last weekend, its Saturday and Sunday (%v)", mode)
	}
}

// queryNotes: records written without a speaker are notes, each of which
// stands alone. A search for a word of one note finds that note alone,
// not the notes written in the same minutes (a store may lend a record's
// score to the records around it, as it does for the turns of a
// conversation, but a note is not returned on that alone), by the keyword
// path, whatever the minimum relevance. (A vector path may match any text a little: a
// small hashed embedding puts "peanuts" near a flight.)
func queryNotes(e *env) {
	s := e.fresh(needRecords | needQuerier)
	s.addNotes(e,
		"My flight to Berlin leaves on March 3rd at 9am.",
		"I'm allergic to peanuts.",
		"Their favourite colour is blue.")
	hits := s.query(e, memory.Query{Text: "peanuts", Mode: memory.KeywordOnly, MinRelevance: everything}, "rule: Query succeeds")
	assert.Equal(e.t, []string{"n1"}, hitIDs(hits), "rule: a note is found alone, without the notes written around it")
}

// queryFunctionWords: among a few notes, a question's function words
// ("you", "me", "my") do not outweigh the word it is about, although a
// handful of notes makes them as rare as it.
func queryFunctionWords(e *env) {
	s := e.fresh(needRecords | needQuerier)
	s.addNotes(e,
		"You told me you would call me about it.",
		"My sister Anna lives in Lisbon.",
		"The budget for the trip is 400 euros.",
		"I booked the hotel near the station.")
	hits := s.query(e, memory.Query{Text: "What did you say to me about my sister?", Mode: memory.KeywordOnly, MinRelevance: everything}, "rule: Query succeeds")
	if assert.NotEmpty(e.t, hits, "rule: the question finds its note") {
		assert.Equal(e.t, "n1", hits[0].ID, "rule: the note that holds the word asked about comes first, not the one that holds the question's function words")
	}
}

// querySpeakerRoles: in a chat log of a user and an assistant, a question
// in the first person about the asker's things finds what the user said,
// and a question about the answerer's words what the assistant said, over
// the other side's turn in the same words.
func querySpeakerRoles(e *env) {
	firstBySpeaker(e, []memory.Record{
		{ID: "u0", Speaker: "user", Text: "I'm off to Florence next month and want some painters recommended to me before I go."},
		{ID: "a0", Speaker: "assistant", Text: "Then I recommend Botticelli and Titian: both painters hang in the Uffizi."},
		{ID: "u1", Speaker: "user", Text: "My dog Biscuit is a beagle."},
		{ID: "a1", Speaker: "assistant", Text: "Biscuit is a lovely name for a beagle, a dog that needs long walks."},
	}, map[string]string{
		"What painters did you recommend to me?": "a0",
		"What is my dog's name?":                 "u1",
	}, "")
}

// querySpeakerNames: a chat log's user who gave their name ("Hi, I'm
// Priya", "我叫李明") is the one a query by that name asks about: "Which
// tests does Priya prefer?" finds the user's turn about tests first, not
// the assistant's that says her name and more of the query's words, and
// so does "李明喜欢什么测试？"; and a question about the assistant's words
// to her finds the assistant's turn, as "… recommend to me?" does.
func querySpeakerNames(e *env) {
	firstBySpeaker(e, []memory.Record{
		{ID: "u0", Speaker: "user", Text: "Hi, I'm Priya, I lead the billing team."},
		{ID: "a0", Speaker: "assistant", Text: "Nice to meet you! How can I help the billing team?"},
		{ID: "u1", Speaker: "user", Text: "I prefer table-driven tests with testify."},
		{ID: "a1", Speaker: "assistant", Text: "Noted, Priya: table-driven tests, though Tom's team prefers golden files for their tests."},
		{ID: "u2", Speaker: "user", Text: "Priya again, about the release: what do you recommend?"},
		{ID: "a2", Speaker: "assistant", Text: "I recommend tagging the release on Friday after the last CI run."},
		{ID: "zu0", Namespace: "zh", Speaker: "user", Text: "你好，我叫李明，很高兴认识你。"},
		{ID: "za0", Namespace: "zh", Speaker: "assistant", Text: "你好！有什么可以帮你的？"},
		{ID: "zu1", Namespace: "zh", Speaker: "user", Text: "我喜欢表格驱动的测试。"},
		{ID: "za1", Namespace: "zh", Speaker: "assistant", Text: "好的李明，表格驱动的测试；小王的团队喜欢黄金文件测试。"},
	}, map[string]string{
		"Which tests does Priya prefer?":                   "u1",
		"What did you recommend to Priya for the release?": "a2",
		"李明喜欢什么测试？":                                        "zu1",
	}, ", the user by the name they gave")
}

// queryNewerVersion: of two statements by one speaker that answer a
// query alike (the same words of it, a third of their words shared), the
// later comes first though it scores lower, and the earlier still comes:
// memories added beside each other, not superseded, where the later said
// is the likelier current.
func queryNewerVersion(e *env) {
	s := e.fresh(needRecords | needQuerier)
	for i, r := range []memory.Record{
		{ID: "old", Speaker: "user", Text: "My manager is Tom."},
		{ID: "ok", Speaker: "assistant", Text: "Noted."},
		{ID: "team", Speaker: "user", Text: "Our team moved to the fourth floor."},
		{ID: "new", Speaker: "user", Text: "My manager is Ingrid now."},
	} {
		r.Time = hour(24 * 30 * i)
		s.add(e, r, "rule: Add succeeds")
	}
	hits := s.query(e, memory.Query{Text: "Who is my manager?"}, "rule: Query succeeds")
	if assert.GreaterOrEqual(e.t, len(hits), 2, "rule: \"Who is my manager?\" finds both statements") {
		assert.Equal(e.t, []string{"new", "old"}, hitIDs(hits)[:2], "rule: of two statements that answer a query alike, the later comes first")
	}
}

// firstBySpeaker adds recs to a fresh store a minute apart, and checks
// that each query of first, asked by keyword in the namespace of the
// record it names, finds that record first ("what the side it asks about
// said", and how: because).
func firstBySpeaker(e *env, recs []memory.Record, first map[string]string, because string) {
	s := e.fresh(needRecords | needQuerier)
	namespace := map[string]string{}
	for i, r := range recs {
		r.Time = hour(0).Add(time.Duration(i) * time.Minute)
		s.add(e, r, "rule: Add succeeds")
		namespace[r.ID] = r.Namespace
	}
	for q, want := range first {
		hits := s.query(e, memory.Query{Text: q, Namespace: namespace[want], Mode: memory.KeywordOnly}, "rule: Query succeeds")
		if assert.NotEmpty(e.t, hits, "rule: %q finds the conversation", q) {
			assert.Equal(e.t, want, hits[0].ID, "rule: %q finds first what the side it asks about said"+because, q)
		}
	}
}
