package ranking

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		{"在5月6号我读了一本书，它的名字是？", day(2023, 5, 6).Add(9 * time.Hour), day(2023, 5, 9), true},
		{"我曾经在5月2日提到过我去了博物馆", day(2023, 5, 2), day(2023, 4, 28), true},
		{"2022年7月3日的会议", day(2022, 7, 3), day(2023, 7, 3), true},
		{"2022年7月去了哪里", day(2022, 7, 20), day(2022, 10, 1), true},
		{"三天前我说过", now.AddDate(0, 0, -3), now.AddDate(0, 0, -10), true},
		{"两个月前的计划", now.AddDate(0, -2, 0), now.AddDate(0, -4, 0), true},
		{"昨天我们聊了什么", now.Add(-20 * time.Hour), now.Add(-5 * 24 * time.Hour), true},
		{"上周的计划", now.AddDate(0, 0, -7), now.AddDate(0, -1, 0), true},
		{"13月45日", time.Time{}, time.Time{}, false},
		{"陈静的猫叫什么名字？", time.Time{}, time.Time{}, false},
	} {
		from, to, ok := TimeRef(tc.q, now)
		assert.Equal(t, tc.parsed, ok, tc.q)
		if !ok {
			continue
		}
		inside := func(x time.Time) bool { return !x.Before(from) && x.Before(to) }
		assert.True(t, inside(tc.in), "%s: %v in [%v, %v)", tc.q, tc.in, from, to)
		assert.False(t, inside(tc.out), "%s: %v not in [%v, %v)", tc.q, tc.out, from, to)
	}
}

// TestNamedDay: a calendar day named in a query is that day alone
// (TimeRef widens it by a day on each side); a relative time, a month or
// no time names none.
func TestNamedDay(t *testing.T) {
	now := time.Date(2023, 6, 20, 15, 0, 0, 0, time.UTC)
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	for q, want := range map[string]time.Time{
		"What did I do on 8 May 2023?":                 day(2023, 5, 8),
		"What topics did we talk about on April 29th?": day(2023, 4, 29),
		"the 2022-07-03 meeting":                       day(2022, 7, 3),
		"在5月6号我读了一本书":                                  day(2023, 5, 6),
		"on 31 February 2023":                          {},
		"Where did she go in July 2022?":               {},
		"What did we discuss yesterday?":               {},
		"three days ago I said":                        {},
		"When did Caroline go to the support group?":   {},
	} {
		from, to, ok := NamedDay(q, now)
		if want.IsZero() {
			assert.False(t, ok, q)
			continue
		}
		if assert.True(t, ok, q) {
			assert.Equal(t, want, from, q)
			assert.Equal(t, want.AddDate(0, 0, 1), to, q)
			wf, wt, _ := TimeRef(q, now)
			assert.Equal(t, want.AddDate(0, 0, -1), wf, "%s: TimeRef's window is a day wider", q)
			assert.Equal(t, want.AddDate(0, 0, 2), wt, q)
		}
	}
}

func TestRefersBack(t *testing.T) {
	for q, want := range map[string]bool{
		"Regarding the WhatsApp tool from last time, what do you need from me?": true,
		"We already agreed on the 4-day split, remember?":                       true,
		"What's next for the plan?":                                             true,
		"I'm still worried about altitude sickness.":                            true,
		"As we discussed, the budget is tight.":                                 true,
		"What is Tom's phone number?":                                           false,
		"When did Caroline go to the support group?":                            false,
		"What did we discuss last week?":                                        false, // a time: TimeRef's
		"Nextcloud or Dropbox?":                                                 false,
	} {
		assert.Equal(t, want, RefersBack(q), q)
	}
}

func TestRecency(t *testing.T) {
	week := 7 * 24 * time.Hour
	assert.Equal(t, 1.0, Recency(0, week))
	assert.Equal(t, 1.0, Recency(-time.Hour, week))
	assert.Equal(t, 1.0, Recency(week, 0))
	assert.InDelta(t, 0.5, Recency(week, week), 1e-12)
	assert.InDelta(t, 0.25, Recency(2*week, week), 1e-12)
}

func TestWithoutTimeRefs(t *testing.T) {
	for in, want := range map[string]string{
		"On May 2nd, what was my mood?":          "On  , what was my mood?",
		"What did I buy 3 days ago at the store": "What did I buy   at the store",
		"Where did we eat yesterday?":            "Where did we eat  ?",
		"What happened on 2023-05-08":            "What happened on  ",
		"May I ask about the May 2023 trip":      "May I ask about the   trip",
		"What is RP-20931?":                      "What is RP-20931?",
		"在5月6号我读了一本书":                            "在 我读了一本书",
	} {
		assert.Equal(t, want, WithoutTimeRefs(in), in)
	}
}

// TestRecap: a question about what was said in a period it names, and
// nothing more, is a recap; one that asks about something in the period,
// or names no period, is not.
func TestRecap(t *testing.T) {
	for q, want := range map[string]bool{
		"What did we talk about yesterday?":                                     true,
		"Remind me what we discussed last week":                                 true,
		"What topic did we talk about on April 27th?":                           true,
		"On May 2nd, we talked a lot. What topics did we discuss?":              true,
		"What happened 3 days ago?":                                             true,
		"4月27日我们聊了什么话题？":                                                        true,
		"昨天我们聊了什么？":                                                             true,
		"What did I eat yesterday?":                                             false,
		"On May 4th, I told you about my travel plans. Where did I plan to go?": false,
		"What's the weather like on May 4th?":                                   false,
		"What did we talk about?":                                               false,
		"昨天我们聊了什么电影？":                                                           false,
		"What did we talk about this morning?":                                  true,
		"Remind me what we discussed earlier today":                             true,
		"今天我们聊了什么？":                                                             true,
		"What's the plan for today?":                                            false,
		"What did I eat this morning?":                                          false,
	} {
		assert.Equal(t, want, Recap(q), q)
	}
}

func TestYesterday(t *testing.T) {
	zone := time.FixedZone("UTC+9", 9*3600)
	now := time.Date(2023, 6, 20, 1, 30, 0, 0, zone)
	for _, q := range []string{"What did we talk about yesterday?", "what did I say last night", "我们昨天聊了什么？"} {
		from, to, ok := Yesterday(q, now)
		if assert.True(t, ok, q) {
			assert.Equal(t, time.Date(2023, 6, 19, 0, 0, 0, 0, zone), from, "%s: the day before, in now's zone", q)
			assert.Equal(t, time.Date(2023, 6, 20, 0, 0, 0, 0, zone), to, q)
		}
	}
	for _, q := range []string{"What did we talk about last week?", "What is the weather like?", "3 days ago", "On May 8th, what did we discuss?"} {
		_, _, ok := Yesterday(q, now)
		assert.False(t, ok, q)
	}
}

func TestToday(t *testing.T) {
	zone := time.FixedZone("UTC+9", 9*3600)
	now := time.Date(2023, 6, 20, 15, 30, 0, 0, zone)
	for _, q := range []string{"What did we talk about this morning?", "earlier today", "What did we discuss tonight?", "我们今天聊了什么？"} {
		from, to, ok := Today(q, now)
		if assert.True(t, ok, q) {
			assert.Equal(t, time.Date(2023, 6, 20, 0, 0, 0, 0, zone), from, "%s: the day so far, in now's zone", q)
			assert.Equal(t, now, to, q)
		}
	}
	for _, q := range []string{"What did we talk about yesterday?", "this is it", "What is the weather like?"} {
		_, _, ok := Today(q, now)
		assert.False(t, ok, q)
	}
}

func TestLastPeriod(t *testing.T) {
	t.Parallel()

	fri := time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC) // a Friday
	sun := time.Date(2026, 11, 22, 23, 0, 0, 0, time.UTC)
	mon := time.Date(2026, 11, 23, 0, 5, 0, 0, time.UTC)
	day := func(m time.Month, d int) time.Time { return time.Date(2026, m, d, 0, 0, 0, 0, time.UTC) }
	for _, tt := range []struct {
		query    string
		now      time.Time
		from, to time.Time
	}{
		{"What did we discuss last week?", fri, day(11, 9), day(11, 16)},
		{"What did we discuss last week?", sun, day(11, 9), day(11, 16)},
		{"What did we discuss last week?", mon, day(11, 16), day(11, 23)},
		{"what happened last weekend", fri, day(11, 14), day(11, 16)},
		{"What did we talk about last month?", fri, day(10, 1), day(11, 1)},
		{"last year", fri, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"上周我们聊了什么？", fri, day(11, 9), day(11, 16)},
		{"上个月我们聊了什么？", fri, day(10, 1), day(11, 1)},
	} {
		from, to, ok := LastPeriod(tt.query, tt.now)
		require.True(t, ok, tt.query)
		assert.Equal(t, tt.from, from, "%s at %v", tt.query, tt.now)
		assert.Equal(t, tt.to, to, "%s at %v", tt.query, tt.now)
	}
	for _, q := range []string{"What did we talk about yesterday?", "two weeks ago", "What's my plan for next week?"} {
		_, _, ok := LastPeriod(q, fri)
		assert.False(t, ok, q)
	}
}
