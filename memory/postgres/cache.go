package postgres

import (
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/memory/engine"
)

// The keyword path reads the same things of a namespace query after
// query: the postings of its common terms (thousands each), the links of
// the records they score, the lengths of their episodes, and a search
// reads its hits' records. While nothing is written to the namespace
// they do not change, so a Memory keeps what its searches read of each
// namespace, for the namespace's version, and a search of the same
// version reads only what is not kept yet. A small namespace has all of
// them read at once in the background (fill), after which a search of
// that version reads nothing of it but its statistics.
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
// episode lengths, about 24 to 100 bytes each). Past it the postings read
// term by term are let go first (a search has copied those it uses): the
// links, read all at once in the background (fill), are what most
// searches of a large namespace would otherwise read again, 20 ms of the
// server's a query at 100,000 records, where the postings of the terms
// searched reach the bound after some dozens of queries (7.6 million
// postings in all). A cache still past it is let go (the searches that
// use it keep it until they end: what a search read stays there for it)
// and the next search starts a new one. An atomic so that tests can lower
// it while another Memory's background reads run.
var cacheLimit = tunable(1 << 24)

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
	links   map[int64]engine.Link // by seq, read by Links; nil once complete
	// table holds every record's link once the cache is complete, and
	// is not changed while a view uses the cache (grow changes it in
	// place only when none does): a view that found it reads it without
	// mu.
	table  *linkTable
	around map[int64]bool       // records whose followers Links has read
	epLen  map[int64]float64    // episode lengths
	docs   map[int64]engine.Doc // records with their chunks' texts, by seq (view.Docs)
	held   int
	// postHeld are the entries of held that are post's, read term by
	// term (not allPost): let go first when held passes cacheLimit.
	postHeld int
	full     atomic.Bool // past cacheLimit: no new search takes it
	// complete: links holds every record of the namespace, with its
	// Next, and allPost: post holds every term's postings (a term not
	// there is in no record), read at once in the background (fill);
	// filling: that read is running.
	complete, allPost, allDocs bool
	filling                    atomic.Bool
	// lastSeq is the namespace's newest record's seq, when complete.
	lastSeq int64
	// users counts the open views that use the cache (under caches.mu):
	// one that none uses may be grown in place.
	users int
}

// newCache returns an empty cache of version v.
func newCache(v nsVersion) *nsCache {
	return &nsCache{version: v, post: map[string][]posting{}, links: map[int64]engine.Link{},
		around: map[int64]bool{}, epLen: map[int64]float64{}, docs: map[int64]engine.Doc{}}
}

// room counts n more entries: past cacheLimit it lets the postings read
// term by term go, and then, if still past it, the cache. Under c.mu.
func (c *nsCache) room(n int) {
	c.held += n
	limit := int(cacheLimit.Load())
	if c.held > limit && c.postHeld > 0 {
		c.post = map[string][]posting{}
		c.held -= c.postHeld
		c.postHeld = 0
	}
	if c.held > limit {
		c.full.Store(true)
	}
}

// addPostings keeps got, the postings of the terms need read by a search
// (nil for a term in no record), counting them after room. Under c.mu.
func (c *nsCache) addPostings(need []string, got map[string][]posting) {
	n := 0
	for _, t := range need {
		n += 1 + len(got[t])
	}
	c.room(n)
	for _, t := range need {
		c.post[t] = got[t]
	}
	if !c.allPost {
		c.postHeld += n
	}
}

// caches are a Memory's namespace caches, by namespace id.
type caches struct {
	mu   sync.Mutex
	byNS map[int32]*nsCache
	// ids are the namespaces' ids by name, as searches found them, and
	// written the namespaces this process added records to since a
	// view last read what was written to them (view.prefetch).
	ids     map[string]int32
	written map[string]*nsWrites
	// fillNext is when a namespace's next fillLinks may start: ten times
	// the last one's time after it started (as for the vectors' copies).
	fillNext map[int32]time.Time
	// filling is held by the read of fill that runs: one at a time, so
	// that a search of many namespaces, which asks for each one's, does
	// not have them take the pool's connections from the searches
	// (BenchmarkAllNamespaces, 40 namespaces of 500 records, a fresh
	// Memory's first 30 searches: 2.23–2.50 s against 2.95–3.26 s, 3
	// pairs).
	filling  chan struct{}
	filled   atomic.Int64 // fillLinks that completed a cache (tests)
	grown    atomic.Int64 // caches made by grow (tests)
	docReads atomic.Int64 // reads of records a search's cache lacked (tests)
	// prefetched counts the caches grown from what their view read
	// when it opened (view.prefetch; tests).
	prefetched atomic.Int64
}

// linkRecords is the largest namespace (records) whose links a search
// has read in the background, all at once, for the searches of the same
// version: the links a search needs are those of the records its terms
// score and of their neighbours, a thousand or more rows, different for
// each query; the whole namespace's, read once, are 10,000 rows (some
// 2 MB kept) at 10,000 records. postingRecords is the same for the
// postings of all the namespace's terms (about 40 to 80 a record, 24
// bytes each kept: 7.6 million, some 180 MB, at 100,000 records of
// BenchmarkVsDir's) and its records with their chunks' texts (as large as
// the texts): a query's new terms and its hits then cost no round trip
// (at 100,000 records, before, the postings of a query's terms were read
// and decoded again once the cache's bound let them go: 15 ms of the
// process's CPU a query in a profile of 400). Read in 7 s at 100,000
// records (two busy cores).
// Variables so that tests can change them.
var (
	linkRecords    int64 = 200_000
	postingRecords int64 = 150_000
)

// fill reads the links of every record of the namespace of info, and
// the postings of all its terms, into c, in the background, when the
// namespace is small enough, none is being read into c and its last such
// read is long enough ago.
func (m *Memory) fill(info nsInfo, c *nsCache) {
	cs := &m.caches
	if info.textDocs > linkRecords || c.filling.Load() || m.vecs.ctx == nil || m.vecs.ctx.Err() != nil {
		return
	}
	cs.mu.Lock()
	if time.Now().Before(cs.fillNext[info.id]) || !c.filling.CompareAndSwap(false, true) {
		cs.mu.Unlock()
		return
	}
	cs.mu.Unlock()
	started := m.background(func(ctx context.Context) {
		select { // one read at a time (caches.filling)
		case cs.filling <- struct{}{}:
			defer func() { <-cs.filling }()
		case <-ctx.Done():
			c.filling.Store(false)
			return
		}
		start := time.Now()
		defer func() {
			cs.mu.Lock()
			if cs.fillNext == nil {
				cs.fillNext = map[int32]time.Time{}
			}
			cs.fillNext[info.id] = start.Add(10 * time.Since(start))
			cs.mu.Unlock()
		}()
		if err := m.readAll(ctx, info, c); err != nil && ctx.Err() == nil {
			m.opts.logger.Warn("postgres: reading a namespace's links and postings", "namespace", info.name, "err", m.wrap(ctx, "read links", err))
		}
	})
	if !started {
		c.filling.Store(false)
	}
}

// readAll reads the links of every record of info's namespace into c,
// and the postings of all its terms if it holds at most postingRecords
// records, in a snapshot of its own, or into a new cache of the version
// it finds there when the namespace was written since c's. It keeps the
// cache it completed unless a complete one is kept already (offer): when
// writes outpace it (an agent's turns, each followed by a search, against
// a read of ~100 ms), the cache kept meanwhile is an empty one of a later
// version, and the searches of the versions that follow grow the
// complete one with what was written since (view.cache) instead of
// reading their terms' postings from the server until a read kept up.
func (m *Memory) readAll(ctx context.Context, info nsInfo, c *nsCache) error {
	conn, err := m.acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // read only
	nss, err := namespaces(ctx, tx, info.name)
	if err != nil || len(nss) != 1 || nss[0].id != info.id {
		return err
	}
	if nss[0].version() != c.version {
		c = newCache(nss[0].version())
	}
	rows, err := tx.Query(ctx, `SELECT `+linkCols+` FROM records WHERE ns = $1`, info.id)
	if err != nil {
		return err
	}
	links := make(map[int64]engine.Link, info.textDocs)
	for rows.Next() {
		r, err := scanLink(rows)
		if err != nil {
			rows.Close()
			return err
		}
		links[r.seq] = r.l
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	// A record's Next is the first record that follows it (prev_seq).
	for seq, l := range links {
		if p, ok := links[l.Prev]; ok && l.Prev >= 0 && (p.Next < 0 || seq < p.Next) {
			p.Next = seq
			links[l.Prev] = p
		}
	}
	var post map[string][]posting
	var docs map[int64]engine.Doc
	held := len(links)
	if nss[0].textDocs <= postingRecords {
		if post, err = readPostings(ctx, tx, nss[0], nil); err != nil {
			return err
		}
		for _, ps := range post {
			held += 1 + len(ps)
		}
		docs = make(map[int64]engine.Doc, info.textDocs)
		if err := readDocs(ctx, tx, `r.ns = $1`, info.id, docs); err != nil {
			return err
		}
		held += len(docs)
	}
	c.mu.Lock()
	if post != nil { // replaced by all of them, counted in held
		c.held -= c.postHeld
		c.postHeld = 0
	}
	c.room(held - len(c.links))
	c.table = newLinkTable(links)
	c.lastSeq = max(c.lastSeq, c.table.last())
	c.links, c.complete = nil, true
	if post != nil {
		c.post, c.allPost = post, true
		c.docs, c.allDocs = docs, true
	}
	c.mu.Unlock()
	m.caches.offer(info.id, c)
	m.caches.filled.Add(1)
	return nil
}

// offer keeps c, a complete cache of namespace id, unless the cache kept
// is complete already (of any version: a later one has grown from it).
// An incomplete one it replaces may be of a later version than c, which
// its searches then grow c to, or make anew when the namespace did more
// than grow.
func (cs *caches) offer(id int32, c *nsCache) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cur := cs.byNS[id]; cur != nil && cur.isComplete() {
		return
	}
	if cs.byNS == nil {
		cs.byNS = map[int32]*nsCache{}
	}
	cs.byNS[id] = c
}

// get returns the cache of info's namespace at its version: the one kept,
// or a new one that replaces it (a search of another version keeps using
// the one it has).
func (cs *caches) get(info nsInfo) *nsCache {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.getLocked(info)
}

// getFor is get for the view v, which uses the cache until it closes.
func (cs *caches) getFor(v *view, info nsInfo) *nsCache {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c := cs.getLocked(info)
	cs.useLocked(v, c)
	return c
}

// kept returns the cache kept of info's namespace, counted as used by v
// (useLocked), if it is of info's version; nil otherwise.
func (cs *caches) kept(v *view, info nsInfo) *nsCache {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c := cs.byNS[info.id]
	if c == nil || c.version != info.version() || c.full.Load() {
		return nil
	}
	cs.useLocked(v, c)
	return c
}

// useLocked counts c as used by v until v closes (release). Under cs.mu.
func (cs *caches) useLocked(v *view, c *nsCache) {
	c.users++
	v.held = append(v.held, c)
}

// release ends v's use of the caches it got.
func (cs *caches) release(v *view) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, c := range v.held {
		c.users--
	}
	v.held = nil
}

// getLocked is get under cs.mu.
func (cs *caches) getLocked(info nsInfo) *nsCache {
	v := info.version()
	if c := cs.byNS[info.id]; c != nil && c.version == v && !c.full.Load() {
		return c
	}
	if cs.byNS == nil {
		cs.byNS, cs.ids = map[int32]*nsCache{}, map[string]int32{}
	}
	cs.ids[info.name] = info.id
	c := newCache(v)
	cs.byNS[info.id] = c
	return c
}

// cache returns the cache of info's namespace at its version, as
// caches.get does; when the cache kept is of an earlier version that holds
// all the namespace's links and postings, and the namespace only grew
// since (grownSQL), the new one is that one with the records written
// since added (grow; a copy if an open view uses it), rather than empty:
// the searches that follow a write read no postings or links of the
// namespace again. The view uses the cache until it closes.
func (v *view) cache(ctx context.Context, info nsInfo) (*nsCache, error) {
	defer v.saw(info.name, true)
	cs := &v.m.caches
	cs.mu.Lock()
	cur := cs.byNS[info.id]
	if cur == nil || cur.version == info.version() || !cur.mayGrowTo(info) {
		cs.mu.Unlock()
		return cs.getFor(v, info), nil
	}
	// A cache no open view uses is taken out, grown in place and put
	// back; another is copied.
	inPlace := cur.users == 0
	if inPlace {
		delete(cs.byNS, info.id)
	}
	cs.mu.Unlock()
	c, err := v.grow(ctx, info, cur, inPlace)
	if err != nil || c == nil {
		return cs.getFor(v, info), err
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.useLocked(v, c)
	if now := cs.byNS[info.id]; now != nil && now != cur && now.isComplete() {
		return c, nil // for this search only: another search's is kept
	}
	cs.byNS[info.id] = c
	return c, nil
}

// isComplete reports c.complete, under c.mu.
func (c *nsCache) isComplete() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.complete
}

// mayGrowTo reports whether info, another version of c's namespace, may
// hold c's records and some more only (grownSQL tells), and c holds all
// of the namespace's links and postings.
func (c *nsCache) mayGrowTo(info nsInfo) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.growableLocked() && c.version.mayGrowTo(info)
}

// growableLocked reports whether c holds all of its namespace's links and
// postings, so that a later version of the namespace that only grew may
// be made from it (grow). Under c.mu.
func (c *nsCache) growableLocked() bool {
	return c.complete && c.allPost && c.lastSeq > 0 && !c.full.Load()
}

// grow returns a cache of info's version made of cur's links, postings
// and episode lengths with those of the records written since cur's
// version added, read in the view's snapshot (one round trip), or nil if
// the namespace did not only grow since: cur itself, inPlace (no view
// uses it), or a copy. The records (docs) are carried over too, with the
// new ones' when cur holds all of them: a search's records hold nothing
// that a write changes in place without adding or ending a record
// (scanDocs).
func (v *view) grow(ctx context.Context, info nsInfo, cur *nsCache, inPlace bool) (*nsCache, error) {
	cur.mu.Lock()
	lastSeq, base, allDocs := cur.lastSeq, cur.version, cur.allDocs
	cur.mu.Unlock()
	var g growth
	var recs []linkRow
	post := map[string][]posting{}
	var docs map[int64]engine.Doc
	if allDocs {
		docs = map[int64]engine.Doc{}
	}
	if got, gg, ok := v.since.after(info.id, lastSeq); ok {
		v.m.caches.prefetched.Add(1)
		g = gg
		for _, r := range got {
			recs = append(recs, r.link)
			for i, t := range r.terms {
				post[t] = append(post[t], posting{seq: r.link.seq, tf: r.tfs[i], dl: r.dl, episode: r.link.l.Episode})
			}
			if allDocs {
				docs[r.link.seq] = r.doc
			}
		}
	} else if err := v.readGrowth(ctx, info, lastSeq, &g, &recs, post, docs); err != nil {
		return nil, err
	}
	if !g.from(base, info) || int64(len(recs)) != g.count {
		return nil, nil
	}
	c := cur
	if inPlace {
		// No view uses it (nor will: it is out of caches).
		c.mu.Lock()
		c.version = info.version()
		c.held -= len(c.around)
		c.around = map[int64]bool{}
	} else {
		c = newCache(info.version())
		cur.mu.Lock()
		if cur.version != base {
			// Grown in place by another search meanwhile (its views
			// closed): it holds records past lastSeq already.
			cur.mu.Unlock()
			return nil, nil
		}
		c.table = cur.table.clone()
		// Clipped: cur may still be grown in place (once no view uses
		// it), appending past its lists' lengths, so the copy's lists
		// must not share that room; growing them reallocates.
		c.post = make(map[string][]posting, len(cur.post))
		for t, ps := range cur.post {
			c.post[t] = slices.Clip(ps)
		}
		c.epLen = maps.Clone(cur.epLen)
		c.docs = maps.Clone(cur.docs)
		c.held = cur.held - len(cur.around)
		cur.mu.Unlock()
		c.mu.Lock()
	}
	defer c.mu.Unlock()
	maps.Copy(c.docs, docs)
	c.allDocs = allDocs
	// An episode's length is the sum of its records' (add_record,
	// writeEpisodes): one the cache holds is longer now by the lengths of
	// the records written since that joined it, read with their postings,
	// and one that a record written since began (its id is the record's
	// seq) holds only records written since. A record without a term,
	// whose length is not among the postings, has its episode's read
	// again.
	dl := make(map[int64]int32, len(recs))
	for _, ps := range post {
		for _, p := range ps {
			dl[p.seq] = p.dl
		}
	}
	began := 0 // episodes kept that the cache did not hold
	for _, r := range recs {
		if r.l.Episode == r.seq {
			c.epLen[r.seq] = 0
			began++
		}
	}
	for _, r := range recs {
		c.table.add(r.seq, r.l)
		if l, ok := c.epLen[r.l.Episode]; ok {
			if d, known := dl[r.seq]; known {
				c.epLen[r.l.Episode] = l + float64(d)
			} else {
				delete(c.epLen, r.l.Episode)
			}
		}
	}
	n := len(recs) + len(docs) + began
	for t, ps := range post {
		// In place: no view uses c, and a list's room past its length is
		// c's alone (a copy's lists are clipped), so appending leaves
		// every list a search or another cache holds as it was.
		c.post[t] = append(c.post[t], ps...)
		n += len(ps)
	}
	c.room(n)
	c.complete, c.allPost, c.lastSeq = true, true, g.last
	v.m.caches.grown.Add(1)
	return c, nil
}

// readGrowth reads, in the view's snapshot (one round trip), the growth of
// info's namespace since seq lastSeq (grownSQL), and the links, postings
// and (docs not nil) records of the records written since: what grow
// takes from the view's since when that holds them.
func (v *view) readGrowth(ctx context.Context, info nsInfo, lastSeq int64, g *growth, recs *[]linkRow, post map[string][]posting, docs map[int64]engine.Doc) error {
	var b pgx.Batch
	b.Queue(grownSQL, info.id, lastSeq).QueryRow(g.scan)
	b.Queue(`SELECT `+linkCols+` FROM records WHERE ns = $1 AND seq > $2 ORDER BY seq`, info.id, lastSeq).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			r, err := scanLink(rows)
			if err != nil {
				return err
			}
			*recs = append(*recs, r)
		}
		return rows.Err()
	})
	b.Queue(recordPostingsSQL+` ORDER BY r.seq`, info.id, lastSeq).Query(func(rows pgx.Rows) error {
		return scanPostings(rows, post)
	})
	if docs != nil {
		b.Queue(docsSQL(`r.ns = $1 AND r.seq > $2`), info.id, lastSeq).Query(func(rows pgx.Rows) error {
			return scanDocs(rows, docs)
		})
	}
	if err := v.q.SendBatch(ctx, &b).Close(); err != nil {
		return v.m.wrap(ctx, "query: records written since", err)
	}
	return nil
}
