package ranking

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// A time reference in a query: "yesterday", "last week", "3 days ago",
// "in May 2023", "on 8 May 2023", "May 8, 2023", "2023-05-08", and in
// Chinese 2023年5月8日, 5月8号, 2023年5月, 3天前, 昨天, 上周. Parsing is
// lenient: what does not parse as a date (a "May" that is a verb, a 31
// February) is no reference, never an error.
var (
	reISO      = regexp.MustCompile(`\b(\d{4})-(\d{1,2})-(\d{1,2})\b`)
	reDayMonth = regexp.MustCompile(`\b(\d{1,2})(?:st|nd|rd|th)?\s+(January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?,?(?:\s+(\d{4}))?\b`)
	reMonthDay = regexp.MustCompile(`\b(January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?\b`)
	reMonthYr  = regexp.MustCompile(`\b(January|February|March|April|May|June|July|August|September|October|November|December)\s+(?:of\s+)?(\d{4})\b`)
	reAgo      = regexp.MustCompile(`(?i)\b(\d+|a|an|one|two|three|four|five|six|seven)\s+(day|week|month|year)s?\s+ago\b`)
	reLast     = regexp.MustCompile(`(?i)\b(yesterday|last\s+(?:night|week|month|year|weekend))\b`)
	// Chinese: 2023年5月8日, 5月8号, 2023年5月, 3天前, 昨天, 上周.
	reZhDay   = regexp.MustCompile(`(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]`)
	reZhMonth = regexp.MustCompile(`(\d{4})\s*年\s*(\d{1,2})\s*月`)
	reZhAgo   = regexp.MustCompile(`(\d+|[一二两三四五六七])\s*(?:个)?\s*(天|周|星期|礼拜|月|年)(?:以)?前`)
	reZhLast  = regexp.MustCompile(`昨天|昨晚|上周|上个?星期|上个?礼拜|上个月|去年`)
	// reToday finds the day of asking: "today", "earlier today", "this
	// morning", "tonight", 今天, 今早.
	reToday = regexp.MustCompile(`(?i)\b(?:(?:earlier\s+)?today|tonight|this\s+(?:morning|afternoon|evening))\b|今天|今早|今晚|今日`)
)

var zhNumbers = map[string]int{"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7}

// zhLast names each of reZhLast's matches as reLast's English.
var zhLast = map[string]string{"昨天": "yesterday", "昨晚": "last night", "上周": "last week", "上星期": "last week", "上个星期": "last week",
	"上礼拜": "last week", "上个礼拜": "last week", "上个月": "last month", "去年": "last year"}

var monthNames = map[string]time.Month{}

func init() {
	for m := time.January; m <= time.December; m++ {
		monthNames[strings.ToLower(m.String())] = m
		monthNames[strings.ToLower(m.String()[:3])] = m
	}
	monthNames["sept"] = time.September
}

var smallNumbers = map[string]int{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}

// timeRef returns the time window [from, to) a query refers to, relative
// to now for relative references, and whether it names one. A window is
// widened by a day on each side for a day (time zones, "yesterday" said
// after midnight) and by a quarter of its length for longer spans.
func TimeRef(query string, now time.Time) (from, to time.Time, ok bool) {
	if !TimeCue(query) {
		return time.Time{}, time.Time{}, false
	}
	if d, ok := namedDay(query, now); ok {
		return d.AddDate(0, 0, -1), d.AddDate(0, 0, 2), true
	}
	year := func(s string) int { return yearOr(s, now) }
	month := func(y int, m time.Month) (time.Time, time.Time, bool) {
		t := time.Date(y, m, 1, 0, 0, 0, 0, now.Location())
		return t.AddDate(0, 0, -7), t.AddDate(0, 1, 7), true
	}
	if m := reMonthYr.FindStringSubmatch(query); m != nil {
		return month(year(m[2]), monthNames[strings.ToLower(m[1])])
	}
	if m := reZhMonth.FindStringSubmatch(query); m != nil {
		if mo, _ := strconv.Atoi(m[2]); mo >= 1 && mo <= 12 {
			return month(year(m[1]), time.Month(mo))
		}
	}
	ago := func(n int, unit string) (time.Time, time.Time, bool) {
		var at time.Time
		var slack time.Duration
		switch unit {
		case "day":
			at, slack = now.AddDate(0, 0, -n), 36*time.Hour
		case "week":
			at, slack = now.AddDate(0, 0, -7*n), 5*24*time.Hour
		case "month":
			at, slack = now.AddDate(0, -n, 0), 15*24*time.Hour
		default:
			at, slack = now.AddDate(-n, 0, 0), 120*24*time.Hour
		}
		return at.Add(-slack), at.Add(slack), true
	}
	if m := reAgo.FindStringSubmatch(query); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			n = smallNumbers[strings.ToLower(m[1])]
		}
		return ago(n, strings.ToLower(m[2]))
	}
	if m := reZhAgo.FindStringSubmatch(query); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			n = zhNumbers[m[1]]
		}
		unit := map[string]string{"天": "day", "周": "week", "星期": "week", "礼拜": "week", "月": "month", "年": "year"}[m[2]]
		return ago(n, unit)
	}
	switch lastWord(query) {
	case "yesterday", "last night":
		return now.Add(-60 * time.Hour), now, true
	case "last week", "last weekend":
		return now.AddDate(0, 0, -16), now, true
	case "last month":
		return now.AddDate(0, -2, 0), now, true
	case "last year":
		return now.AddDate(-2, 0, 0), now, true
	}
	return time.Time{}, time.Time{}, false
}

// NamedDay returns the calendar day a query names ("on 8 May 2023", "May
// 8th", "2023-05-08", 5月8日), [from, to) a day long in now's location and
// in now's year unless it says another, and whether it names one.
// TimeRef's window for it is a day wider on each side (time zones, talk
// after midnight); the day itself is what was named. A relative reference
// ("yesterday", "3 days ago") names no calendar day.
func NamedDay(query string, now time.Time) (from, to time.Time, ok bool) {
	if !TimeCue(query) {
		return time.Time{}, time.Time{}, false
	}
	d, ok := namedDay(query, now)
	if !ok {
		return time.Time{}, time.Time{}, false
	}
	return d, d.AddDate(0, 0, 1), true
}

// Yesterday returns the calendar day before now's, in now's location,
// when query says "yesterday" or "last night" (昨天, 昨晚), and whether it
// does. Only a query asked at a known moment names that day: relative to a
// namespace's newest record, which may be days before the question, TimeRef's
// wider window stands for it.
func Yesterday(query string, now time.Time) (from, to time.Time, ok bool) {
	if !TimeCue(query) {
		return time.Time{}, time.Time{}, false
	}
	if w := lastWord(query); w != "yesterday" && w != "last night" {
		return time.Time{}, time.Time{}, false
	}
	to = midnight(now)
	return to.AddDate(0, 0, -1), to, true
}

// LastPeriod returns the calendar period before now's that query names,
// in now's location, and whether it names one: "last week" is Monday to
// Monday of the week before now's; "last weekend" that week's Saturday
// and Sunday; "last month" and "last year" the calendar month and year
// before now's (上周, 上个月, 去年 alike). Like Yesterday it is for a query
// asked at a known moment, for a recap (Recap), whose answer is the
// period's talk: TimeRef's wider window, a prior, stands for it otherwise
// ("last week" there reaches 16 days back, as a week's talk may be
// recalled a few days late).
func LastPeriod(query string, now time.Time) (from, to time.Time, ok bool) {
	if !TimeCue(query) {
		return time.Time{}, time.Time{}, false
	}
	day := midnight(now)
	monday := day.AddDate(0, 0, -(int(day.Weekday())+6)%7)
	switch lastWord(query) {
	case "last week":
		return monday.AddDate(0, 0, -7), monday, true
	case "last weekend":
		return monday.AddDate(0, 0, -2), monday, true
	case "last month":
		to = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, now.Location())
		return to.AddDate(0, -1, 0), to, true
	case "last year":
		to = time.Date(now.Year(), time.January, 1, 0, 0, 0, 0, now.Location())
		return to.AddDate(-1, 0, 0), to, true
	}
	return time.Time{}, time.Time{}, false
}

// Today returns the day of asking so far, from the start of now's day to
// now, when query names it ("what did we talk about this morning?",
// "earlier today", 今天), and whether it does. It is not a time reference
// of TimeRef's: "what's the plan for today?" asks about a plan, whatever
// day it was made; only a recap question (Recap) is answered with the
// day's talk.
func Today(query string, now time.Time) (from, to time.Time, ok bool) {
	if !todayCue(query) || !reToday.MatchString(query) {
		return time.Time{}, time.Time{}, false
	}
	return midnight(now), now, true
}

// midnight returns the start of t's calendar day, in t's location.
func midnight(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}

// todayCue reports whether query may name the day of asking (Today), before
// its regular expression runs.
func todayCue(query string) bool {
	lower := strings.ToLower(query)
	return strings.Contains(lower, "today") || strings.Contains(lower, "tonight") || strings.Contains(lower, "this ") || strings.Contains(query, "今")
}

// lastWord returns the period before now that query names ("yesterday",
// "last night", "last week", "last weekend", "last month", "last year";
// the Chinese as its English), or "".
func lastWord(query string) string {
	if m := reLast.FindStringSubmatch(query); m != nil {
		return strings.Join(strings.Fields(strings.ToLower(m[1])), " ")
	}
	if m := reZhLast.FindString(query); m != "" {
		return zhLast[m]
	}
	return ""
}

// yearOr returns the year s names (1900–2200), or now's.
func yearOr(s string, now time.Time) int {
	if y, err := strconv.Atoi(s); err == nil && y >= 1900 && y <= 2200 {
		return y
	}
	return now.Year()
}

// namedDay returns the start of the calendar day query names (NamedDay),
// the first that parses as a day (not a 31 February) in the order
// TimeRef reads them.
func namedDay(query string, now time.Time) (time.Time, bool) {
	day := func(y int, m time.Month, d int) (time.Time, bool) {
		t := time.Date(y, m, d, 0, 0, 0, 0, now.Location())
		if t.Month() != m || t.Day() != d { // 31 February
			return time.Time{}, false
		}
		return t, true
	}
	year := func(s string) int { return yearOr(s, now) }
	// Year (perhaps none), month and day as numbers.
	for _, re := range []*regexp.Regexp{reISO, reZhDay} {
		if m := re.FindStringSubmatch(query); m != nil {
			mo, _ := strconv.Atoi(m[2])
			d, _ := strconv.Atoi(m[3])
			if mo >= 1 && mo <= 12 {
				if t, ok := day(year(m[1]), time.Month(mo), d); ok {
					return t, true
				}
			}
		}
	}
	if m := reDayMonth.FindStringSubmatch(query); m != nil {
		d, _ := strconv.Atoi(m[1])
		if t, ok := day(year(m[3]), monthNames[strings.ToLower(m[2])], d); ok {
			return t, true
		}
	}
	if m := reMonthDay.FindStringSubmatch(query); m != nil {
		d, _ := strconv.Atoi(m[2])
		if t, ok := day(year(m[3]), monthNames[strings.ToLower(m[1])], d); ok {
			return t, true
		}
	}
	return time.Time{}, false
}

// WithoutTimeRefs returns query with its time references ("on May 2nd",
// "3 days ago", "yesterday", "2023-05-08") blanked out: what is left is
// what the query asks about, to be found in a memory's words, where the
// time is to be found in its date.
func WithoutTimeRefs(query string) string {
	if !TimeCue(query) {
		return query
	}
	for _, re := range []*regexp.Regexp{reISO, reDayMonth, reMonthDay, reMonthYr, reAgo, reLast, reZhDay, reZhMonth, reZhAgo, reZhLast} {
		query = re.ReplaceAllString(query, " ")
	}
	return query
}

// TimeCue reports whether query may hold a time reference: every one has
// a digit, or one of the words below (the regular expressions above cost
// microseconds each; most queries have none of these). TimeRef and
// NamedDay start with it; a caller that must fetch something before it
// asks them (the time of the newest record) checks it first.
func TimeCue(query string) bool {
	if strings.ContainsAny(query, "0123456789昨上前去月年") {
		return true
	}
	lower := strings.ToLower(query)
	return strings.Contains(lower, "ago") || strings.Contains(lower, "yesterday") || strings.Contains(lower, "last")
}

// reBack finds words by which a query goes back to an earlier
// conversation without saying when it was: "last time", "as we agreed",
// "I already told you", "still", "again", "what's next". Such a query is
// about the latest state of what it names (see RefersBack).
var reBack = regexp.MustCompile(`(?i)\b(?:last\s+time|previous(?:ly)?|earlier|already|again|still|continue|next|back\s+to|so\s+far|latest|we\s+(?:discussed|talked|agreed|decided|planned|said)|(?:you|i)\s+(?:said|told|mentioned|suggested))\b`)

// RefersBack reports whether query refers back to an earlier conversation
// without naming a time (TimeRef finds none): "regarding the tool from last
// time", "we already agreed on the split", "what's next for the plan?".
// What it asks for is then the latest said about its subject, and the
// keyword path's recency prior (engine.WithRecency) applies to it alone: a
// question that does not refer back, "what is Tom's phone number?", may be
// about anything said at any time.
func RefersBack(query string) bool {
	if _, _, ok := TimeRef(query, time.Time{}); ok {
		return false
	}
	return reBack.MatchString(query)
}

// Recency returns what a record said age before the namespace's newest
// record is worth relative to one said with it: 2^(−age/halfLife), 1 for
// the newest (and for a record newer than it, or a halfLife ≤ 0).
func Recency(age, halfLife time.Duration) float64 {
	if age <= 0 || halfLife <= 0 {
		return 1
	}
	return math.Exp2(-float64(age) / float64(halfLife))
}

// recapWords are the words a question about what was said in a period
// uses beside its time reference and its question words: pronouns, words
// for talking, and the few others such a question is made of ("What
// topics did we discuss on May 2nd?", "Remind me what we talked about
// yesterday", "What happened last week?").
var recapWords = map[string]bool{
	"i": true, "me": true, "my": true, "we": true, "us": true, "our": true, "you": true, "your": true,
	"talk": true, "talked": true, "talking": true, "discuss": true, "discussed": true, "discussing": true,
	"chat": true, "chatted": true, "conversation": true, "conversations": true, "topic": true, "topics": true,
	"say": true, "said": true, "tell": true, "told": true, "mention": true, "mentioned": true,
	"speak": true, "spoke": true, "happen": true, "happened": true, "remind": true, "remember": true,
	"recap": true, "summarize": true, "summarise": true, "about": true, "a": true, "lot": true, "the": true,
	"and": true, "on": true, "in": true, "during": true, "over": true, "that": true, "was": true, "were": true,
	"is": true, "it": true, "have": true, "had": true, "can": true, "could": true, "please": true,
	"anything": true, "something": true, "things": true, "go": true,
}

// timeWords are the English words of time references (TimeRef's and
// Today's regular expressions) besides months and small numbers, for
// Recap's first pass.
var timeWords = map[string]bool{
	"yesterday": true, "last": true, "night": true, "week": true, "weeks": true, "weekend": true,
	"month": true, "months": true, "year": true, "years": true, "day": true, "days": true, "ago": true,
	"of": true, "st": true, "nd": true, "rd": true, "th": true,
	"today": true, "earlier": true, "tonight": true, "this": true, "morning": true, "afternoon": true, "evening": true,
}

// recapCJK are the Chinese words of such a question, longest first.
var recapCJK = []string{"聊了些", "讨论了", "谈论了", "说过了", "我们", "咱们", "聊天", "聊了", "谈了", "说了", "说过", "讨论", "谈论", "话题", "那天",
	"一下", "提醒", "记得", "我", "你", "聊", "谈", "说", "了", "的", "些", "都", "过", "吗", "呢", "题"}

// Recap reports whether query asks what was said (or happened) in a period
// it names, and nothing more: its words, once its time references and
// question words are out, are only recapWords ("What did we talk about
// yesterday?", "On May 2nd, we talked a lot. What topics did we
// discuss?", "4月27日我们聊了什么话题？"). Such a question shares no word with
// its answer, which is the period's talk itself.
func Recap(query string) bool {
	// Most queries hold a word that no recap holds: found word by word,
	// before any regular expression runs.
	for w := range strings.FieldsSeq(query) {
		c := wordCore(w)
		if c == "" || questionWords[c] || recapWords[c] || timeWords[c] || monthNames[c] != 0 || smallNumbers[c] != 0 ||
			strings.ContainsAny(c, "0123456789") || strings.ContainsFunc(c, func(r rune) bool { return r >= utf8.RuneSelf }) {
			continue
		}
		return false
	}
	at := time.Date(2000, 6, 15, 0, 0, 0, 0, time.UTC)
	rest := WithoutTimeRefs(query)
	if _, _, ok := TimeRef(query, at); !ok {
		if _, _, ok := Today(query, at); !ok {
			return false
		}
		rest = reToday.ReplaceAllString(query, " ")
	}
	for w := range strings.FieldsSeq(rest) {
		c := wordCore(w)
		if c == "" || questionWords[c] || recapWords[c] {
			continue
		}
		for _, q := range cjkQuestionWords {
			c = strings.ReplaceAll(c, q, "")
		}
		for _, r := range recapCJK {
			c = strings.ReplaceAll(c, r, "")
		}
		if hasWord(c) {
			return false
		}
	}
	return true
}
