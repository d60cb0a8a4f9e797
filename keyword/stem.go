package keyword

import (
	"sync"
	"sync/atomic"

	"github.com/kljensen/snowball/english"
)

// Stemming says how English words are reduced to a common form.
type Stemming int

const (
	// Snowball stems English words with the Snowball (Porter 2) English
	// stemmer: meetings, meeting → meet; classes → class; running → run.
	// A British spelling is first read as the American (colour → color,
	// organise → organize: spelling.go), and a common irregular form as its
	// base word (bought → buy, drove → drive, children → child; not the
	// light verbs went, said, made: lemma.go). It is the default.
	Snowball Stemming = iota
	// PluralsOnly reduces plurals only (Harman's "S" stemmer: meetings →
	// meeting, queries → query), the behaviour before Snowball.
	PluralsOnly
)

// String returns "snowball" or "plurals".
func (s Stemming) String() string {
	if s == PluralsOnly {
		return "plurals"
	}
	return "snowball"
}

// WithStemming sets how English words are stemmed ([Snowball] by default).
// Only lower-case ASCII words of letters are stemmed: codes, numbers,
// identifiers and other scripts stay as written.
func WithStemming(s Stemming) TokenizerOption {
	return func(t *tokenizer) error {
		t.stem = s
		return nil
	}
}

// stemCache memoises Snowball stems: a conversation reuses a few thousand
// words, and the stemmer allocates. It stops growing at stemCacheMax words.
// Plain maps in shards under read-write locks: a lookup is the hot path of
// indexing, and sync.Map's boxed keys cost twice as much.
var (
	stemShards [stemShardCount]stemShard
	stemCached atomic.Int64
)

const (
	stemCacheMax   = 1 << 18
	stemShardCount = 32
)

type stemShard struct {
	mu sync.RWMutex
	m  map[string]string
}

func stemShardOf(w string) *stemShard {
	h := uint32(2166136261)
	for i := 0; i < len(w); i++ {
		h ^= uint32(w[i])
		h *= 16777619
	}
	return &stemShards[h%stemShardCount]
}

// stemWord stems w as t's Stemming says.
func (t *tokenizer) stemWord(w string) string {
	if t.stem == PluralsOnly {
		return plural(w)
	}
	if len(w) < 3 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
	}
	sh := stemShardOf(w)
	sh.mu.RLock()
	s, ok := sh.m[w]
	sh.mu.RUnlock()
	if ok {
		return s
	}
	// A British spelling reads as the American, an irregular form as its
	// base word (every key and base of both tables is of three letters or
	// more): once a word, then kept with its stem.
	base := american(w)
	if b, ok := irregular[base]; ok {
		base = b
	}
	s = english.Stem(base, true)
	if s == "" {
		s = base
	}
	if stemCached.Load() < stemCacheMax {
		sh.mu.Lock()
		if sh.m == nil {
			sh.m = map[string]string{}
		}
		if _, dup := sh.m[w]; !dup {
			sh.m[w] = s
			stemCached.Add(1)
		}
		sh.mu.Unlock()
	}
	return s
}
