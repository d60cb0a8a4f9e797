package tokens

import "sync"

// minCached is the shortest text worth caching: shorter ones are counted
// faster than they are hashed and looked up.
const minCached = 128

// Cached returns a Counter that remembers c's counts of recent texts, up to
// about entries of them. A prompt assembler recounts the same window rounds
// every turn; with a cache each round is counted once. Counts are exact
// (keyed by the whole text), so the cache never changes a result. The
// returned Counter is safe for concurrent use by multiple goroutines.
func Cached(c Counter, entries int) Counter {
	return &cache{c: c, half: max(entries/2, 1), cur: map[string]int{}}
}

// cache keeps two generations: lookups check both, inserts go to cur, and
// when cur is full it becomes old and the previous old is dropped — an LRU
// approximation without per-entry bookkeeping.
type cache struct {
	c    Counter
	half int

	mu  sync.Mutex
	cur map[string]int
	old map[string]int
}

func (k *cache) Count(text string) int {
	if len(text) < minCached {
		return k.c.Count(text)
	}
	k.mu.Lock()
	n, ok := k.cur[text]
	if !ok {
		if n, ok = k.old[text]; ok {
			k.put(text, n)
		}
	}
	k.mu.Unlock()
	if ok {
		return n
	}
	n = k.c.Count(text) // outside the lock: counting is the slow part
	k.mu.Lock()
	k.put(text, n)
	k.mu.Unlock()
	return n
}

// put stores a count; k.mu held.
func (k *cache) put(text string, n int) {
	if len(k.cur) >= k.half {
		k.old, k.cur = k.cur, make(map[string]int, k.half)
	}
	k.cur[text] = n
}
