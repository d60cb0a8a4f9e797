package keyword

import "unsafe"

// What addWord makes of a plain word (letters a–z, the first one perhaps
// upper case: the bulk of English text) is memoised per tokenizer in small
// direct-mapped tables, one per goroutine at a time (a sync.Pool of them):
// a hit costs a hash of the word and one slot's bytes, with no lock, no
// map probe and no allocation for the folded word, where the general path
// folds, checks the stop words' map and looks the stem up in the shared
// stem cache (stemWord), whose shards are too large for the CPU's caches.

const (
	// wordKeyMax is the longest word a table keeps, so that a slot is 32
	// bytes, half a cache line; longer words (about 1% of English text's)
	// take the general path.
	wordKeyMax = 14
	// wordSlots is the number of slots of a table (a power of two): 16,384
	// slots, 512 KiB, within a core's L2 cache.
	wordSlots = 1 << 14
	// wordTableMinText is the shortest text analysed with a word table:
	// below it (a query, a name), the general path costs less than taking
	// a table from the pool, or making one.
	wordTableMinText = 256
)

// wordTable is one goroutine's memo of plain words.
type wordTable [wordSlots]wordSlot

// wordSlot is a folded word (key[:n]; n 0 for an empty slot) and what
// addWord makes of it: term, or nothing when drop is set (a stop word or
// a lone letter).
type wordSlot struct {
	n    uint8
	drop bool
	key  [wordKeyMax]byte
	term string
}

// plainWord reports whether raw takes the plain-word path: 2 to wordKeyMax
// ASCII letters, only the first of which may be upper case, or one lower
// case letter. Such a word has no connector, no digit and no lower→upper
// change, so it has no parts, and it is not a code-like word that joins a
// following number (those are upper case), so addWord's term is all the
// word emits.
func plainWord(raw string) bool {
	if len(raw) == 0 || len(raw) > wordKeyMax {
		return false
	}
	if c := raw[0]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' && len(raw) > 1) {
		return false
	}
	for i := 1; i < len(raw); i++ {
		if c := raw[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// plainTerm returns addWord's term for raw, a plainWord, and whether there
// is one, through tab.
func (t *tokenizer) plainTerm(tab *wordTable, raw string) (string, bool) {
	var key [wordKeyMax]byte
	n := copy(key[:], raw)
	key[0] |= 0x20 // lower case
	h := uint32(2166136261)
	for _, c := range key[:n] {
		h ^= uint32(c)
		h *= 16777619
	}
	s := &tab[(h^h>>16)&(wordSlots-1)]
	if int(s.n) == n && s.key == key {
		return s.term, !s.drop
	}
	w := raw
	if raw[0] < 'a' {
		w = string(key[:n])
	}
	s.n, s.key = uint8(n), key
	s.drop = n == 1 || t.stop[w]
	s.term = ""
	if !s.drop {
		s.term = t.stemWord(w)
	}
	return s.term, !s.drop
}

// table returns a word table for one text's analysis, to hand back with
// putTable.
func (t *tokenizer) table() *wordTable {
	if tab, ok := t.words.Get().(*wordTable); ok {
		return tab
	}
	return new(wordTable)
}

func (t *tokenizer) putTable(tab *wordTable) { t.words.Put(tab) }

var _ [32]struct{} = [unsafe.Sizeof(wordSlot{})]struct{}{}
