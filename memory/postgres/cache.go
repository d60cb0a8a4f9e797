package postgres

import (
	"sync"
	"sync/atomic"

	"github.com/agentmem/agentmem/memory/engine"
)

// The keyword path reads the same things of a namespace query after
// query: the postings of its common terms (thousands each), the links of
// the records they score, the lengths of their episodes. While nothing
// is written to the namespace they do not change, so a Memory keeps what
// its searches read of each namespace, for the namespace's version, and
// a search of the same version reads only what is not kept yet.
//
// The version is the namespaces row as the search's snapshot sees it:
// its xmin (the transaction that wrote it) with its statistics. Every
// transaction that changes a namespace's records, postings, blocks,
// episodes or validity also writes its row (writeStats, under the
// namespace's lock), so a search that sees the same row version sees the
// same keyword data, whichever server wrote it; a write, here or on
// another server, gives the row a new version and the next search starts
// over.

// cacheLimit bounds what one namespace's cache holds (postings, links and
// episode lengths, about 24 to 100 bytes each): past it the cache is let
// go (the searches that use it keep it until they end: what a search read
// stays there for it) and the next search starts a new one. A variable so
// that tests can lower it.
var cacheLimit = 1 << 22

// nsVersion identifies a version of a namespace's keyword data.
type nsVersion struct {
	xmin                                             string
	textDocs, textLen, episodeDocs, mergedSeq, ended int64
}

// version is info's nsVersion.
func (info nsInfo) version() nsVersion {
	return nsVersion{xmin: info.xmin, textDocs: info.textDocs, textLen: info.textLen,
		episodeDocs: info.episodeDocs, mergedSeq: info.mergedSeq, ended: info.ended}
}

// nsCache is what searches read of one version of a namespace. Its maps
// are read and filled under mu; a posting list, once in post, is never
// changed.
type nsCache struct {
	mu      sync.Mutex
	version nsVersion
	post    map[string][]posting  // by term (nil: in no record)
	links   map[int64]engine.Link // by seq, read by Links
	around  map[int64]bool        // records whose followers Links has read
	epLen   map[int64]float64     // episode lengths
	held    int
	full    atomic.Bool // past cacheLimit: no new search takes it
}

// newCache returns an empty cache of version v.
func newCache(v nsVersion) *nsCache {
	return &nsCache{version: v, post: map[string][]posting{}, links: map[int64]engine.Link{},
		around: map[int64]bool{}, epLen: map[int64]float64{}}
}

// room counts n more entries, letting c go past cacheLimit. Under c.mu.
func (c *nsCache) room(n int) {
	c.held += n
	if c.held > cacheLimit {
		c.full.Store(true)
	}
}

// caches are a Memory's namespace caches, by namespace id.
type caches struct {
	mu   sync.Mutex
	byNS map[int32]*nsCache
}

// get returns the cache of info's namespace at its version: the one kept,
// or a new one that replaces it (a search of another version keeps using
// the one it has).
func (cs *caches) get(info nsInfo) *nsCache {
	v := info.version()
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if c := cs.byNS[info.id]; c != nil && c.version == v && !c.full.Load() {
		return c
	}
	if cs.byNS == nil {
		cs.byNS = map[int32]*nsCache{}
	}
	c := newCache(v)
	cs.byNS[info.id] = c
	return c
}
