package ranking

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Names returns the words of query written as names: capitalised ("Mongolia",
// "Whisper"), in capitals ("SWOT") or codes that start with one
// ("NW-20417"), except the first word of a sentence or a line, "I" and its
// contractions, and the words of time references ("On May 2nd", left out as
// WithoutTimeRefs leaves them out, and the names of months and weekdays:
// a memory's time is in its date). Each is
// returned as written, its surrounding punctuation trimmed, once.
//
// A question that names something asks about it: asked of a memory that
// never mentioned it, the answer is not there, however many of the
// question's other words the memory holds ("What is the capital of
// Mongolia?" of a conversation about capital allocation). A script
// without capitals has no names here, and neither has a query of three
// or more words past its sentences' starts none of which is in lower case
// ("WHERE IS MY BADGE?", "What Is My Flight Number?"): its capitals say
// nothing.
func Names(query string) []string {
	var out []string
	seen := map[string]bool{}
	words, lower := 0, 0
	for line := range strings.Lines(WithoutTimeRefs(query)) {
		start := true
		for w := range strings.FieldsSeq(line) {
			core := trimWord(w)
			first, _ := utf8.DecodeRuneInString(core)
			if core != "" && !start && unicode.IsLetter(first) {
				words++
				if unicode.IsLower(first) {
					lower++
				}
			}
			if core != "" && !start && unicode.IsUpper(first) && !isI(core) && !calendarWord(core) && !seen[core] {
				seen[core] = true
				out = append(out, core)
			}
			if core != "" || strings.ContainsAny(w, ".?!:") {
				start = endsSentence(w)
			}
		}
	}
	if words >= 3 && lower == 0 {
		return nil
	}
	return out
}

// calendarWord reports whether w names a month or a day of the week
// ("May", "Sat", "Saturday's").
func calendarWord(w string) bool {
	w = strings.ToLower(w)
	w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
	if _, ok := monthNames[w]; ok {
		return true
	}
	for d := time.Sunday; d <= time.Saturday; d++ {
		if day := strings.ToLower(d.String()); w == day || w == day[:3] || w == day+"s" {
			return true
		}
	}
	return false
}

// isI reports whether w is "I" or one of its contractions ("I'm", "I’ll").
func isI(w string) bool {
	if w == "I" {
		return true
	}
	rest, ok := strings.CutPrefix(w, "I'")
	if !ok {
		rest, ok = strings.CutPrefix(w, "I’")
	}
	return ok && len(rest) <= 2
}

// endsSentence reports whether a word ends a sentence (or opens a new one
// after a colon): the next word is capitalised by rule, not because it is
// a name.
func endsSentence(w string) bool {
	w = strings.TrimRight(w, `"'’”)*_]`)
	return strings.HasSuffix(w, ".") || strings.HasSuffix(w, "?") || strings.HasSuffix(w, "!") || strings.HasSuffix(w, ":") ||
		strings.HasSuffix(w, "。") || strings.HasSuffix(w, "？") || strings.HasSuffix(w, "！")
}
