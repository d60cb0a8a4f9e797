package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	pgv "github.com/pgvector/pgvector-go"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/memory/engine"
	"github.com/agentmem/agentmem/vdb/inmem"
)

// A namespace of up to vectorCacheRecords records has its chunks' vectors
// kept in this process too, in the exact search of a directory store
// (vdb/inmem with int8 codes, by columns too for a lexical embedder,
// rescored exactly): at such sizes scanning
// them here costs less than the HNSW search in the server (7 to 14 ms at
// 10,000 records on two busy cores; at 100,000 records, 300,000 chunks,
// 25 ms in the server, the median of 200 queries, against a hybrid query's
// whole 14 to 33 ms in a store directory), and it is exact where HNSW is
// not. Reading the copy of 100,000 records takes 20 to 30 s in the
// background (two busy cores). Like the keyword caches (cache.go), the copy is of a version of
// the namespace: a search whose snapshot sees that version reads it; one
// that sees another (a write since, here or on another server) searches
// in the server as before and asks for the copy to be brought up to date
// in the background: the chunks' ids, times and validity are read again,
// and the vectors of the chunks not held yet. Writes pay nothing.
//
// When the namespace only grew since the copy's version (mayGrowTo
// and grownSQL: records added after the copy's newest, none forgotten,
// replaced or superseding another), a search reads the copy all the same
// and scans the chunks written since exactly in the server (tailVectors:
// one round trip, through records_ns_seq and chunks_seq), merged with the
// copy's by score and chunk id as one exact search would order them. Up
// to inlineTail records' chunks are read whole, with their vectors, and
// the search adds them to the copy (appendTail), as an agent writes a turn
// and searches, again and again; past that the refresh reads those chunks
// only and adds them (appendVectors), not every chunk's metadata.
//
// WithVectorCache bounds the chunks kept over all the namespaces of a
// Memory. A variable so that tests can change it before a Memory opens.
var vectorCacheRecords int64 = 150_000

// chunkMeta is what the vector path's filter and results need of a chunk.
type chunkMeta struct {
	seq          int64
	ord          int32
	time         time.Time
	since, until time.Time // until zero: holds still
}

// nsVectors is the copy of a namespace's chunks. Searches read it under
// mu's read lock; a refresh changes it under its write lock.
type nsVectors struct {
	mu      sync.RWMutex
	version nsVersion // of the copy, when ready
	ready   bool
	// lastSeq is the namespace's newest record's seq at the copy's
	// version: a record written since has a larger one (writers of a
	// namespace hold its row's lock from taking their seqs to commit).
	lastSeq    int64
	db         *inmem.DB
	meta       map[int64]chunkMeta // by chunk id
	refreshing atomic.Bool
	// next is when the next refresh may start (UnixNano): ten times the
	// last one's time after it started, so that a namespace written to
	// all the time costs at most a tenth of a core in refreshes whose
	// copy no search reads (each write makes it stale again). nextAppend
	// is the same for a refresh of a namespace that only grew since the
	// copy, which adds the chunks written since (appendVectors): after
	// one that did, ten times its time; after one that read the copy,
	// as next. A copy just read (seconds at 100,000 records) would
	// otherwise keep the first writes after it from being added for ten
	// times that, while every search scans them in the server.
	next, nextAppend atomic.Int64
}

// vectorCaches are a Memory's copies of namespaces' vectors.
type vectorCaches struct {
	mu   sync.Mutex
	byNS map[int32]*nsVectors
	held int // chunks in all of them
	// wg counts the refreshes running; ctx ends them (Close).
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
	// records is vectorCacheRecords when the Memory opened, chunks
	// WithVectorCache's bound.
	records int64
	chunks  int
	// searched counts the searches answered from a copy, tailSearched
	// those of them that scanned the chunks written since in the server
	// (tests, benchmarks).
	searched, tailSearched atomic.Int64
	// appended counts the refreshes that added the chunks written since
	// to a copy (appendVectors) rather than reading it again.
	appended atomic.Int64
	// prefetched counts the tails a search took from its view's since.
	prefetched atomic.Int64
	// copying: refreshCopies is reading copies.
	copying atomic.Bool
}

// reserve counts n more chunks as held by the copies if they then fit in
// WithVectorCache's bound (n may be negative), and reports whether it did.
func (vc *vectorCaches) reserve(n int) bool {
	vc.mu.Lock()
	defer vc.mu.Unlock()
	if vc.held+n > vc.chunks {
		return false
	}
	vc.held += n
	return true
}

// release gives back n chunks that reserve counted.
func (vc *vectorCaches) release(n int) {
	vc.mu.Lock()
	vc.held -= n
	vc.mu.Unlock()
}

// get returns the copy of namespace id, made empty if there is none.
func (vc *vectorCaches) get(id int32) *nsVectors {
	vc.mu.Lock()
	defer vc.mu.Unlock()
	nv := vc.byNS[id]
	if nv == nil {
		if vc.byNS == nil {
			vc.byNS = map[int32]*nsVectors{}
		}
		nv = &nsVectors{}
		vc.byNS[id] = nv
	}
	return nv
}

// close ends the refreshes and lets the copies go.
func (vc *vectorCaches) close() {
	vc.mu.Lock()
	if vc.cancel != nil {
		vc.cancel() // under mu: background starts no goroutine after it
	}
	vc.mu.Unlock()
	vc.wg.Wait()
	vc.mu.Lock()
	nvs := vc.byNS
	vc.byNS, vc.held = nil, 0
	vc.mu.Unlock()
	for _, nv := range nvs {
		nv.mu.Lock()
		if nv.db != nil {
			nv.db.Close()
		}
		nv.db, nv.meta, nv.ready = nil, nil, false
		nv.mu.Unlock()
	}
}

// cachedVectors answers the vector path of a search of one namespace
// (info, as the search's snapshot sees it) from the namespace's copy,
// with ok, when the copy is of that version, or of an earlier one that
// the namespace only grew from (with the chunks written since, scanned in
// the server: tailVectors); otherwise, and when the copy is not of that
// version, it asks for a refresh, and answers !ok in the first case. unit
// is the normalised query. A few chunks written since, read with their
// vectors, are added to the copy after the search (appendTail).
func (v *view) cachedVectors(ctx context.Context, info nsInfo, scope engine.Scope, unit []float32, n int, minScore float32) (out []engine.Chunk[int64], exhausted, ok bool, err error) {
	m := v.m
	if info.textDocs > m.vecs.records || m.vecs.chunks <= 0 {
		return nil, false, false, nil
	}
	nv := m.vecs.get(info.id)
	defer v.saw(info.name, false)
	// A refresh holding the copy is not waited for.
	if !nv.mu.TryRLock() {
		return nil, false, false, nil
	}
	hits, exhausted, ok, add, err := v.fromCopy(ctx, nv, info, scope, unit, n, minScore)
	nv.mu.RUnlock()
	if add != nil {
		m.appendTail(ctx, nv, info, add)
	}
	return chunksOf(hits), exhausted, ok, err
}

// copiesVectors answers the vector path of a search of several
// namespaces (nss, as the search's snapshot sees them) from their copies,
// with ok, when every one is of that version: the best d of each, merged
// in the order of the server's exact search of them all. Otherwise it
// asks for the others to be read, one after another (refreshCopies), and
// answers !ok: the server searches them. The namespaces together may hold
// as many records as one namespace's copy may, and as many chunks as the
// copies may (WithVectorCache; estimated from the chunks a record of the
// copies read so far). Measured (BenchmarkAllNamespaces, 10,000 records
// in 10 namespaces): hybrid p50 of a search of all of them 1.53–1.61× a
// store directory's, against 6.6–7.2× before, the server's exact scan of
// their 30,000 chunks 33 ms of its 35–39.
func (v *view) copiesVectors(ctx context.Context, nss []nsInfo, scope engine.Scope, unit []float32, n int, minScore float32) (_ []engine.Chunk[int64], exhausted, ok bool, err error) {
	m := v.m
	if m.vecs.chunks <= 0 {
		return nil, false, false, nil
	}
	var records int64
	for _, info := range nss {
		records += info.textDocs
	}
	if records > m.vecs.records {
		return nil, false, false, nil
	}
	nvs := make([]*nsVectors, 0, len(nss))
	defer func() {
		for _, nv := range nvs {
			nv.mu.RUnlock()
		}
	}()
	var stale []nsInfo
	var held, heldRecords int64 // by the copies read
	for _, info := range nss {
		nv := m.vecs.get(info.id)
		// A refresh holding a copy is not waited for.
		if !nv.mu.TryRLock() {
			return nil, false, false, nil
		}
		nvs = append(nvs, nv)
		if nv.ready {
			held, heldRecords = held+int64(len(nv.meta)), heldRecords+nv.version.textDocs
		}
		if !nv.ready || nv.version != info.version() {
			stale = append(stale, info)
		}
	}
	// Namespaces whose chunks would not fit, by the copies' chunks a
	// record, are not read.
	if heldRecords > 0 && records*held/heldRecords > int64(m.vecs.chunks) {
		return nil, false, false, nil
	}
	if len(stale) > 0 {
		m.refreshCopies(stale)
		return nil, false, false, nil
	}
	d := min(n, maxVectorFetch)
	var all []copyHit
	// Once d chunks are found, the d-th best score is a floor for the
	// namespaces that follow: a chunk below it cannot make the first d
	// (one that ties may, by its id), and a scan that knows it skips
	// blocks of rows (as a store directory searches its namespaces).
	exhausted = true
	floor, floored := minScore, false
	for i, info := range nss {
		hits, ex, _, _, err := v.fromCopy(ctx, nvs[i], info, scope, unit, n, floor)
		if err != nil {
			return nil, false, true, err
		}
		all = append(all, hits...)
		exhausted = exhausted && ex
		// Cut to the best d once twice that many are held: each cut sorts.
		if len(all) >= 2*d && i < len(nss)-1 {
			slices.SortFunc(all, byScore)
			all = all[:d]
			floor, floored = max(floor, all[d-1].score), true
		}
	}
	slices.SortFunc(all, byScore)
	exhausted = exhausted && !floored && len(all) <= d || d >= maxVectorFetch
	return chunksOf(all[:min(len(all), d)]), exhausted, true, nil
}

// copyHit is a chunk a search found in a copy, with its score.
type copyHit struct {
	id    int64
	c     chunkMeta
	score float32
}

// byScore orders hits as the server's searches do: by score, then chunk
// id.
func byScore(a, b copyHit) int {
	return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.id, b.id))
}

// chunksOf returns hits as the engine's chunks.
func chunksOf(hits []copyHit) []engine.Chunk[int64] {
	out := make([]engine.Chunk[int64], len(hits))
	for i, h := range hits {
		out[i] = engine.Chunk[int64]{Record: h.c.seq, Index: int(h.c.ord), Score: float64(h.score)}
	}
	return out
}

// tail is what a search read of the chunks written since a copy, all of
// them with their vectors (inlineTail): base is the copy's version then,
// last the namespace's newest seq.
type tail struct {
	base   nsVersion
	last   int64
	chunks []tailChunk
}

// fromCopy is cachedVectors under nv.mu's read lock, its hits in order
// (byScore). add is the tail to add to the copy, if the search read one
// whole.
func (v *view) fromCopy(ctx context.Context, nv *nsVectors, info nsInfo, scope engine.Scope, unit []float32, n int, minScore float32) (out []copyHit, exhausted, ok bool, add *tail, err error) {
	m := v.m
	filter := filters([]nsInfo{info}, scope)
	keep := func(c chunkMeta) bool {
		return scope.Contains(c.time) && (!filter || !scope.AsOf.Before(c.since) && (c.until.IsZero() || scope.AsOf.Before(c.until)))
	}
	d := min(n, maxVectorFetch)
	var kept []copyHit
	tailAll := true // the chunks written since the copy: all found
	if !nv.ready || nv.version != info.version() {
		if !nv.ready || !nv.version.mayGrowTo(info) {
			m.refreshVectors(info.name, nv, false)
			return nil, false, false, nil, nil
		}
		whole := info.textDocs-nv.version.textDocs <= inlineTail
		chunks, last, grown, err := v.tailVectors(ctx, info, nv, scope, filter, unit, d, whole)
		if err != nil || !grown {
			if err == nil {
				m.refreshVectors(info.name, nv, false)
			}
			return nil, false, err != nil, nil, err
		}
		found := 0 // in the scope
		for _, t := range chunks {
			if whole && !keep(t.c) {
				continue
			}
			found++
			if t.score >= minScore {
				kept = append(kept, copyHit{t.id, t.c, t.score})
			}
		}
		if whole {
			add = &tail{base: nv.version, last: last, chunks: chunks}
		} else {
			// Ordered by score: past a chunk cut by minScore, or the
			// last of fewer than d, there is none to find.
			tailAll = found < d || len(kept) < found
			m.refreshVectors(info.name, nv, true)
		}
		m.vecs.tailSearched.Add(1)
	}
	m.vecs.searched.Add(1)
	total := nv.db.Len()
	fetch := d
	if filter || scope.Timed() {
		fetch = 2 * d
	}
	var own []copyHit
	all := false // the last search found every chunk it could
	for {
		fetch = min(fetch, total)
		if fetch == 0 {
			all = true
			break
		}
		res, err := nv.db.SearchMinScore(ctx, unit, fetch, minScore)
		if err != nil {
			return nil, false, true, nil, fmt.Errorf("postgres: vector search: %w", err)
		}
		own = own[:0]
		for _, r := range res {
			if c, ok := nv.meta[r.ID]; ok && keep(c) {
				own = append(own, copyHit{r.ID, c, r.Score})
			}
		}
		all = len(res) < fetch || fetch >= total
		if all || len(own) >= d {
			break
		}
		fetch *= 4
	}
	kept = append(kept, own...)
	// Ties by chunk id, as the server's searches order them.
	slices.SortStableFunc(kept, byScore)
	exhausted = all && tailAll && len(kept) <= d || d >= maxVectorFetch
	return kept[:min(len(kept), d)], exhausted, true, add, nil
}

// inlineTail is the most records written since a copy whose chunks a
// search reads whole, with their vectors, and adds to the copy after it
// (appendTail): an agent's turns, written one by one between searches,
// never wait for a refresh.
const inlineTail = 64

// appendTail adds t's chunks to the copy nv, making it of version info,
// if it is still of t's base version and no search or refresh holds it.
func (m *Memory) appendTail(ctx context.Context, nv *nsVectors, info nsInfo, t *tail) {
	if !nv.mu.TryLock() {
		return
	}
	defer nv.mu.Unlock()
	_, _ = m.addToCopy(ctx, nv, t.base, info, t.last, t.chunks) // not added: the refresh reads them
}

// addToCopy adds chunks, with their vectors, to the copy nv, making it of
// version info with newest seq last, if it is still of version base and
// they fit in WithVectorCache's bound, and reports whether it did. Under
// nv.mu's write lock.
func (m *Memory) addToCopy(ctx context.Context, nv *nsVectors, base nsVersion, info nsInfo, last int64, chunks []tailChunk) (bool, error) {
	if !nv.ready || nv.version != base || nv.db == nil {
		return false, nil
	}
	vc := &m.vecs
	if !vc.reserve(len(chunks)) {
		return false, nil
	}
	if len(chunks) > 0 {
		ids := make([]int64, len(chunks))
		vecs := make([][]float32, len(chunks))
		for i, c := range chunks {
			ids[i], vecs[i] = c.id, c.vec
		}
		if err := nv.db.Add(ctx, ids, vecs); err != nil {
			vc.release(len(chunks))
			return false, err
		}
	}
	for _, c := range chunks {
		nv.meta[c.id] = c.c
	}
	nv.version, nv.lastSeq = info.version(), last
	vc.appended.Add(1)
	return true, nil
}

// mayGrowTo reports whether info, a later version of the namespace than
// v, may differ from it by added records only, which grownSQL then tells
// (growth.from): more records, at most maxTail, none ended since.
func (v nsVersion) mayGrowTo(info nsInfo) bool {
	return info.ended == v.ended && info.textDocs > v.textDocs && info.textDocs-v.textDocs <= maxTail
}

// maxTail is the most records written since a namespace's copy that a
// search scans in the server beside the copy (tailVectors): the
// namespaces of exactRecords records are scanned whole.
const maxTail = exactRecords

// grownSQL counts namespace $1's records after seq $2, those of them
// that supersede another, and gives its newest seq: the namespace only
// grew since a copy of lastSeq $2 and textDocs t when the count is the
// difference of textDocs (none forgotten or replaced: a record replaced
// is deleted) and none supersedes (which changes another's validity).
const grownSQL = `SELECT count(*), count(*) FILTER (WHERE supersedes <> ''), coalesce(max(seq), $2) FROM records WHERE ns = $1 AND seq > $2`

// growth is grownSQL's answer: the records after the copy's newest seq,
// those of them that supersede another, and the namespace's newest seq.
type growth struct{ count, superseding, last int64 }

// scan reads grownSQL's row.
func (g *growth) scan(row pgx.Row) error { return row.Scan(&g.count, &g.superseding, &g.last) }

// from reports whether the namespace, now info, only grew from a copy of
// version base: as many records after the copy's newest as textDocs grew
// by, none of them superseding another.
func (g growth) from(base nsVersion, info nsInfo) bool {
	return g.superseding == 0 && g.count == info.textDocs-base.textDocs
}

// tailChunks is the condition on the chunks of namespace $1's records
// after seq $2: their seqs found through records_ns_seq, the chunks
// through chunks_seq, whatever the planner estimates a range of seqs
// to hold (measured at 10,000 records loaded: 2 ms through a BitmapAnd
// with chunks_ns, all the namespace's 30,000 chunks; 20 ms a sequential
// scan, with the seq range taken for a third of the table's rows).
const tailChunks = `seq = ANY(ARRAY(SELECT seq FROM records WHERE ns = $1 AND seq > $2))`

// tailChunk is a chunk written since a copy, as tailVectors and
// appendVectors read it.
type tailChunk struct {
	id    int64
	c     chunkMeta
	score float32
	vec   []float32
}

// tailVectors scans exactly, in the view's snapshot (info), the chunks of
// the records written to the namespace since the copy nv, and returns
// those in the scope, the best d of them (whole: all of them, in the
// scope or not, with their vectors), with the namespace's newest seq and
// grown: whether the namespace only grew since the copy (otherwise the
// chunks are not read). One round trip. Under nv.mu's read lock.
func (v *view) tailVectors(ctx context.Context, info nsInfo, nv *nsVectors, scope engine.Scope, filter bool, unit []float32, d int, whole bool) (_ []tailChunk, last int64, grown bool, err error) {
	if whole {
		// Read when the view opened, if this process wrote them.
		if out, g, ok := v.since.chunksAfter(info.id, nv.lastSeq, unit); ok {
			v.m.vecs.prefetched.Add(1)
			if !g.from(nv.version, info) {
				return nil, 0, false, nil
			}
			return out, g.last, true, nil
		}
	}
	args := []any{info.id, nv.lastSeq, pgv.NewVector(unit)}
	arg := func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }
	conds := []string{tailChunks}
	cols, limit := "", fmt.Sprintf(` ORDER BY %s DESC, id LIMIT %d`, v.m.innerProduct("$3"), d)
	if whole {
		cols, limit = ", embedding", ""
	} else {
		if !scope.From.IsZero() {
			conds = append(conds, "time >= "+arg(scope.From))
		}
		if !scope.To.IsZero() {
			conds = append(conds, "time < "+arg(scope.To))
		}
		if filter {
			at := arg(scope.AsOf)
			conds = append(conds, "coalesce(valid_from, time) <= "+at, "(valid_until IS NULL OR valid_until > "+at+")")
		}
	}
	var batch pgx.Batch
	q := v.q
	if v.c2 != nil {
		q = v.c2
		if err := v.begin2(&batch); err != nil {
			return nil, 0, false, err
		}
	}
	var g growth
	batch.Queue(grownSQL, info.id, nv.lastSeq).QueryRow(g.scan)
	var out []tailChunk
	batch.Queue(`SELECT `+chunkMetaCols+`, `+v.m.innerProduct("$3")+cols+` FROM chunks WHERE `+
		strings.Join(conds, " AND ")+limit, args...).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var t tailChunk
			var score float64
			more := []any{&score}
			vec := vecScan{sparse: v.m.sparse}
			if whole {
				more = append(more, vec.dest())
			}
			var err error
			if t.id, t.c, err = scanChunk(rows, more...); err != nil {
				return err
			}
			t.score = float32(score)
			if whole {
				t.vec = vec.slice()
			}
			out = append(out, t)
		}
		return rows.Err()
	})
	if err := q.SendBatch(ctx, &batch).Close(); err != nil {
		return nil, 0, false, v.m.wrap(ctx, "query: vector search of new chunks", err)
	}
	if !g.from(nv.version, info) {
		return nil, 0, false, nil
	}
	return out, g.last, true, nil
}

// refreshVectors brings the copy nv of namespace name up to date in the
// background, unless a refresh of it is running already or the last one
// was too recent (nsVectors.next; nextAppend when grown: the namespace
// only grew since the copy, as far as the search that asks knows).
func (m *Memory) refreshVectors(name string, nv *nsVectors, grown bool) {
	if !m.mayRefresh(nv, grown) {
		return
	}
	if !m.background(func(ctx context.Context) { m.refresh(ctx, name, nv) }) {
		nv.refreshing.Store(false)
	}
}

// mayRefresh reports whether a refresh of the copy nv may start now (see
// refreshVectors), and if so marks it running (nv.refreshing): the
// caller runs refresh.
func (m *Memory) mayRefresh(nv *nsVectors, grown bool) bool {
	vc := &m.vecs
	next := &nv.next
	if grown {
		next = &nv.nextAppend
	}
	return vc.ctx != nil && vc.ctx.Err() == nil && time.Now().UnixNano() >= next.Load() && nv.refreshing.CompareAndSwap(false, true)
}

// refresh brings the copy nv of namespace name up to date (loadVectors)
// and sets when the next refresh may start; mayRefresh marked it running.
func (m *Memory) refresh(ctx context.Context, name string, nv *nsVectors) {
	defer nv.refreshing.Store(false)
	start := time.Now()
	appended := false
	defer func() {
		next := start.Add(10 * time.Since(start)).UnixNano()
		nv.nextAppend.Store(next)
		if !appended {
			nv.next.Store(next)
		}
	}()
	var err error
	if appended, err = m.loadVectors(ctx, name, nv); err != nil && ctx.Err() == nil {
		m.opts.logger.Warn("postgres: keeping a namespace's vectors in process", "namespace", name, "err", m.wrap(ctx, "read vectors", err))
	}
}

// refreshCopies brings the copies of nss up to date in the background,
// one namespace after another (a search of many small namespaces would
// otherwise set off as many reads at once, each holding a connection of
// the pool), unless such a run is going on already; each namespace's
// refresh waits as refreshVectors' does.
func (m *Memory) refreshCopies(nss []nsInfo) {
	vc := &m.vecs
	if !vc.copying.CompareAndSwap(false, true) {
		return
	}
	if !m.background(func(ctx context.Context) {
		defer vc.copying.Store(false)
		for _, info := range nss {
			if ctx.Err() != nil {
				return
			}
			nv := vc.get(info.id)
			nv.mu.RLock()
			grown := nv.ready && nv.version != info.version() && nv.version.mayGrowTo(info)
			nv.mu.RUnlock()
			if !m.mayRefresh(nv, grown) {
				continue
			}
			m.refresh(ctx, info.name, nv)
			nv.mu.RLock()
			ready := nv.ready
			nv.mu.RUnlock()
			if !ready {
				return // it did not fit (WithVectorCache): nor do the namespaces together
			}
		}
	}) {
		vc.copying.Store(false)
	}
}

// background runs f in a goroutine that Close ends (its context) and
// waits for, within five minutes, and reports whether it did: not after
// Close.
func (m *Memory) background(f func(ctx context.Context)) bool {
	vc := &m.vecs
	vc.mu.Lock()
	if vc.ctx == nil || vc.ctx.Err() != nil {
		vc.mu.Unlock()
		return false
	}
	vc.wg.Add(1)
	vc.mu.Unlock()
	go func() {
		defer vc.wg.Done()
		ctx, cancel := context.WithTimeout(vc.ctx, 5*time.Minute)
		defer cancel()
		f(ctx)
	}()
	return true
}

// loadVectors reads namespace name's chunks in a snapshot of their own
// and makes nv a copy of them at that snapshot's version: the vectors of
// the chunks it does not hold are read, those of chunks gone are dropped.
// appended reports that it only read the chunks written since the copy
// (appendVectors).
func (m *Memory) loadVectors(ctx context.Context, name string, nv *nsVectors) (appended bool, err error) {
	c, err := m.acquire(ctx)
	if err != nil {
		return false, err
	}
	defer c.Release()
	tx, err := c.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return false, err
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // read only
	nss, err := namespaces(ctx, tx, name)
	if err != nil || len(nss) != 1 || nss[0].textDocs > m.vecs.records {
		return false, err
	}
	info := nss[0]
	nv.mu.RLock()
	same := nv.ready && nv.version == info.version()
	grow := nv.ready && !same && nv.version.mayGrowTo(info)
	nv.mu.RUnlock()
	if same {
		return false, nil
	}
	if grow {
		if done, err := m.appendVectors(ctx, tx, info, nv); err != nil || done {
			return err == nil, err
		}
	}
	var lastSeq int64
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM records WHERE ns = $1`, info.id).Scan(&lastSeq); err != nil {
		return false, err
	}
	nv.mu.RLock()
	empty := len(nv.meta) == 0
	nv.mu.RUnlock()
	if empty {
		return false, m.readCopy(ctx, tx, info, lastSeq, nv)
	}
	rows, err := tx.Query(ctx, `SELECT `+chunkMetaCols+` FROM chunks WHERE ns = $1`, info.id)
	if err != nil {
		return false, err
	}
	meta := map[int64]chunkMeta{}
	for rows.Next() {
		id, c, err := scanChunk(rows)
		if err != nil {
			rows.Close()
			return false, err
		}
		meta[id] = c
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, err
	}
	nv.mu.RLock()
	var need, gone []int64
	for id := range meta {
		if _, ok := nv.meta[id]; !ok {
			need = append(need, id)
		}
	}
	for id := range nv.meta {
		if _, ok := meta[id]; !ok {
			gone = append(gone, id)
		}
	}
	grown := len(meta) - len(nv.meta)
	nv.mu.RUnlock()
	vc := &m.vecs
	if !vc.reserve(grown) {
		return false, nil
	}
	done := false
	defer func() {
		if !done { // the copy keeps what it held
			vc.release(grown)
		}
	}()
	slices.Sort(need)
	vecs := make([][]float32, 0, len(need))
	for i := 0; i < len(need); i += 4096 {
		part := need[i:min(i+4096, len(need))]
		rows, err := tx.Query(ctx, `SELECT embedding FROM chunks WHERE id = ANY($1) ORDER BY id`, part)
		if err != nil {
			return false, err
		}
		got, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) ([]float32, error) {
			v := vecScan{sparse: m.sparse}
			err := row.Scan(v.dest())
			return v.slice(), err
		})
		if err != nil {
			return false, err
		}
		if len(got) != len(part) {
			return false, fmt.Errorf("read %d vectors of %d chunks", len(got), len(part))
		}
		vecs = append(vecs, got...)
	}
	nv.mu.Lock()
	defer nv.mu.Unlock()
	// nv held chunks (readCopy made it otherwise), so it has its db.
	nv.ready = false
	if len(gone) > 0 {
		if _, err := nv.db.Delete(ctx, gone...); err != nil {
			return false, err
		}
	}
	if len(need) > 0 {
		if err := nv.db.Add(ctx, need, vecs); err != nil {
			return false, err
		}
	}
	nv.meta, nv.version, nv.lastSeq, nv.ready = meta, info.version(), lastSeq, true
	done = true
	return false, nil
}

// newCopy returns an empty copy of a namespace's vectors, with room for n:
// int8 codes, by columns too for a lexical embedder, as a store directory
// keeps its (longterm's vectorSpec): a query reads only its few nonzero
// dimensions.
func (m *Memory) newCopy(n int) (*inmem.DB, error) {
	opts := []inmem.Option{inmem.WithCodes(inmem.Int8), inmem.WithCapacity(n)}
	if embed.KindOf(m.emb) == embed.Lexical {
		opts = append(opts, inmem.WithColumns())
	}
	return inmem.New(m.dim, opts...)
}

// copyBatch is how many vectors readCopy adds to the copy at a time.
const copyBatch = 4096

// readCopy makes nv, which holds nothing, a copy of namespace info's
// chunks at tx's snapshot, where its newest record is lastSeq: one scan
// of its chunks, metadata and vectors together, added to a new copy a
// batch at a time while the rows arrive, without nv's lock until it is
// swapped in (loadVectors reads what a copy lacks by ids instead: at
// 100,000 records, 300,163 chunks, a scan for the metadata and 4,096-id
// reads of the vectors took 3.7 s and adding them 3.2 s more, one run).
// Nothing is kept when the chunks do not fit in WithVectorCache's bound.
func (m *Memory) readCopy(ctx context.Context, tx pgx.Tx, info nsInfo, lastSeq int64, nv *nsVectors) error {
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM chunks WHERE ns = $1`, info.id).Scan(&n); err != nil {
		return err
	}
	vc := &m.vecs
	if !vc.reserve(n) {
		return nil
	}
	db, err := m.newCopy(n)
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			db.Close()
			vc.release(n)
		}
	}()
	rows, err := tx.Query(ctx, `SELECT `+chunkMetaCols+`, embedding FROM chunks WHERE ns = $1`, info.id)
	if err != nil {
		return err
	}
	defer rows.Close()
	meta := make(map[int64]chunkMeta, n)
	ids := make([]int64, 0, copyBatch)
	vecs := make([][]float32, copyBatch)
	buf := make([]float32, copyBatch*m.dim)
	for i := range vecs {
		vecs[i] = buf[i*m.dim : (i+1)*m.dim : (i+1)*m.dim]
	}
	flush := func() error {
		err := db.Add(ctx, ids, vecs[:len(ids)])
		ids = ids[:0]
		return err
	}
	for rows.Next() {
		v := vecScan{sparse: m.sparse}
		id, c, err := scanChunk(rows, v.dest())
		if err != nil {
			return err
		}
		meta[id] = c
		v.into(vecs[len(ids)])
		ids = append(ids, id)
		if len(ids) == copyBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	if len(meta) != n {
		// Not in tx's snapshot: cannot be; but the bound was reserved for n.
		return fmt.Errorf("read %d chunks of %d counted", len(meta), n)
	}
	nv.mu.Lock()
	defer nv.mu.Unlock()
	if len(nv.meta) > 0 {
		return nil // filled meanwhile (cannot be: one refresh at a time)
	}
	if nv.db != nil {
		nv.db.Close()
	}
	nv.db, nv.meta, nv.version, nv.lastSeq, nv.ready = db, meta, info.version(), lastSeq, true
	done = true
	return nil
}

// appendVectors brings the copy nv up to date with tx's snapshot, where
// the namespace is info, by adding the chunks of the records written
// since, if it only grew since the copy (grownSQL): done reports that it
// did, or that nothing is to be done (the copy changed meanwhile, or
// those chunks do not fit in WithVectorCache's bound); otherwise the
// caller reads the copy again.
func (m *Memory) appendVectors(ctx context.Context, tx pgx.Tx, info nsInfo, nv *nsVectors) (done bool, err error) {
	nv.mu.RLock()
	base, lastSeq := nv.version, nv.lastSeq
	nv.mu.RUnlock()
	var g growth
	if err := g.scan(tx.QueryRow(ctx, grownSQL, info.id, lastSeq)); err != nil {
		return false, err
	}
	if !g.from(base, info) {
		return false, nil
	}
	rows, err := tx.Query(ctx, `SELECT `+chunkMetaCols+`, embedding FROM chunks WHERE `+tailChunks+` ORDER BY id`, info.id, lastSeq)
	if err != nil {
		return false, err
	}
	var chunks []tailChunk
	for rows.Next() {
		var t tailChunk
		v := vecScan{sparse: m.sparse}
		if t.id, t.c, err = scanChunk(rows, v.dest()); err != nil {
			rows.Close()
			return false, err
		}
		t.vec = v.slice()
		chunks = append(chunks, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, err
	}
	nv.mu.Lock()
	defer nv.mu.Unlock()
	// Not added (the copy changed meanwhile, or the chunks do not fit):
	// nothing more to do either.
	_, err = m.addToCopy(ctx, nv, base, info, g.last, chunks)
	return true, err
}

// chunkMetaCols are the columns of a chunks row that scanChunk reads.
const chunkMetaCols = `id, seq, ord, time, coalesce(valid_from, time), valid_until`

// scanChunk reads a chunks row of chunkMetaCols, then of more.
func scanChunk(rows pgx.Rows, more ...any) (int64, chunkMeta, error) {
	var id int64
	var c chunkMeta
	var until pgtype.Timestamptz
	err := rows.Scan(append([]any{&id, &c.seq, &c.ord, &c.time, &c.since, &until}, more...)...)
	c.until = until.Time
	return id, c, err
}
