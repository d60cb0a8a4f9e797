package keyword

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// fold case-folds s (after NFKC normalisation, done once per text) and
// takes the diacritics off its Latin letters (bare): Zürich, ZURICH and
// Zurich are one word, as a question typed on an English keyboard spells
// it, and so are José and Jose, Straße and Strasse.
func fold(s string) string {
	upper := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return bare(strings.ToLower(s))
		}
		upper = upper || 'A' <= c && c <= 'Z'
	}
	if upper {
		return strings.ToLower(s)
	}
	return s
}

// bare returns w with the diacritics of its Latin letters removed (each
// letter decomposed, its combining marks dropped) and the Latin letters
// that do not decompose written as ASCII (ß ss, æ ae, œ oe, ø o, ł l, đ d,
// þ th, ð d); other scripts are kept as they are.
func bare(w string) string {
	var b strings.Builder
	for _, r := range w {
		if r < 0xC0 || r > 0x24F && (r < 0x1E00 || r > 0x1EFF) {
			b.WriteRune(r) // ASCII, or not a Latin letter with marks
			continue
		}
		if s, ok := latinLetters[r]; ok {
			b.WriteString(s)
			continue
		}
		d := norm.NFD.String(string(r))
		base, size := utf8.DecodeRuneInString(d)
		if base < utf8.RuneSelf && strings.IndexFunc(d[size:], func(m rune) bool { return !unicode.Is(unicode.Mn, m) }) < 0 {
			b.WriteRune(base)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// latinLetters are the Latin letters (lower case) that have no
// decomposition, with the ASCII they are written with.
var latinLetters = map[rune]string{'ß': "ss", 'æ': "ae", 'œ': "oe", 'ø': "o", 'ł': "l", 'đ': "d", 'þ': "th", 'ð': "d", 'ı': "i"}

// acronymPlural reports whether raw is an acronym's plural, two or more
// capitals and a lower-case s: KPIs, PDFs, LLMs. The acronym is the word
// (KPIs → kpi, as KPI → kpi), where the stemmer, given "kpis", cannot tell
// it from a word whose s is its own.
func acronymPlural(raw string) bool {
	n := len(raw)
	if n < 3 || raw[n-1] != 's' {
		return false
	}
	for i := 0; i < n-1; i++ {
		if c := raw[i]; c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}
