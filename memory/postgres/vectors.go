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
	pgv "github.com/pgvector/pgvector-go"

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

// onlyGrew reports whether the copy nv is ready and info, another
// version of its namespace, may differ from it by added records only
// (nsVersion.mayGrowTo). Under nv.mu's read lock.
func (nv *nsVectors) onlyGrew(info nsInfo) bool {
	return nv.ready && nv.version != info.version() && nv.version.mayGrowTo(info)
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
