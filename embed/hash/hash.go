// Package hash is agentmem's offline default embedder: feature hashing of the
// words and character n-grams of a text into a fixed number of dimensions.
//
// It measures lexical similarity only. Two texts score high when they share
// words or parts of words ("flight" and "flights" are close, so are "LH401"
// and "LH 401" to a lesser degree); it knows no synonyms and no meaning, so
// "when do I fly?" and "my plane leaves on Friday" share nothing. Use it
// where no model server is available, in tests and examples (it is fast and
// deterministic), or as the lexical half of a hybrid search; use an Ollama
// model (package embed/ollama) for semantic similarity.
//
// # Features
//
// A text is first brought to Unicode normalisation form NFKC (so "café"
// typed with a combining accent, full-width "ＬＨ４０１" and the ligature "ﬁ"
// match their usual spellings), then split into words (maximal runs of
// Unicode letters, digits and combining marks, lower-cased) and CJK runs
// (Han, Hiragana, Katakana and Hangul characters). Each word contributes
// itself and its character trigrams with boundary markers ("^fl", "fli", …,
// "ht$"); each CJK run contributes its characters and character bigrams, so
// Chinese, Japanese and Korean text needs no word segmenter. About 130
// English function words ("the", "is", "my", "what"…) and the chat role
// labels "user", "assistant" and "system" count at half weight and without
// trigrams, so that texts sharing only those stay apart. A feature occurring
// tf times in a text is weighted 1+ln(tf), hashed with 64-bit FNV-1a (plus
// a fixed finaliser) to a dimension and a sign (signed hashing, so
// collisions cancel out on average instead of adding up), and the vector is
// L2-normalised.
//
// A text made only of punctuation or symbols (e.g. "?!" or "🙂") has no words;
// its non-space characters are then used as features, so it still gets a
// valid unit vector, equal for equal texts. Only an empty or white-space-only
// text is an error ([embed.ErrEmptyText]).
//
// # Stability
//
// The vectors are a pure function of the text and the dimension, the same in
// every process and on every platform (no random seeds, no map iteration
// order), because stores persist them. Changing the algorithm changes every
// vector: the package's tests pin golden values so that this cannot happen by
// accident.
package hash

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/internal/parallel"
)

// DefaultDim is the dimension used by "hash" specs without an explicit one.
const DefaultDim = 512

// MaxDim is the largest dimension New accepts.
const MaxDim = 1 << 16

// Feature kinds, mixed into each feature's hash (so the word "ab" and the
// trigram "ab" differ) and kept in the low bits of its key so that the
// weight can be found again after sorting.
const (
	kindWord    = 1 // a whole word
	kindTrigram = 2 // a character trigram of a word, with ^ and $ markers
	kindCJK1    = 3 // one CJK character
	kindCJK2    = 4 // two adjacent CJK characters
	kindSymbol  = 5 // a non-space character of a text without words
	kindStop    = 6 // a whole stop word (no trigrams)
	kindMask    = 7
)

// kindWeight is the weight of one occurrence of a feature of each kind.
// Trigrams weigh less than words: a word of n letters has n trigrams, so at
// 0.5 the trigrams of a 4-letter word carry as much as the word itself.
var kindWeight = [kindMask + 1]float64{
	kindWord:    1,
	kindTrigram: 0.5,
	kindCJK1:    0.7,
	kindCJK2:    1,
	kindSymbol:  1,
	kindStop:    0.5,
}

// Boundary markers around a word for its trigrams. They are control
// characters, which never occur inside a word.
const (
	markBegin = '\x02'
	markEnd   = '\x03'
)

// An Embedder maps texts to L2-normalised feature-hashing vectors. It is
// immutable and safe for concurrent use by multiple goroutines.
type Embedder struct {
	dim  int
	name string
}

// New returns a hash embedder producing vectors of length dim, which must be
// in [1, MaxDim]; DefaultDim (512) is a good choice for short memories, and
// larger dimensions reduce hash collisions for long texts.
func New(dim int) (*Embedder, error) {
	if dim < 1 || dim > MaxDim {
		return nil, fmt.Errorf("hash: dimension %d out of range [1, %d]", dim, MaxDim)
	}
	return &Embedder{dim: dim, name: "hash:" + strconv.Itoa(dim)}, nil
}

// Dim returns the length of the vectors.
func (e *Embedder) Dim() int { return e.dim }

// Name returns "hash:DIM", e.g. "hash:512".
func (e *Embedder) Name() string { return e.name }

// Kind returns [embed.Lexical]: the vectors hash words and character
// n-grams, so they meet where the texts share them, not where they mean
// the same.
func (e *Embedder) Kind() embed.Kind { return embed.Lexical }

// Embed returns one unit vector per text. An empty or white-space-only text
// is an error wrapping [embed.ErrEmptyText] that names its index; no vectors
// are returned then. The vectors share one backing array (each with its own
// capacity limit, so appending to one never changes another) and belong to
// the caller.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("hash: %w", err)
	}
	if err := checkTexts(texts); err != nil {
		return nil, err
	}
	out := views(make([]float32, len(texts)*e.dim), len(texts), e.dim)
	if err := embedAll(ctx, texts, out, false); err != nil {
		return nil, err
	}
	return out, nil
}

// EmbedInto is [Embedder.Embed] writing text i's vector to
// dst[i*Dim() : (i+1)*Dim()] (see [embed.IntoEmbedder]); len(dst) must be
// len(texts)*Dim(). On an error, what dst holds is undefined.
func (e *Embedder) EmbedInto(ctx context.Context, dst []float32, texts []string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("hash: %w", err)
	}
	if len(dst) != len(texts)*e.dim {
		return fmt.Errorf("hash: %w: dst has %d floats for %d texts of dimension %d", embed.ErrDimension, len(dst), len(texts), e.dim)
	}
	if err := checkTexts(texts); err != nil {
		return err
	}
	return embedAll(ctx, texts, views(dst, len(texts), e.dim), true)
}

// checkTexts returns the error of the first blank text.
func checkTexts(texts []string) error {
	for i, t := range texts {
		if isBlank(t) {
			return fmt.Errorf("hash: text %d: %w", i, embed.ErrEmptyText)
		}
	}
	return nil
}

// views cuts backing into n vectors of dimension d, each with its own
// capacity limit.
func views(backing []float32, n, d int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		out[i] = backing[i*d : (i+1)*d : (i+1)*d]
	}
	return out
}

// embedAll writes the vector of texts[i] into out[i]: zeroed, or cleared
// first when dirty (a reused buffer's, cleared by the goroutine that then
// fills it, while it is in cache).
func embedAll(ctx context.Context, texts []string, out [][]float32, dirty bool) error {
	// A batch is split into contiguous parts of about the same text,
	// embedded in parallel (each text's vector depends on nothing else, so
	// the result is the same); a small one (a query) is not worth a
	// goroutine, nor Parts' closures.
	size := 0
	for _, t := range texts {
		size += len(t)
	}
	if len(texts) == 1 || size < 2*parallelBytes {
		return embedRange(ctx, texts, out, dirty)
	}
	var mu sync.Mutex
	var first error
	parallel.Parts(len(texts), func(i int) int { return len(texts[i]) }, parallelBytes, func(lo, hi int) {
		if err := embedRange(ctx, texts[lo:hi], out[lo:hi], dirty); err != nil {
			mu.Lock()
			first = cmp.Or(first, err)
			mu.Unlock()
		}
	})
	return first
}

// parallelBytes is how much text each of Embed's goroutines gets at least:
// about 40 µs of work, against a few µs to start a goroutine.
const parallelBytes = 1 << 10

// embedRange writes the vector of texts[i] into out[i] (len dim; zeroed
// unless dirty).
func embedRange(ctx context.Context, texts []string, out [][]float32, dirty bool) error {
	s := scratchPool.Get().(*scratch)
	defer putScratch(s)
	for i, t := range texts {
		// A large batch can take a while: notice a cancellation.
		if i%256 == 255 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("hash: %w", err)
			}
		}
		if dirty {
			clear(out[i])
		}
		s.embed(t, out[i])
	}
	return nil
}

// isBlank reports whether t is empty or only white space.
func isBlank(t string) bool {
	for _, r := range t {
		if !unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// scratch holds the buffers of one embedding; pooled so that Embed does not
// allocate per text.
type scratch struct {
	keys    []uint64 // one key per feature occurrence
	runes   []rune   // the current word or CJK run, lower-cased
	slots   []uint64 // open-addressing table of distinct keys (0 = empty)
	counts  []uint32 // occurrences of the key in the same slot
	norm    []byte   // the text in NFKC, when that differs
	seen    []uint64 // bitset of the dimensions in touched
	touched []uint32 // dimensions written, in the order first written
}

var scratchPool = sync.Pool{New: func() any {
	return &scratch{keys: make([]uint64, 0, 256), runes: make([]rune, 0, 64)}
}}

// putScratch returns s to the pool unless one huge text made it too big to
// keep around.
func putScratch(s *scratch) {
	if cap(s.keys) > 1<<16 || cap(s.runes) > 1<<12 || cap(s.slots) > 1<<17 || cap(s.norm) > 1<<16 {
		return
	}
	scratchPool.Put(s)
}

// nfkc returns text in NFKC. ASCII text is already; other text is
// normalised into a pooled buffer, and a new string is made only when
// normalisation changed something.
func (s *scratch) nfkc(text string) string {
	ascii := true
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return text
	}
	s.norm = norm.NFKC.AppendString(s.norm[:0], text)
	if string(s.norm) == text { // compared without allocating
		return text
	}
	return string(s.norm)
}

// embed writes the unit vector of text into v (len(v) = dim, all zero).
func (s *scratch) embed(text string, v []float32) {
	text = s.nfkc(text)
	s.keys = s.keys[:0]
	s.runes = s.runes[:0]
	cjk := false // whether s.runes holds a CJK run (else a word)
	for _, r := range text {
		switch c := classify(r); {
		case c == classWord:
			if cjk {
				s.flush(cjk)
				cjk = false
			}
			s.runes = append(s.runes, fold(r))
		case c == classCJK:
			if !cjk {
				s.flush(cjk)
				cjk = true
			}
			s.runes = append(s.runes, r)
		default:
			s.flush(cjk)
		}
	}
	s.flush(cjk)
	if len(s.keys) == 0 {
		// Only punctuation and symbols: use the characters themselves.
		for _, r := range text {
			if !unicode.IsSpace(r) {
				s.keys = append(s.keys, key(kindSymbol, []rune{r}))
			}
		}
		if len(s.keys) == 0 {
			// Not reachable for a text that is not blank, but a vector
			// must not depend on that.
			s.keys = append(s.keys, key(kindSymbol, nil))
		}
	}
	s.accumulate(v)
}

// flush emits the features of the run in s.runes and empties it.
func (s *scratch) flush(cjk bool) {
	rs := s.runes
	if len(rs) == 0 {
		return
	}
	if cjk {
		for i := range rs {
			s.keys = append(s.keys, key(kindCJK1, rs[i:i+1]))
			if i+1 < len(rs) {
				s.keys = append(s.keys, key(kindCJK2, rs[i:i+2]))
			}
		}
	} else {
		wk := key(kindWord, rs)
		if _, stop := stopKeys[wk]; stop {
			s.keys = append(s.keys, key(kindStop, rs))
			s.runes = s.runes[:0]
			return
		}
		s.keys = append(s.keys, wk)
		// Trigrams of markBegin + word + markEnd: a word of n runes has n.
		n := len(rs)
		for i := -1; i < n-1; i++ {
			var tri [3]rune
			for j := range tri {
				switch k := i + j; {
				case k < 0:
					tri[j] = markBegin
				case k >= n:
					tri[j] = markEnd
				default:
					tri[j] = rs[k]
				}
			}
			s.keys = append(s.keys, key(kindTrigram, tri[:]))
		}
	}
	s.runes = s.runes[:0]
}

// accumulate adds the weighted, signed features in s.keys to v and
// normalises it. It counts each feature's occurrences in a small
// open-addressing table (faster than sorting the keys), then visits the
// table in slot order, which depends only on the keys, so the float sums are
// the same on every run.
func (s *scratch) accumulate(v []float32) {
	size := 64
	for size < 2*len(s.keys) {
		size *= 2
	}
	s.slots = slices.Grow(s.slots[:0], size)[:size]
	s.counts = slices.Grow(s.counts[:0], size)[:size]
	clear(s.slots)
	mask := uint64(size - 1)
	for _, k := range s.keys {
		// Keys are never 0 (the kind is in the low bits) and well mixed;
		// bits 3 and up index the table.
		for i := (k >> 3) & mask; ; i = (i + 1) & mask {
			if s.slots[i] == k {
				s.counts[i]++
				break
			}
			if s.slots[i] == 0 {
				s.slots[i] = k
				s.counts[i] = 1
				break
			}
		}
	}
	dim := uint64(len(v))
	// Only the touched dimensions (a few dozen of 512 for a sentence) need
	// to be summed and scaled; a bitset keeps each in touched once.
	s.seen = slices.Grow(s.seen[:0], (len(v)+63)/64)[:(len(v)+63)/64]
	clear(s.seen)
	s.touched = s.touched[:0]
	for i, k := range s.slots {
		if k == 0 {
			continue
		}
		w := kindWeight[k&kindMask] * tfWeight(int(s.counts[i]))
		// The explicit conversion rounds w to float32 (no fused multiply-add
		// on any platform); negation is exact.
		w32 := float32(w)
		if k>>63 != 0 {
			w32 = -w32
		}
		b := bucket(k, dim)
		v[b] += w32
		if s.seen[b/64]&(1<<(b%64)) == 0 {
			s.seen[b/64] |= 1 << (b % 64)
			s.touched = append(s.touched, uint32(b))
		}
	}
	var sum float64
	for _, b := range s.touched {
		sum += float64(v[b]) * float64(v[b])
	}
	if sum == 0 {
		// All features cancelled out (signed collisions); vanishingly rare,
		// but a zero vector is invalid everywhere downstream.
		v[s.touched[0]] = 1
		return
	}
	inv := 1 / math.Sqrt(sum)
	for _, b := range s.touched {
		v[b] = float32(float64(v[b]) * inv)
	}
}

// bucket maps key k to a dimension in [0, dim): bits 3 to 34 of k scaled
// by dim (Lemire's multiply-shift reduction, which avoids a division).
func bucket(k, dim uint64) uint64 {
	return uint64(uint32(k>>3)) * dim >> 32
}

// tfWeights caches 1+ln(tf) rounded to float32 precision. Rounding makes the
// result independent of the platform's math.Log implementation (which may
// differ in the last float64 bit).
var tfWeights = func() (t [64]float64) {
	for i := 1; i < len(t); i++ {
		t[i] = float64(float32(1 + math.Log(float64(i))))
	}
	return t
}()

// tfWeight returns the sublinear weight 1+ln(tf) of a feature occurring tf
// (≥ 1) times.
func tfWeight(tf int) float64 {
	if tf < len(tfWeights) {
		return tfWeights[tf]
	}
	return float64(float32(1 + math.Log(float64(tf))))
}

// FNV-1a 64-bit parameters.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// key hashes a feature of the given kind made of runes rs. The result is
// FNV-1a over the kind byte and the UTF-8 bytes of rs, mixed with
// MurmurHash3's 64-bit finaliser (FNV's low bits, which pick the dimension,
// are poorly mixed on their own), with the kind in its low 3 bits. Bits 3 to
// 34 choose the dimension (see bucket), bit 63 the sign.
func key(kind uint64, rs []rune) uint64 {
	h := uint64(fnvOffset)
	h ^= kind
	h *= fnvPrime
	for _, r := range rs {
		if r < utf8.RuneSelf {
			h ^= uint64(r)
			h *= fnvPrime
			continue
		}
		var b [utf8.UTFMax]byte
		n := utf8.EncodeRune(b[:], r)
		for _, c := range b[:n] {
			h ^= uint64(c)
			h *= fnvPrime
		}
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h&^kindMask | kind
}

// stopWords are English function words and chat role labels. They occur
// in most texts, so matching them says little; they count as one feature
// of weight kindWeight[kindStop] each, without trigrams.
var stopWords = strings.Fields(`
a about above after again against all also am an and any are as at
be because been before being below between both but by
can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how
i if in into is it its itself just me more most my myself
no nor not now of off on once only or other our ours ourselves out over own
same she should so some such than that the their theirs them themselves then there these they this those through to too
under until up very was we were what when where which while who whom why will with would
you your yours yourself yourselves
user assistant system
`)

// stopKeys holds the word keys of stopWords.
var stopKeys = func() map[uint64]struct{} {
	m := make(map[uint64]struct{}, len(stopWords))
	for _, w := range stopWords {
		m[key(kindWord, []rune(w))] = struct{}{}
	}
	return m
}()

// Rune classes for tokenising.
const (
	classOther = iota // separator: space, punctuation, symbol
	classWord         // part of a word
	classCJK          // a CJK character, a token of its own
)

// classify returns the class of r.
func classify(r rune) int {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			return classWord
		}
		return classOther
	}
	if r >= 0x1100 && isCJK(r) {
		return classCJK
	}
	if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) {
		return classWord
	}
	return classOther
}

// isCJK reports whether r is a Han, Hiragana, Katakana or Hangul character,
// or one of the marks of common script used inside Japanese and Chinese
// words (ー prolonged sound mark, 々 iteration mark).
func isCJK(r rune) bool {
	switch r {
	case 'ー', '々', 'ｰ':
		return true
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// fold lower-cases r.
func fold(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	return unicode.ToLower(r)
}
