// Package chunk splits a text (a parent: a round of conversation, a note, a
// document passage) into sentence-sized children for small-to-big retrieval.
//
// Children are cut at semantic punctuation — 。！？；…, line breaks, the ASCII
// ! ? ; where they end a clause, and '.' where it ends a sentence (not inside
// 3.14, v1.2.3, e.g., Mr., U.S., URLs, e-mail addresses or file names like
// main.go). Pieces shorter than [Options.MinRunes] are merged into a
// neighbour; pieces longer than [Options.MaxRunes] are cut, preferably after a
// comma or at a space, always on a rune boundary.
//
// Every [Chunk] satisfies Text == parent[Start:End]; Text has no leading or
// trailing white space and is never empty. Chunks are in order and do not
// overlap, and together they cover every non-space character of the parent.
package chunk

import (
	"unicode"
	"unicode/utf8"
)

// Default sizes used when an [Options] field is zero or negative.
const (
	// DefaultMinRunes: pieces shorter than this ("OK.", "好的。", a heading)
	// carry too little meaning to be embedded alone and are merged.
	DefaultMinRunes = 12
	// DefaultMaxRunes: one or two sentences. Longer pieces are cut so that a
	// child's embedding stays focused on one thing.
	DefaultMaxRunes = 200
)

// A Chunk is one child of a parent text.
type Chunk struct {
	Text       string // the child: Text == parent[Start:End], trimmed of white space
	Start, End int    // byte offsets into the parent
}

// Options tunes [Split]. The zero value (and a nil *Options) means the
// defaults. Sizes count runes of a chunk's Text, white space included.
type Options struct {
	// MinRunes: a shorter piece is merged into a neighbour when the result
	// stays within MaxRunes. For this test only, a Han ideograph, kana or
	// Hangul syllable counts as two runes, since one carries about as much
	// as a short word ("好的。" is short, "原因是事务支持更好！" is not).
	// 0 means DefaultMinRunes; 1 disables merging. Values above MaxRunes
	// are lowered to MaxRunes.
	MinRunes int
	// MaxRunes: no chunk is longer. 0 means DefaultMaxRunes. Values below 2
	// are raised to 2.
	MaxRunes int
}

func (o *Options) sizes() (minRunes, maxRunes int) {
	minRunes, maxRunes = DefaultMinRunes, DefaultMaxRunes
	if o != nil {
		if o.MinRunes > 0 {
			minRunes = o.MinRunes
		}
		if o.MaxRunes > 0 {
			maxRunes = max(o.MaxRunes, 2)
		}
	}
	return min(minRunes, maxRunes), maxRunes
}

// Split returns the children of text, in order. White-space-only text has no
// children (nil). nil opts means the defaults. Invalid UTF-8 is not an
// error: invalid bytes are kept and treated like letters; Split never cuts
// inside a valid UTF-8 sequence. Split is safe for concurrent use.
func Split(text string, opts *Options) []Chunk {
	minRunes, maxRunes := opts.sizes()
	var pieces []Chunk
	for _, p := range sentences(text) {
		pieces = appendCut(pieces, text, p, minRunes, maxRunes)
	}
	return merge(text, pieces, minRunes, maxRunes)
}

// span is a half-open byte range of the parent.
type span struct{ start, end int }

// sentences returns the trimmed, non-empty sentence spans of text.
func sentences(text string) []span {
	var out []span
	start := 0
	emit := func(end int) {
		if s, e, ok := trim(text, start, end); ok {
			out = append(out, span{s, e})
		}
		start = end
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		j := i + size
		switch {
		case isLineBreak(r):
			if r == '\r' && j < len(text) && text[j] == '\n' {
				j++
			}
			emit(j)
		case isStrongStop(r) || isWeakStop(r):
			// Take the whole run of stops and closing quotes/brackets:
			// "?!", "……", "。」", `."`.
			strong, dots := isStrongStop(r), 0
			if r == '.' {
				dots++
			}
			for j < len(text) {
				r2, s2 := utf8.DecodeRuneInString(text[j:])
				if !isStrongStop(r2) && !isWeakStop(r2) && !isCloser(r2) {
					break
				}
				strong = strong || isStrongStop(r2)
				if r2 == '.' {
					dots++
				}
				j += s2
			}
			if strong || endsClause(text, j) && !(dots == 1 && r == '.' && j == i+1 && isAbbrev(text, start, i)) {
				emit(j)
			}
		}
		i = j
	}
	emit(len(text))
	return out
}

// isStrongStop reports a full-width stop that always ends a sentence.
func isStrongStop(r rune) bool {
	switch r {
	case '。', '！', '？', '；', '…', '｡', '．', '‼', '⁇', '⁈', '⁉':
		return true
	}
	return false
}

// isWeakStop reports an ASCII stop that ends a sentence only when followed
// by space, the end of text or a closing quote (see endsClause).
func isWeakStop(r rune) bool { return r == '.' || r == '!' || r == '?' || r == ';' }

func isCloser(r rune) bool {
	switch r {
	case '"', '\'', ')', ']', '}', '”', '’', '）', '】', '」', '』', '》', '〉', '〕', '〗', '〙':
		return true
	}
	return false
}

func isLineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

// endsClause reports whether an ASCII stop run ending at byte j ends a
// clause: it is followed by the end of text, white space, or a letter of a
// script written without spaces (Chinese, Japanese), as in "好了.然后".
// "3.14", "main.go", "a.b@c.d", "x?y=1" and "a;b" do not end a clause.
func endsClause(text string, j int) bool {
	if j >= len(text) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(text[j:])
	return unicode.IsSpace(r) || unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
}

// abbrevs are words that end with '.' without ending a sentence (lower case,
// without the dot). "etc." and "Inc." are left out on purpose: they end a
// sentence about as often as not, and a wrong split only makes two chunks.
var abbrevs = map[string]bool{
	"mr": true, "mrs": true, "ms": true, "dr": true, "prof": true, "sr": true,
	"jr": true, "st": true, "vs": true, "cf": true, "fig": true, "no": true,
	"vol": true, "approx": true, "dept": true, "gen": true, "col": true,
	"lt": true, "sgt": true, "capt": true, "rev": true, "hon": true,
	"jan": true, "feb": true, "mar": true, "apr": true, "jun": true, "jul": true,
	"aug": true, "sep": true, "sept": true, "oct": true, "nov": true, "dec": true,
	"al": true, "ca": true, "eg": true, "ie": true, "viz": true,
}

// isAbbrev reports whether the '.' at byte dot closes an abbreviation rather
// than a sentence: a known abbreviation (Mr., Dr., vs.), dotted initials
// (e.g., i.e., U.S., a.m., Ph.D.), a single capital initial (J. Smith), or
// a list number at the start of a line ("1. First").
func isAbbrev(text string, lineStart, dot int) bool {
	// The word before the dot runs back to white space or the piece start.
	ws := dot
	for ws > lineStart {
		r, size := utf8.DecodeLastRuneInString(text[lineStart:ws])
		if unicode.IsSpace(r) || r == '(' || r == '"' || r == '“' {
			break
		}
		ws -= size
	}
	word := text[ws:dot]
	if word == "" {
		return false
	}
	if abbrevs[asciiLower(word)] {
		return true
	}
	// Dotted initials: letters in groups of at most two, separated by dots.
	if dotted(word) {
		return true
	}
	if r, size := utf8.DecodeRuneInString(word); size == len(word) && unicode.IsUpper(r) {
		return true
	}
	// "1." opening a list item: only white space since the piece start.
	if len(word) <= 3 && allDigits(word) {
		for _, r := range text[lineStart:ws] {
			if !unicode.IsSpace(r) {
				return false
			}
		}
		return true
	}
	return false
}

func dotted(word string) bool {
	groups, n := 0, 0
	for _, r := range word {
		switch {
		case r == '.':
			if n == 0 {
				return false
			}
			groups++
			n = 0
		case unicode.IsLetter(r):
			n++
			if n > 2 {
				return false
			}
		default:
			return false
		}
	}
	return groups >= 1 && n > 0
}

func asciiLower(s string) string {
	if len(s) > 8 {
		return ""
	}
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// trim narrows [start, end) to its non-space content.
func trim(text string, start, end int) (int, int, bool) {
	for start < end {
		r, size := utf8.DecodeRuneInString(text[start:end])
		if !isSpace(r, size) {
			break
		}
		start += size
	}
	for end > start {
		r, size := utf8.DecodeLastRuneInString(text[start:end])
		if !isSpace(r, size) {
			break
		}
		end -= size
	}
	return start, end, start < end
}

// isSpace is unicode.IsSpace, except that an invalid byte (RuneError of
// size 1) is content, never space.
func isSpace(r rune, size int) bool {
	return size > 0 && !(r == utf8.RuneError && size == 1) && unicode.IsSpace(r)
}

// appendCut appends p to out, cut into pieces of at most maxRunes runes.
func appendCut(out []Chunk, text string, p span, minRunes, maxRunes int) []Chunk {
	for {
		if utf8.RuneCountInString(text[p.start:p.end]) <= maxRunes {
			return append(out, Chunk{Text: text[p.start:p.end], Start: p.start, End: p.end})
		}
		cut := cutPoint(text, p, minRunes, maxRunes)
		if s, e, ok := trim(text, p.start, cut); ok {
			out = append(out, Chunk{Text: text[s:e], Start: s, End: e})
		}
		s, e, ok := trim(text, cut, p.end)
		if !ok {
			return out
		}
		p = span{s, e}
	}
}

// cutPoint returns where to cut a piece longer than maxRunes: after the last
// comma-like rune, else at the last space, in the second half of the first
// maxRunes runes; else right after rune maxRunes, moved back so that a
// combining mark or joiner stays with its base.
func cutPoint(text string, p span, minRunes, maxRunes int) int {
	lo := max(maxRunes/2, minRunes)
	comma, space, hard := -1, -1, p.end
	n := 0
	for i := p.start; i < p.end; {
		if n == maxRunes {
			hard = i
			// A space right at the limit is a clean cut too.
			if r, size := utf8.DecodeRuneInString(text[i:]); isSpace(r, size) {
				space = i
			}
			break
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		n++
		if n >= lo {
			switch {
			case isComma(r):
				comma = i + size
			case isSpace(r, size):
				space = i
			}
		}
		i += size
	}
	switch {
	case comma > p.start:
		return comma
	case space > p.start:
		return space
	}
	for hard > p.start {
		r, _ := utf8.DecodeRuneInString(text[hard:])
		if !(unicode.In(r, unicode.Mn, unicode.Me) || r == 0x200D || unicode.Is(unicode.Variation_Selector, r)) {
			break
		}
		_, size := utf8.DecodeLastRuneInString(text[p.start:hard])
		hard -= size
	}
	if hard == p.start { // a piece made only of combining marks: cut anyway
		_, size := utf8.DecodeRuneInString(text[p.start:])
		hard = p.start + size
	}
	return hard
}

func isComma(r rune) bool {
	switch r {
	case ',', '，', '、', ':', '：', '﹐', '﹑', '､', '—', '–':
		return true
	}
	return false
}

// merge joins pieces shorter than minRunes with a neighbour, as long as the
// joined chunk (parent[start:end], separators included) has at most maxRunes
// runes. A short piece joins the chunk before it; a short first piece (a
// heading, a greeting) takes the pieces after it.
func merge(text string, pieces []Chunk, minRunes, maxRunes int) []Chunk {
	if len(pieces) == 0 {
		return nil
	}
	out := pieces[:1]
	for _, p := range pieces[1:] {
		last := &out[len(out)-1]
		short := weight(last.Text) < minRunes || weight(p.Text) < minRunes
		if short && utf8.RuneCountInString(text[last.Start:p.End]) <= maxRunes {
			last.End = p.End
			last.Text = text[last.Start:last.End]
			continue
		}
		out = append(out, p)
	}
	return out
}

// weight counts the runes of s, a CJK ideograph, kana or Hangul syllable as
// two (see Options.MinRunes).
func weight(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x1100 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			n++
		}
	}
	return n
}
