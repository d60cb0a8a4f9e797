package ranking

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentmem/agentmem/keyword"
)

// maxPersonWords is the most words PersonNames takes for one name ("John
// Zhang", "Mary Ann Evans").
const maxPersonWords = 3

// PersonNames returns what in query may name a person by their name: each
// run of up to maxPersonWords capitalised words ("Emily", "John Zhang"),
// as written, its surrounding punctuation and a possessive's 's trimmed,
// once, and for a run that opens a sentence, where the capital is the
// sentence's, the same run without its first word too ("Recently Sunny
// has been …": "Recently Sunny", "Sunny"). Function and question words,
// "I" and its contractions and the names of months and weekdays
// (calendarWord) end a run and are not part of one. Unlike Names it reads
// a sentence's first word: "Emily recommended a movie, what was it?"
// names Emily.
func PersonNames(query string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(run []string) {
		if len(run) == 0 || len(run) > maxPersonWords {
			return
		}
		if n := strings.Join(run, " "); !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for line := range strings.Lines(query) {
		var run []string
		start, runAtStart := true, false
		flush := func() {
			add(run)
			if runAtStart && len(run) > 1 {
				add(run[1:])
			}
			run = run[:0]
		}
		for w := range strings.FieldsSeq(line) {
			core := trimWord(w)
			possessive := strings.HasSuffix(core, "'s") || strings.HasSuffix(core, "’s")
			if possessive {
				core = strings.TrimSuffix(strings.TrimSuffix(core, "'s"), "’s")
			}
			first, _ := utf8.DecodeRuneInString(core)
			low := strings.ToLower(core)
			if core != "" && unicode.IsUpper(first) && !isI(core) && !calendarWord(core) && !questionWords[low] && !isFunctionWord(low) {
				if len(run) == 0 {
					runAtStart = start
				}
				run = append(run, core)
			} else {
				flush()
			}
			if (possessive || w != strings.TrimRight(w, ",;.?!:)]\"”’'。？！，")) && len(run) > 0 {
				// Punctuation after a word ends the run ("Emily, Frank"),
				// and so does a possessive ("Emily's sister").
				flush()
			}
			if core != "" || strings.ContainsAny(w, ".?!:") {
				start = endsSentence(w)
			}
		}
		flush()
	}
	return out
}

// isFunctionWord reports whether w (in lower case) is one of
// functionWords.
func isFunctionWord(w string) bool { return slices.Contains(functionWords, w) }

// introLeads are what a speaker says before their own name to introduce
// themselves, in lower case; greetedLeads say it only after a greeting
// in the same sentence ("Hi, I'm Gary"), since what follows them is as
// often what the speaker is ("I'm Italian") as who.
var (
	introLeads   = []string{"my name is ", "my name's ", "my name’s ", "call me "}
	greetedLeads = []string{"i'm ", "i’m ", "i am "}
	greetings    = []string{"hi", "hello", "hey", "greetings", "morning", "afternoon", "evening", "hiya", "howdy"}
)

// cjkIntroLeads are the same in Chinese, written without a space before
// the name; and cjkGreetedLeads, like greetedLeads, say it only after a
// greeting (cjkGreetings) in the same sentence: 我是 says as often what
// the speaker is (我是老师, "I'm a teacher") as who (你好，我是陈阳).
var (
	cjkIntroLeads   = []string{"我叫", "我的名字是", "我的名字叫", "我名叫"}
	cjkGreetedLeads = []string{"我是"}
	cjkGreetings    = []string{"你好", "您好", "大家好", "嗨", "哈喽", "早上好", "下午好", "晚上好"}
)

// IntroTerms are the terms (as the keyword path's tokenizer cuts Chinese:
// its characters and their bigrams) a Chinese self-introduction holds
// (cjkIntroLeads, a greeting and cjkGreetedLeads), for finding one without
// knowing the name.
var IntroTerms = []string{"我叫", "名字", "名叫", "我是", "你好", "您好"}

// maxCJKName is the most characters IntroducedNames takes for a Chinese
// name: a surname and a given name of one or two, or two and two.
const maxCJKName = 4

// IntroducedNames returns the Chinese names text introduces its speaker
// by (Introduces): the Han characters right after one of cjkIntroLeads (or
// of cjkGreetedLeads after a greeting), up to the next character that is
// not one, two to maxCJKName of them.
// Chinese writes no space around a name, so a query's names cannot be
// read without knowing them (PersonNames reads capitals), and this reads
// them from the introduction instead.
func IntroducedNames(text string) []string {
	var out []string
	for _, lead := range slices.Concat(cjkIntroLeads, cjkGreetedLeads) {
		for rest := text; ; {
			before, after, ok := strings.Cut(rest, lead)
			if !ok {
				break
			}
			rest = after
			if slices.Contains(cjkGreetedLeads, lead) && !cjkGreeted(before) {
				continue
			}
			n := 0
			for _, r := range after {
				if !unicode.Is(unicode.Han, r) {
					break
				}
				n++
			}
			if n >= 2 && n <= maxCJKName {
				if name := string([]rune(after)[:n]); !slices.Contains(out, name) {
					out = append(out, name)
				}
			}
		}
	}
	return out
}

// Introduces reports whether text introduces its speaker by name ("Hello,
// my name is Emily.", "Hi, I'm Gary, nice to meet you", "Hey, Bob here."):
// the name as written (a capital is what tells "I'm Ready" from "I'm
// ready"), right after one of introLeads in any case, one of greetedLeads
// after a greeting (greeted: "Hi, I'm Gary", not "I'm Italian"), or
// opening a clause before "here" and its end (signsOff); and not the first
// part of a longer word or a possessive ("I'm Emily's sister", "I'm
// Emilyanne"). A name written in Chinese is one of IntroducedNames(text)
// ("我叫李明", "你好，我是陈阳").
func Introduces(text, name string) bool {
	if name == "" {
		return false
	}
	if hanName(name) {
		return slices.Contains(IntroducedNames(text), name)
	}
	for off := 0; ; {
		i := strings.Index(text[off:], name)
		if i < 0 {
			return false
		}
		i += off
		off = i + len(name)
		rest := text[i+len(name):]
		if r, _ := utf8.DecodeRuneInString(rest); rest != "" && (unicode.IsLetter(r) || unicode.IsDigit(r)) && !unicode.Is(unicode.Han, r) ||
			strings.HasPrefix(rest, "'s") || strings.HasPrefix(rest, "’s") {
			continue
		}
		before := text[:i]
		if signsOff(before, rest) {
			return true
		}
		for _, lead := range slices.Concat(introLeads, greetedLeads) {
			if len(before) < len(lead) || !strings.EqualFold(before[len(before)-len(lead):], lead) {
				continue
			}
			j := len(before) - len(lead)
			if j > 0 && endsInWord(before[:j]) {
				continue
			}
			if slices.Contains(introLeads, lead) || greeted(before[:j]) {
				return true
			}
		}
	}
}

// greeted reports whether the sentence that s ends holds a greeting
// ("Hi, ", "Good morning everyone, "), or the sentence before it is one
// of at most greetingWords words ("Hello! ").
func greeted(s string) bool {
	holds := func(s string) bool {
		return slices.ContainsFunc(strings.Fields(strings.ToLower(s)), func(w string) bool { return slices.Contains(greetings, wordCore(w)) })
	}
	i := strings.LastIndexAny(s, ".!?")
	if holds(s[i+1:]) {
		return true
	}
	if i < 0 {
		return false
	}
	prev := s[strings.LastIndexAny(s[:i], ".!?")+1 : i]
	return len(strings.Fields(prev)) <= greetingWords && holds(prev)
}

// cjkGreeted reports whether the Chinese sentence that s ends holds a
// greeting (cjkGreetings: "你好，", "大家好！" before it).
func cjkGreeted(s string) bool {
	if i := strings.LastIndexAny(s, "。？！?!."); i >= 0 {
		_, size := utf8.DecodeRuneInString(s[i:])
		if prev := s[:i]; slices.ContainsFunc(cjkGreetings, func(g string) bool { return strings.HasSuffix(strings.TrimRight(prev, " "), g) }) {
			return true // "你好！我是陈阳。"
		}
		s = s[i+size:]
	}
	return slices.ContainsFunc(cjkGreetings, func(g string) bool { return strings.Contains(s, g) })
}

// greetingWords is the most words of a sentence that is a greeting and no
// more ("Hello!", "Hi there!", "Good morning, everyone.").
const greetingWords = 3

// signsOff reports whether a name between before and rest is said as
// "Bob here.": opening the text or a clause ("Hey, Bob here!"), followed
// by "here" and the clause's end ("I met Bob here yesterday" is not).
func signsOff(before, rest string) bool {
	b := strings.TrimRight(before, " ")
	if b != "" && (len(b) == len(before) || !strings.ContainsAny(b[len(b)-1:], ",.!?;:")) {
		return false
	}
	after, ok := strings.CutPrefix(rest, " here")
	if !ok {
		return false
	}
	r, _ := utf8.DecodeRuneInString(after)
	return after == "" || strings.ContainsRune(",.!?;:", r)
}

// endsInWord reports whether s ends in a letter or a digit: a phrase
// that follows it would be the end of a word ("Hi'm").
func endsInWord(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// Alias adds name's terms as terms of speaker s: a query that says the
// name names s (NamedSpeakers), as it would s's own name.
func (st SpeakerTerms) Alias(tok keyword.Tokenizer, name, s string) {
	for _, t := range tok.Tokens(name) {
		if !slices.Contains(st[t], s) {
			st[t] = append(st[t], s)
		}
	}
}

// ByName is NamedSpeakers' speakers for a query that names only askers
// (a chat log's user), by names they gave as theirs (Alias), not by
// their role's: the name stands where "I" or "me" would in the asker's
// own question, and the same rules read it. "What painters did you
// recommend to Emily?" asks about the answerer's words (asksAnswerer),
// as "… recommend to me?" does: it names the answerers. "What did Emily
// and you talk about?" names both sides, as "we" does: nobody in
// particular (nil). A Chinese name reads as 我. Any other query keeps
// named.
func (st SpeakerTerms) ByName(tok keyword.Tokenizer, named, names []string, query string) []string {
	if len(named) == 0 || slices.ContainsFunc(named, func(s string) bool { return !IsAsker(s) }) {
		return named
	}
	if q := asAsker(query, names); q != query {
		// A Chinese name reads as 我: "你给张曼婷推荐过哪些画家？" as
		// "你给我推荐过哪些画家？", and "张曼婷和你聊了什么" names both.
		if strings.Contains(q, "我和你") || strings.Contains(q, "你和我") {
			return nil
		}
		query = q
	}
	words := strings.Fields(strings.ToLower(query))
	for i := 0; i+2 < len(words); i++ {
		a, b := wordCore(words[i]), wordCore(words[i+2])
		if words[i+1] == "and" && (secondPerson[a] && namesAny(b, names) || secondPerson[b] && namesAny(a, names)) {
			return nil
		}
	}
	if !asksAnswerer(query) {
		return named
	}
	if a := st.answerers(tok); len(a) > 0 {
		return a
	}
	return named
}

// asAsker returns query with each of names written in Chinese (hanName)
// replaced by 我.
func asAsker(query string, names []string) string {
	for _, n := range names {
		if hanName(n) {
			query = strings.ReplaceAll(query, n, "我")
		}
	}
	return query
}

// SpaceNames returns query with each of names written in Chinese
// (hanName) set apart by spaces, a word of its own as NamedSpeakers reads
// names: Chinese writes none around a name.
func SpaceNames(query string, names []string) string {
	for _, n := range names {
		if hanName(n) {
			query = strings.ReplaceAll(query, n, " "+n+" ")
		}
	}
	return query
}

// hanName reports whether name is written in Chinese (IntroducedNames'
// names), not in a script with spaces (PersonNames').
func hanName(name string) bool {
	r, _ := utf8.DecodeRuneInString(name)
	return unicode.Is(unicode.Han, r)
}

// namesAny reports whether w (in lower case) is a word of one of names,
// or its possessive.
func namesAny(w string, names []string) bool {
	w = strings.TrimSuffix(w, "'s")
	for _, n := range names {
		if slices.Contains(strings.Fields(strings.ToLower(n)), w) {
			return true
		}
	}
	return false
}
