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
//
// Splitting takes time linear in the length of the text (one pass, plus at
// most a few visits of each rune while cutting over-long pieces).
// [SplitContext] refuses texts longer than [Options.MaxBytes] (default
// [DefaultMaxBytes]) with an error wrapping [ErrTooLarge] before doing any
// work, and stops with the context's error when the context is done.
package chunk

import (
	"context"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/agentmem/agentmem/internal/errs"
)

// Default sizes used when an [Options] field is zero or negative.
const (
	// DefaultMinRunes: pieces shorter than this ("OK.", "好的。", a heading)
	// carry too little meaning to be embedded alone and are merged.
	DefaultMinRunes = 12
	// DefaultMaxRunes: one or two sentences. Longer pieces are cut so that a
	// child's embedding stays focused on one thing.
	DefaultMaxRunes = 200
	// DefaultMaxBytes is the largest text [SplitContext] accepts when
	// [Options.MaxBytes] is zero: 1 MiB, a long document chapter (about
	// 5,000 children of default size). A larger text is almost always a
	// mistake (a binary file, a whole log) and is better split by the caller
	// into documents of its own.
	DefaultMaxBytes = 1 << 20
)

// ErrTooLarge is wrapped by the error [SplitContext] returns for a text
// longer than [Options.MaxBytes]. It is the agentmem-wide sentinel for an
// input over a documented size limit (vdb and embed match it too).
var ErrTooLarge = errs.TooLarge

// A Chunk is one child of a parent text.
type Chunk struct {
	Text       string // the child: Text == parent[Start:End], trimmed of white space
	Start, End int    // byte offsets into the parent
}

// Options tunes [Split] and [SplitContext]. The zero value (and a nil
// *Options) means the defaults. Sizes count runes of a chunk's Text, white
// space included.
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
	// MaxBytes: [SplitContext] returns an error wrapping [ErrTooLarge] for a
	// longer text (in bytes), before any work. 0 means DefaultMaxBytes; a
	// negative value means no limit. [Split] ignores it.
	MaxBytes int
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

// maxBytes returns the size limit, or -1 for none.
func (o *Options) maxBytes() int {
	switch {
	case o == nil || o.MaxBytes == 0:
		return DefaultMaxBytes
	case o.MaxBytes < 0:
		return -1
	}
	return o.MaxBytes
}

// SplitContext returns the children of text, in order, like [Split], but
// refuses a text longer than opts.MaxBytes (default [DefaultMaxBytes]) with
// an error wrapping [ErrTooLarge], and returns ctx.Err() (and no chunks) as
// soon as ctx is done: the context is checked before any work and then
// every few tens of kilobytes. SplitContext is safe for concurrent use.
func SplitContext(ctx context.Context, text string, opts *Options) ([]Chunk, error) {
	if limit := opts.maxBytes(); limit >= 0 && len(text) > limit {
		return nil, fmt.Errorf("chunk: text of %d bytes exceeds the limit of %d bytes (Options.MaxBytes): %w",
			len(text), limit, ErrTooLarge)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := newSplitter(ctx, text, opts)
	out := s.split()
	if s.err != nil {
		return nil, s.err
	}
	return out, nil
}

// Split returns the children of text, in order. White-space-only text has no
// children (nil). nil opts means the defaults. Invalid UTF-8 is not an
// error: invalid bytes are kept and treated like letters; Split never cuts
// inside a valid UTF-8 sequence. Split is safe for concurrent use.
//
// Split applies no size limit and cannot be cancelled; its time is linear
// in len(text). Code that takes text from users should call [SplitContext].
func Split(text string, opts *Options) []Chunk {
	return newSplitter(nil, text, opts).split()
}

// checkEvery is how many units of work (runes visited) pass between two
// checks of the context: about 64 KiB of text, well under a millisecond.
const checkEvery = 1 << 16

// A splitter holds one call's state. work counts the runes visited by every
// loop (each loop over text adds one per rune it decodes); it paces the
// context checks and lets the tests verify that the work is linear.
type splitter struct {
	ctx                context.Context // nil: never done
	text               string
	minRunes, maxRunes int
	work, nextCheck    int
	err                error
}

func newSplitter(ctx context.Context, text string, opts *Options) *splitter {
	minRunes, maxRunes := opts.sizes()
	return &splitter{ctx: ctx, text: text, minRunes: minRunes, maxRunes: maxRunes, nextCheck: checkEvery}
}

// stopped reports whether the call must stop: the context is checked once
// every checkEvery units of work.
func (s *splitter) stopped() bool {
	if s.err == nil && s.ctx != nil && s.work >= s.nextCheck {
		s.nextCheck = s.work + checkEvery
		s.err = s.ctx.Err()
	}
	return s.err != nil
}

// piece is a trimmed chunk candidate with its rune count and merge weight
// (see Options.MinRunes), counted once.
type piece struct {
	start, end    int
	runes, weight int
}

func (s *splitter) split() []Chunk {
	var pieces []piece
	for _, p := range s.sentences() {
		if pieces = s.appendCut(pieces, p); s.stopped() {
			return nil
		}
	}
	return s.merge(pieces)
}

// span is a half-open byte range of the parent.
type span struct{ start, end int }

// sentences returns the trimmed, non-empty sentence spans of text.
func (s *splitter) sentences() []span {
	text := s.text
	var out []span
	start := 0
	emit := func(end int) {
		if st, e, ok := s.trim(start, end); ok {
			out = append(out, span{st, e})
		}
		start = end
	}
	for i := 0; i < len(text); {
		// A run of ASCII that is neither a line break nor a stop (most
		// of a text) changes nothing below: skipped, one unit of work a
		// byte as for any rune.
		k := i
		for k < len(text) && text[k] < utf8.RuneSelf && !asciiBreak[text[k]] {
			k++
		}
		s.work += k - i
		i = k
		if s.stopped() {
			return nil
		}
		if i == len(text) {
			break
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		s.work++
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
				s.work++
				if !isStrongStop(r2) && !isWeakStop(r2) && !isCloser(r2) {
					break
				}
				strong = strong || isStrongStop(r2)
				if r2 == '.' {
					dots++
				}
				j += s2
			}
			if strong || endsClause(text, j) && !(dots == 1 && r == '.' && j == i+1 && s.isAbbrev(start, i)) {
				emit(j)
			}
		}
		i = j
	}
	emit(len(text))
	return out
}

// asciiBreak marks the ASCII runes sentences looks at: line breaks
// (isLineBreak) and stops (isWeakStop; every strong stop is beyond ASCII).
var asciiBreak = func() (t [utf8.RuneSelf]bool) {
	for r := range rune(utf8.RuneSelf) {
		t[r] = isLineBreak(r) || isWeakStop(r) || isStrongStop(r)
	}
	return t
}()

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

// maxWordBytes bounds the word isAbbrev looks at: no abbreviation, run of
// initials or list number is longer, and the bound keeps a long run of
// dotted text ("中.中.中.…") from being walked again at every dot.
const maxWordBytes = 32

// isAbbrev reports whether the '.' at byte dot closes an abbreviation rather
// than a sentence: a known abbreviation (Mr., Dr., vs.), dotted initials
// (e.g., i.e., U.S., a.m., Ph.D.), a single capital initial (J. Smith), or
// a list number at the start of a line ("1. First").
func (s *splitter) isAbbrev(lineStart, dot int) bool {
	text := s.text
	// The word before the dot runs back to white space or the piece start.
	ws := dot
	for ws > lineStart {
		if dot-ws > maxWordBytes {
			return false
		}
		r, size := utf8.DecodeLastRuneInString(text[lineStart:ws])
		s.work++
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
			s.work++
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
func (s *splitter) trim(start, end int) (int, int, bool) {
	text := s.text
	for start < end {
		r, size := utf8.DecodeRuneInString(text[start:end])
		s.work++
		if !isSpace(r, size) {
			break
		}
		start += size
	}
	for end > start {
		r, size := utf8.DecodeLastRuneInString(text[start:end])
		s.work++
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
// Each round looks at no more than maxRunes+1 runes and consumes at least
// a quarter of them (see cutPoint), so the work is linear in the length of p.
func (s *splitter) appendCut(out []piece, p span) []piece {
	for {
		cut, fits := s.cutPoint(p)
		if fits {
			return s.appendPiece(out, p.start, p.end)
		}
		if st, e, ok := s.trim(p.start, cut); ok {
			out = s.appendPiece(out, st, e)
		}
		st, e, ok := s.trim(cut, p.end)
		if !ok || s.stopped() {
			return out
		}
		p = span{st, e}
	}
}

// appendPiece counts the runes and weight of text[start:end] (trimmed) and
// appends it.
func (s *splitter) appendPiece(out []piece, start, end int) []piece {
	n, w := 0, 0
	for _, r := range s.text[start:end] {
		n++
		if r < utf8.RuneSelf {
			w++ // runeWeight of ASCII
			continue
		}
		w += runeWeight(r)
	}
	s.work += n
	return append(out, piece{start: start, end: end, runes: n, weight: w})
}

// cutPoint reports whether p has at most maxRunes runes (fits) and, when it
// has not, where to cut it: after the last comma-like rune, else at the last
// space, in the second half of the first maxRunes runes; else right after
// rune maxRunes, moved back so that a combining mark or joiner stays with its
// base (unless the first maxRunes runes are all marks and joiners: then the
// cut stays after rune maxRunes).
func (s *splitter) cutPoint(p span) (cut int, fits bool) {
	text := s.text
	lo := max(s.maxRunes/2, s.minRunes)
	comma, space, hard := -1, -1, p.end
	n := 0
	for i := p.start; i < p.end; {
		if n == s.maxRunes {
			hard = i
			// A space right at the limit is a clean cut too.
			if r, size := utf8.DecodeRuneInString(text[i:]); isSpace(r, size) {
				space = i
			}
			break
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		s.work++
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
	case hard == p.end:
		return p.end, true
	case comma > p.start:
		return comma, false
	case space > p.start:
		return space, false
	}
	at := hard
	for at > p.start {
		r, _ := utf8.DecodeRuneInString(text[at:])
		s.work++
		if !(unicode.In(r, unicode.Mn, unicode.Me) || r == 0x200D || unicode.Is(unicode.Variation_Selector, r)) {
			return at, false
		}
		_, size := utf8.DecodeLastRuneInString(text[p.start:at])
		at -= size
	}
	// Only marks and joiners after the piece's first rune: no base to keep
	// them with, cut at the limit.
	return hard, false
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
// heading, a greeting) takes the pieces after it. Rune counts and weights
// are carried along, so each piece and separator is counted once.
func (s *splitter) merge(pieces []piece) []Chunk {
	if len(pieces) == 0 {
		return nil
	}
	out := make([]Chunk, 0, len(pieces))
	last := pieces[0]
	for _, p := range pieces[1:] {
		if s.stopped() {
			return nil
		}
		if last.weight < s.minRunes || p.weight < s.minRunes {
			// The separator is white space: each rune weighs one.
			sep := utf8.RuneCountInString(s.text[last.end:p.start])
			s.work += sep
			if n := last.runes + sep + p.runes; n <= s.maxRunes {
				last = piece{start: last.start, end: p.end, runes: n, weight: last.weight + sep + p.weight}
				continue
			}
		}
		out = append(out, Chunk{Text: s.text[last.start:last.end], Start: last.start, End: last.end})
		last = p
	}
	return append(out, Chunk{Text: s.text[last.start:last.end], Start: last.start, End: last.end})
}

// runeWeight is 2 for a CJK ideograph, kana or Hangul syllable, else 1 (see
// Options.MinRunes).
func runeWeight(r rune) int {
	if r >= 0x1100 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
		return 2
	}
	return 1
}
