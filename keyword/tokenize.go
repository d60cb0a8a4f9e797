package keyword

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// A Tokenizer turns text into index terms. The same Tokenizer must be used
// for documents and queries. Implementations must be safe for concurrent
// use by multiple goroutines.
type Tokenizer interface {
	// Tokens returns the terms of text in order, repeats included; text
	// without letters or digits has none.
	Tokens(text string) []string
}

// CJKMode says how runs of Chinese characters are cut into terms.
type CJKMode int

const (
	// Bigrams cuts Chinese into overlapping character pairs and single
	// characters (数据库 → 数, 据, 数据, 库, 据库); stop words are not kept
	// alone. No dictionary, no load time. It is the default: on our
	// Chinese sample it retrieves as well as Segmenter or better, at a
	// fraction of the cost (see the package doc).
	Bigrams CJKMode = iota
	// Segmenter cuts Chinese with the gse dictionary segmenter in search
	// mode: words plus the dictionary words inside them
	// (数据库迁移 → 数据, 据库, 数据库, 迁移). The simplified-Chinese
	// dictionary is loaded once per process, on first use, and shared; it
	// takes seconds and over 100 MB of heap (see [Preload]).
	Segmenter
)

// String returns "segmenter" or "bigrams".
func (m CJKMode) String() string {
	switch m {
	case Segmenter:
		return "segmenter"
	case Bigrams:
		return "bigrams"
	}
	return fmt.Sprintf("CJKMode(%d)", int(m))
}

// A TokenizerOption configures [NewTokenizer].
type TokenizerOption func(*tokenizer) error

// WithCJK sets how Chinese is cut; the default is [Bigrams]. Japanese
// (any run containing kana) and Korean (Hangul) are always cut into
// bigrams. [Segmenter] needs a registered segmenter (import
// github.com/agentmem/agentmem/keyword/gse); without one it is an error
// wrapping errors.ErrUnsupported.
func WithCJK(mode CJKMode) TokenizerOption {
	return func(t *tokenizer) error {
		if mode != Segmenter && mode != Bigrams {
			return fmt.Errorf("keyword: unknown CJK mode %d (want Segmenter or Bigrams)", int(mode))
		}
		if mode == Segmenter && !segmenterRegistered() {
			return fmt.Errorf("keyword: Segmenter mode needs a segmenter: import _ \"github.com/agentmem/agentmem/keyword/gse\": %w", errors.ErrUnsupported)
		}
		t.cjk = mode
		return nil
	}
}

// WithStopWords replaces the default stop words ([DefaultStopWords]).
// Words are case-folded; WithStopWords() with no words keeps every term.
// Stop words drop single words only: a compound such as "to-do" is kept
// whole, although its part "to" is dropped.
func WithStopWords(words ...string) TokenizerOption {
	return func(t *tokenizer) error {
		t.stop = make(map[string]bool, len(words))
		for _, w := range words {
			t.stop[fold(w)] = true
		}
		return nil
	}
}

// DefaultStopWords is a deliberately small list: English words, and
// Chinese particles that stand alone as segmenter words or single
// characters, so common that they only slow the index down. BM25's idf
// already gives frequent terms little weight, so the list stays short.
// (Chinese bigrams never match it.)
var DefaultStopWords = []string{
	"a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in",
	"into", "is", "it", "of", "on", "or", "so", "such", "that", "the", "their",
	"then", "there", "these", "they", "this", "to", "was", "were", "will", "with",
	"的", "了", "是", "吗", "呢", "吧", "啊",
}

// MaxTermBytes is the longest term kept. A longer word (a base64 blob, a
// long URL) is not indexed whole, only by its parts.
const MaxTermBytes = 128

type tokenizer struct {
	cjk  CJKMode
	stop map[string]bool
	stem Stemming
	// words holds *wordTable: memos of plain words (words.go).
	words sync.Pool
}

// NewTokenizer returns the tokenizer the keyword index is built for.
//
// Text is NFKC-normalised (full-width Ｅ１２３４ becomes E1234) and
// case-folded. Words of letters and digits become terms; single Latin
// letters and stop words are dropped; English words are stemmed with
// Snowball (meetings → meet, queries → queri; see [WithStemming]).
// Identifiers are kept whole and split:
//
//	ERR_CONN_RESET   → err_conn_reset, err, conn, reset
//	getUserName      → getusername, get, user, name
//	E1234, LH401     → e1234, 1234; lh401, lh, 401
//	LH 401           → lh, 401, lh401 (a short upper-case word + a number)
//	v1.2.3           → v1.2.3, v1, 1, 2, 3, 1.2.3
//	138-0013-8000    → 138-0013-8000, 138, 0013, 8000, 13800138000
//	138 0013 8000    → 138, 0013, 8000 and the joined runs 1380013, 13800138000, 00138000
//	1,000,000        → 1,000,000, 1, 000, 000, 1000000
//	user@example.com → user@example.com, user, example.com, example, com
//
// Chinese is cut as [WithCJK] says (bigrams by default); Japanese, Korean
// and the scripts of Thai, Lao, Khmer and Burmese into bigrams.
// The returned Tokenizer is safe for concurrent use by multiple goroutines.
func NewTokenizer(opts ...TokenizerOption) (Tokenizer, error) {
	t := &tokenizer{cjk: Bigrams}
	t.stop = make(map[string]bool, len(DefaultStopWords))
	for _, w := range DefaultStopWords {
		t.stop[w] = true
	}
	for _, o := range opts {
		if err := o(t); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// tokenizerVersion changes whenever Tokens changes its output for some
// text, so that snapshots made by an older tokenizer are refused.
const tokenizerVersion = 10

// Name identifies the tokenizer's behaviour; an index snapshot records it so
// that a snapshot is never read with a tokenizer that cuts differently.
func (t *tokenizer) Name() string {
	stop := make([]string, 0, len(t.stop))
	for w := range t.stop {
		stop = append(stop, w)
	}
	slices.Sort(stop)
	return fmt.Sprintf("agentmem-keyword/%d cjk=%s stop=%d:%08x stem=%s", tokenizerVersion, t.cjk, len(stop), crc(strings.Join(stop, " ")), t.stem)
}

// Preload loads the Chinese dictionary used by [Segmenter] mode now rather
// than on the first Chinese text: call it (perhaps in a goroutine) at
// start-up to keep that cost off the first search. Only Segmenter mode
// needs it; without a registered segmenter (see [RegisterSegmenter]) it
// does nothing. It is safe to call more than once and from several
// goroutines.
func Preload() error {
	if !segmenterRegistered() {
		return nil
	}
	_, err := segmenter()
	return err
}

// Tokens implements [Tokenizer].
func (t *tokenizer) Tokens(text string) []string {
	out, _ := t.analyzeTerms(text, false)
	return out
}

// TokensEach returns tok.Tokens of each of texts. The package's tokenizer
// analyses them with one memo of words (the one a long text gets), which a
// short text alone does not take: for the sentences of a few records it is
// about twice as fast as a Tokens call for each.
func TokensEach(tok Tokenizer, texts []string) [][]string {
	out := make([][]string, len(texts))
	t, ok := tok.(*tokenizer)
	if !ok {
		for i, text := range texts {
			out[i] = tok.Tokens(text)
		}
		return out
	}
	size := 0
	for _, text := range texts {
		size += len(text)
	}
	var tab *wordTable
	if size >= wordTableMinText {
		tab = t.table()
		defer t.putTable(tab)
	}
	for i, text := range texts {
		out[i], _ = t.analyzeTab(text, false, tab)
	}
	return out
}

// termMeta says where a term came from: terms of one group are forms of one
// word or code (LH401: lh401 whole, lh and 401 parts). [Index.Search] lets a
// group count once, so that the parts of a code never outweigh its whole.
type termMeta struct {
	group int32
	part  bool
}

// analyze returns the terms of text and, parallel to them, their groups.
func (t *tokenizer) analyze(text string) ([]string, []termMeta) {
	return t.analyzeTerms(text, true)
}

// analyzeTerms is analyze; without withMeta, the groups are not kept (and
// nil is returned for them).
func (t *tokenizer) analyzeTerms(text string, withMeta bool) ([]string, []termMeta) {
	return t.analyzeWith(text, withMeta, len(text) >= wordTableMinText)
}

// analyzeWith is analyzeTerms, with a word table if memo is set.
func (t *tokenizer) analyzeWith(text string, withMeta, memo bool) ([]string, []termMeta) {
	var tab *wordTable
	if memo {
		tab = t.table()
		defer t.putTable(tab)
	}
	return t.analyzeTab(text, withMeta, tab)
}

// analyzeTab is analyzeWith with the word table tab (nil: none).
func (t *tokenizer) analyzeTab(text string, withMeta bool, tab *wordTable) ([]string, []termMeta) {
	if !isASCII(text) {
		text = norm.NFKC.String(text)
	}
	n := len(text)/5 + 1
	e := emitter{t: t, out: make([]string, 0, n), noMeta: !withMeta, tab: tab}
	if withMeta {
		e.meta = make([]termMeta, 0, n)
	}
	i := 0
	for i < len(text) {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		switch c := class(r, size); c {
		case clWord:
			j := wordEnd(text, i)
			e.word(text, i, j)
			i = j
		case clHan, clKana, clHangul, clSEA:
			// A run of one script; Han and kana mix in Japanese.
			j, kana := i, false
			for j < len(text) {
				r2, s2 := utf8.DecodeRuneInString(text[j:])
				c2 := class(r2, s2)
				hanKana := (c == clHan || c == clKana) && (c2 == clHan || c2 == clKana)
				if c2 != c && !hanKana {
					break
				}
				kana = kana || c2 == clKana
				j += s2
			}
			e.cjk(text[i:j], c == clHangul || c == clSEA || kana)
			i = j
		default:
			i += size
		}
	}
	if len(e.out) == 0 {
		return nil, nil
	}
	return e.out, e.meta
}

type charClass uint8

const (
	clOther charClass = iota
	clWord
	clConnector
	clHan
	clKana
	clHangul
	clSEA // Thai, Lao, Khmer, Myanmar
)

// asciiClass is class of each ASCII character: letters and digits are
// word characters, _ - . @ / : ' \ connectors.
var asciiClass = func() (t [utf8.RuneSelf]charClass) {
	for r := range rune(utf8.RuneSelf) {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
			t[r] = clWord
		case r == '_' || r == '-' || r == '.' || r == '@' || r == '/' || r == ':' || r == '\'' || r == '\\':
			t[r] = clConnector
		}
	}
	return t
}()

func class(r rune, size int) charClass {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	switch {
	case r == utf8.RuneError && size == 1:
		return clOther
	case unicode.Is(unicode.Han, r) || r == '々' || r == '〇':
		return clHan
	case unicode.In(r, unicode.Hiragana, unicode.Katakana) || r == 'ー':
		return clKana
	case unicode.Is(unicode.Hangul, r):
		return clHangul
	case unicode.In(r, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar):
		// Written without spaces between words, like Chinese: bigrams.
		return clSEA
	case r == '’':
		return clConnector
	case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc):
		return clWord
	}
	return clOther
}

// wordEnd returns the end of the compound starting at i: word characters,
// and connectors that sit between word characters.
func wordEnd(text string, i int) int {
	end := i
	for j := i; j < len(text); {
		// ASCII letters and digits, the most of any word, one byte at a time.
		for j < len(text) && text[j] < utf8.RuneSelf && asciiClass[text[j]] == clWord {
			j++
			end = j
		}
		if j == len(text) {
			break
		}
		r, size := rune(text[j]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[j:])
		}
		switch class(r, size) {
		case clWord:
			j += size
			end = j
		case clConnector:
			j += size
		default:
			// A comma between digits joins a number: 1,000,000.
			if r == ',' && j > i && isDigit(text[j-1]) && j+1 < len(text) && isDigit(text[j+1]) {
				j++
				continue
			}
			return end
		}
	}
	return end
}

// emitter collects the terms of one text and remembers the previous word
// for joins across a space (LH 401, 138 0013 8000).
type emitter struct {
	t       *tokenizer
	out     []string
	meta    []termMeta // parallel to out
	group   int32      // group of the terms being added
	part    bool       // role of the terms being added
	noMeta  bool       // meta is not kept (Tokens)
	tab     *wordTable // memo of plain words, or nil (a short text)
	prevEnd int        // end of the previous word; -1 after CJK text

	letters      string // the previous word if code-like letters (LH)
	lettersStart int    // where its terms start in out
	lettersGroup int32

	digits   []string // the current run of digit groups (138 0013 8000)
	runStart int      // where the run's terms start in out
	runGroup int32
}

// add adds a whole form (or, when e.part is set, a part) of the current
// group.
func (e *emitter) add(term string) {
	if term == "" || len(term) > MaxTermBytes {
		return
	}
	e.out = append(e.out, term)
	if !e.noMeta {
		e.meta = append(e.meta, termMeta{group: e.group, part: e.part})
	}
}

// addWord adds a word or a part of one, unless it is a lone Latin letter
// or a stop word.
func (e *emitter) addWord(term string, part bool) {
	if len(term) == 1 && !isDigit(term[0]) || e.t.stop[term] {
		return
	}
	e.part = part
	e.add(e.t.stemWord(term))
	e.part = false
}

// plural reduces an English plural to its singular with the three rules of
// Harman's "S" stemmer (1991): -ies → -y, -es → -e, -s → -, except after
// e, a, o (-ees, -aes, -oes) and in -ss and -us. Only lower-case ASCII
// words of four letters or more are touched, so codes and short words stay
// as written.
func plural(w string) string {
	if len(w) < 4 || w[len(w)-1] != 's' {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
	}
	switch {
	case strings.HasSuffix(w, "ies") && !strings.HasSuffix(w, "eies") && !strings.HasSuffix(w, "aies"):
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "es") && !strings.HasSuffix(w, "aes") && !strings.HasSuffix(w, "ees") && !strings.HasSuffix(w, "oes"):
		return w[:len(w)-1]
	case strings.HasSuffix(w, "ss") || strings.HasSuffix(w, "us"):
		return w
	}
	return w[:len(w)-1]
}

// addPart adds a part of the current word (see addWord).
func (e *emitter) addPart(term string) { e.addWord(term, true) }

// addSolo adds a term that is a group of its own.
func (e *emitter) addSolo(term string) {
	e.group++
	e.add(term)
}

// regroup makes every term from out[start:] a part of group g, and g the
// current group: LH and 401 become parts of "LH 401", whose whole is lh401.
func (e *emitter) regroup(start int, g int32) {
	for i := start; i < len(e.meta); i++ {
		e.meta[i] = termMeta{group: g, part: true}
	}
	e.group = g
}

func (e *emitter) cjk(run string, bigramsOnly bool) {
	e.prevEnd, e.letters, e.digits = -1, "", nil
	if !bigramsOnly && e.t.cjk == Segmenter {
		if seg, err := segmenter(); err == nil {
			for _, w := range seg.CutSearch(run, true) {
				if w = strings.TrimSpace(w); w != "" && !e.t.stop[w] {
					e.addSolo(w)
				}
			}
			return
		}
	}
	// Bigrams, and each Chinese character (kanji) alone unless it is a
	// stop word: single characters let 猫 match 橘猫 and cost little, since
	// their idf is low wherever they are common. A lone kana or Hangul
	// syllable is kept only when it is the whole run.
	prev, n := 0, 0
	for k, r := range run {
		size := utf8.RuneLen(r)
		if unicode.Is(unicode.Han, r) && !e.t.stop[run[k:k+size]] {
			e.addSolo(run[k : k+size])
		}
		if n > 0 {
			e.addSolo(run[prev : k+size])
		}
		prev = k
		n++
	}
	if n == 1 && !unicode.Is(unicode.Han, []rune(run)[0]) {
		e.addSolo(run)
	}
}

func (e *emitter) word(text string, i, j int) {
	raw := text[i:j]
	// A possessive is the word itself: Caroline's → caroline.
	if n := len(raw); n > 2 && (raw[n-1] == 's' || raw[n-1] == 'S') {
		if raw[n-2] == '\'' {
			raw = raw[:n-2]
		} else if n > 4 && raw[n-4:n-1] == "’" {
			raw = raw[:n-4]
		}
	}
	if acronymPlural(raw) {
		raw = raw[:len(raw)-1]
	}
	if e.tab != nil && plainWord(raw) {
		// What the general path below does for such a word, memoised.
		e.prevEnd = j
		e.group++
		if term, ok := e.t.plainTerm(e.tab, raw); ok {
			e.add(term)
		}
		e.digits = e.digits[:0]
		e.letters = ""
		return
	}
	w := fold(raw)
	gapOK := e.prevEnd >= 0 && joinable(text[e.prevEnd:i])
	e.prevEnd = j
	e.group++
	wordStart := len(e.out)

	// The atoms of a compound (LH-401: lh, 401); a word without connectors
	// (most) is its own single atom, with no slice to allocate.
	var atoms []string
	single := !hasConnector(raw)
	if !single {
		atoms = strings.FieldsFunc(raw, isConn)
		single = len(atoms) == 1
	}
	var digitGroup string // w as one digit group: 401, 13800138000
	if single {
		e.addWord(w, false)
		e.addSubParts(raw)
		if allDigits(w) {
			digitGroup = w
		}
	} else {
		e.add(w)
		// Sub-compounds between @ / : \ — example.com in user@example.com.
		for _, sc := range strings.FieldsFunc(w, func(r rune) bool { return strings.ContainsRune("@/:\\", r) }) {
			sc = strings.Trim(sc, "_-.'’")
			if sc != w && strings.ContainsAny(sc, "_-.'’") {
				e.addPart(sc)
			}
		}
		joined, digitsOnly, hasDigit, hyphens, letters := "", true, false, true, true
		for _, a := range atoms {
			fa := fold(a)
			e.addPart(fa)
			letters = letters && len(fa) == 1 // with w's check below: a, b, … z
			e.addSubParts(a)
			joined += fa
			digitsOnly = digitsOnly && allDigits(fa)
			hasDigit = hasDigit || strings.ContainsAny(fa, "0123456789")
		}
		for _, r := range w {
			if class(r, 1) == clConnector && r != '-' && r != '_' {
				hyphens = false
			}
		}
		if hasDigit && hyphens {
			e.add(joined) // 138-0013-8000 → 13800138000, LH-401 → lh401
		}
		if letters && strings.Trim(w, "abcdefghijklmnopqrstuvwxyz.") == "" && joined != "am" && joined != "pm" {
			// U.S. → us, as US: an acronym written with dots (not a.m. and
			// p.m., times whose letters joined are other words).
			e.addPart(joined)
		}
		if digitsOnly && hyphens {
			digitGroup = joined
		}
		if v := versionTail(w); v != "" {
			e.add(v) // v1.2.3 → 1.2.3
		}
	}

	// Joins across a space: "LH 401" → lh401, "138 0013 8000" → 13800138000.
	// The joined form is the group's whole; the words become its parts.
	if digitGroup != "" {
		lettersJoined := false
		if gapOK && e.letters != "" {
			e.regroup(e.lettersStart, e.lettersGroup)
			e.add(e.letters + digitGroup)
			lettersJoined = true
		}
		if gapOK && len(e.digits) > 0 {
			e.digits = append(e.digits, digitGroup)
			if len(e.digits) > 6 {
				e.digits = e.digits[1:]
			}
			e.regroup(e.runStart, e.runGroup)
			for k := 0; k < len(e.digits)-1; k++ {
				e.add(strings.Join(e.digits[k:], ""))
			}
		} else {
			e.digits = append(e.digits[:0], digitGroup)
			e.runStart, e.runGroup = wordStart, e.group
			if lettersJoined {
				e.runStart = e.lettersStart
			}
		}
		e.letters = ""
		return
	}
	e.digits = e.digits[:0]
	e.letters = ""
	// Only a code-like word joins a following number: short and upper case
	// as written (LH 401, ISO 9001), so "call 911" does not make call911.
	if single && len(w) <= 4 && allLetters(w) && raw != w && strings.ToUpper(raw) == raw {
		e.letters, e.lettersStart, e.lettersGroup = w, wordStart, e.group
	}
}

// joinable reports whether the gap between two words lets them join: a
// little white space or parentheses on one line ("LH 401", "(010) 1234").
func joinable(gap string) bool {
	if gap == "" || len(gap) > 3 {
		return false
	}
	for _, r := range gap {
		if r != ' ' && r != '\t' && r != '(' && r != ')' && r != '\u00a0' {
			return false
		}
	}
	return true
}

// isConn reports whether r joins the atoms of a compound.
func isConn(r rune) bool { return r == ',' || class(r, 1) == clConnector }

// hasConnector reports whether w has a connector (splitAtoms splits it).
func hasConnector(w string) bool { return strings.IndexFunc(w, isConn) >= 0 }

// addSubParts adds the parts of atom a where letters and digits meet or a
// lower-case letter meets an upper-case one (subParts): ipv6 → ipv, 6;
// getUser → get, user. The "am" or "pm" of a time of day (10am, 3PM) is
// not a part: it is no more the word "am" of "what am I allergic to?"
// than 10am is; the whole word and its number stay terms.
func (e *emitter) addSubParts(a string) {
	parts := subParts(a)
	if len(parts) < 2 {
		return
	}
	for k, p := range parts {
		if p = fold(p); k > 0 && (p == "am" || p == "pm") && allDigits(parts[k-1]) {
			continue
		}
		e.addPart(p)
	}
}

// subParts splits an atom at letter↔digit and lower→upper changes:
// LH401 → LH, 401; getUserName → get, User, Name; HTTPServer stays whole.
func subParts(a string) []string {
	if !hasTransition(a) {
		return nil
	}
	var parts []string
	start := 0
	var prev rune
	for k, r := range a {
		if k > 0 {
			pd, cd := unicode.IsDigit(prev), unicode.IsDigit(r)
			if pd != cd || unicode.IsLower(prev) && unicode.IsUpper(r) {
				parts = append(parts, a[start:k])
				start = k
			}
		}
		prev = r
	}
	return append(parts, a[start:])
}

// versionTail returns "1.2.3" for "v1.2.3" (letters, then dotted numbers).
func versionTail(w string) string {
	k := 0
	for k < len(w) && 'a' <= w[k] && w[k] <= 'z' {
		k++
	}
	if k == 0 || k > 3 || k == len(w) {
		return ""
	}
	tail := w[k:]
	dots := 0
	for idx := 0; idx < len(tail); idx++ {
		switch {
		case tail[idx] == '.':
			if idx == 0 || tail[idx-1] == '.' {
				return ""
			}
			dots++
		case !isDigit(tail[idx]):
			return ""
		}
	}
	if dots == 0 || tail[len(tail)-1] == '.' {
		return ""
	}
	return tail
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

func allLetters(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return s != ""
}

// hasTransition reports whether subParts would split a.
func hasTransition(a string) bool {
	var prev rune
	for k, r := range a {
		if k > 0 && (unicode.IsDigit(prev) != unicode.IsDigit(r) || unicode.IsLower(prev) && unicode.IsUpper(r)) {
			return true
		}
		prev = r
	}
	return false
}

// IsCJKBigram reports whether term is two Han characters, as the default
// tokenizer cuts Chinese ([Bigrams]): a guess at a word, not a word
// written by the user.
func IsCJKBigram(term string) bool {
	n := 0
	for _, r := range term {
		if !unicode.Is(unicode.Han, r) {
			return false
		}
		n++
	}
	return n == 2
}
