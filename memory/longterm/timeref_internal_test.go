package longterm

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestTimeRef(t *testing.T) {
	now := time.Date(2023, 6, 20, 15, 0, 0, 0, time.UTC)
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		q      string
		in     time.Time // inside the window
		out    time.Time // outside it
		parsed bool
	}{
		{"What did I do on 8 May 2023?", day(2023, 5, 8).Add(10 * time.Hour), day(2023, 5, 12), true},
		{"What happened on May 8th, 2023?", day(2023, 5, 8), day(2023, 5, 1), true},
		{"the 2023-05-08 meeting", day(2023, 5, 8), day(2023, 6, 8), true},
		{"Where did she go in July 2022?", day(2022, 7, 15), day(2023, 7, 15), true},
		{"What did we discuss yesterday?", now.Add(-20 * time.Hour), now.Add(-5 * 24 * time.Hour), true},
		{"my plans from last week", now.AddDate(0, 0, -7), now.AddDate(0, -1, 0), true},
		{"three days ago I said", now.AddDate(0, 0, -3), now.AddDate(0, 0, -10), true},
		{"May I ask what you may know?", time.Time{}, time.Time{}, false},
		{"on 31 February 2023", day(2023, 2, 15), day(2023, 5, 1), true}, // no such day: the month
		{"the 2023-13-45 build", time.Time{}, time.Time{}, false},
		{"When did Caroline go to the support group?", time.Time{}, time.Time{}, false},
	} {
		from, to, ok := timeRef(tc.q, now)
		assert.Equal(t, tc.parsed, ok, tc.q)
		if !ok {
			continue
		}
		inside := func(x time.Time) bool { return !x.Before(from) && x.Before(to) }
		assert.True(t, inside(tc.in), "%s: %v in [%v, %v)", tc.q, tc.in, from, to)
		assert.False(t, inside(tc.out), "%s: %v not in [%v, %v)", tc.q, tc.out, from, to)
	}
}

func TestQuery_TimePriorAndExpansion(t *testing.T) {
	ctx := t.Context()
	at := time.Date(2023, 6, 20, 10, 0, 0, 0, time.UTC)
	recs := []Record{
		{ID: "may", Namespace: "c", Time: time.Date(2023, 5, 8, 9, 0, 0, 0, time.UTC), Text: "We went hiking in the hills."},
		{ID: "june", Namespace: "c", Time: at.AddDate(0, 0, -3), Text: "We went hiking by the lake."},
		{ID: "fly", Namespace: "c", Time: at, Text: "My flight to Lisbon leaves at noon."},
	}
	m := newFilled(t, recs, WithTimePrior(1))
	hits, err := m.Query(ctx, Query{Text: "Where did we go hiking on 8 May 2023?", Namespace: "c", Mode: KeywordOnly})
	noErr(t, err)
	assert.Equal(t, "may", hits[0].ID, "the named day first")
	hits, err = m.Query(ctx, Query{Text: "Where did we go hiking three days ago?", Namespace: "c", Mode: KeywordOnly})
	noErr(t, err)
	assert.Equal(t, "june", hits[0].ID, "three days before the newest record")

	related := func(w string) []string {
		if w == "plane" {
			return []string{"flight", "aircraft"}
		}
		return nil
	}
	m2 := newFilled(t, recs, WithQueryExpansion(related, 0.5), WithFeedback(2, 5, 0.2))
	hits, err = m2.Query(ctx, Query{Text: "When does the plane leave?", Namespace: "c", Mode: KeywordOnly})
	noErr(t, err)
	assert.Contains(t, ids(hits), "fly", "found through a related word")
	plain := newFilled(t, recs)
	hits, err = plain.Query(ctx, Query{Text: "When does the plane go?", Namespace: "c", Mode: KeywordOnly})
	noErr(t, err)
	assert.NotContains(t, ids(hits), "fly", "not found without expansion")
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestQuery_NextTurnField(t *testing.T) {
	ctx := t.Context()
	at := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	recs := []Record{
		{ID: "q", Namespace: "c", Time: at, Text: "Where are you going this summer?"},
		{ID: "a", Namespace: "c", Time: at.Add(time.Minute), Text: "Hiking in Patagonia with my brother."},
		{ID: "x", Namespace: "c", Time: at.Add(2 * time.Minute), Text: "Nice weather today."},
	}
	for _, w := range []float64{0, 0.3} {
		m := newFilled(t, recs, WithNextWeight(w), WithNeighbourWeight(0.3))
		hits, err := m.Query(ctx, Query{Text: "Patagonia", Namespace: "c", Mode: KeywordOnly})
		noErr(t, err)
		if w == 0 {
			assert.Equal(t, []string{"a", "x"}, ids(hits), "the turn after through its previous-turn field")
		} else {
			assert.Equal(t, "a", hits[0].ID)
			assert.ElementsMatch(t, []string{"a", "q", "x"}, ids(hits), "and the question through its answer")
		}
		noErr(t, m.Forget(ctx, "a"))
		hits, err = m.Query(ctx, Query{Text: "Patagonia", Namespace: "c", Mode: KeywordOnly})
		noErr(t, err)
		assert.Empty(t, hits, "a forgotten record's words leave its neighbours' fields too (w=%v)", w)
		m.Close()
	}
}
