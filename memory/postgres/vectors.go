package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
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
	mu         sync.RWMutex
	version    nsVersion // of the copy, when ready
	ready      bool
	db         *inmem.DB
	meta       map[int64]chunkMeta // by chunk id
	refreshing atomic.Bool
	// next is when the next refresh may start (UnixNano): ten times the
	// last one's time after it started, so that a namespace written to
	// all the time costs at most a tenth of a core in refreshes whose
	// copy no search reads (each write makes it stale again).
	next atomic.Int64
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
	// searched counts the searches answered from a copy (tests).
	searched atomic.Int64
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
// with ok, when the copy is of that version; otherwise it asks for a
// refresh and answers !ok. unit is the normalised query.
func (m *Memory) cachedVectors(ctx context.Context, info nsInfo, scope engine.Scope, unit []float32, n int, minScore float32) (out []engine.Chunk[int64], exhausted, ok bool, err error) {
	if info.textDocs > m.vecs.records || m.vecs.chunks <= 0 {
		return nil, false, false, nil
	}
	nv := m.vecs.get(info.id)
	// A refresh holding the copy is not waited for.
	if !nv.mu.TryRLock() {
		return nil, false, false, nil
	}
	defer nv.mu.RUnlock()
	if !nv.ready || nv.version != info.version() {
		m.refreshVectors(info.name, nv)
		return nil, false, false, nil
	}
	m.vecs.searched.Add(1)
	filter := filters([]nsInfo{info}, scope)
	keep := func(c chunkMeta) bool {
		return scope.Contains(c.time) && (!filter || !scope.AsOf.Before(c.since) && (c.until.IsZero() || scope.AsOf.Before(c.until)))
	}
	d := min(n, maxVectorFetch)
	total := nv.db.Len()
	fetch := d
	if filter || scope.Timed() {
		fetch = 2 * d
	}
	type hit struct {
		id    int64
		c     chunkMeta
		score float32
	}
	var kept []hit
	all := false // the last search found every chunk it could
	for {
		fetch = min(fetch, total)
		if fetch == 0 {
			all = true
			break
		}
		res, err := nv.db.SearchMinScore(ctx, unit, fetch, minScore)
		if err != nil {
			return nil, false, true, fmt.Errorf("postgres: vector search: %w", err)
		}
		kept = kept[:0]
		for _, r := range res {
			if c, ok := nv.meta[r.ID]; ok && keep(c) {
				kept = append(kept, hit{r.ID, c, r.Score})
			}
		}
		all = len(res) < fetch || fetch >= total
		if all || len(kept) >= d {
			break
		}
		fetch *= 4
	}
	// Ties by chunk id, as the server's searches order them.
	slices.SortStableFunc(kept, func(a, b hit) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.id, b.id))
	})
	exhausted = all && len(kept) <= d || d >= maxVectorFetch
	kept = kept[:min(len(kept), d)]
	out = make([]engine.Chunk[int64], len(kept))
	for i, h := range kept {
		out[i] = engine.Chunk[int64]{Record: h.c.seq, Index: int(h.c.ord), Score: float64(h.score)}
	}
	return out, exhausted, true, nil
}

// refreshVectors brings the copy nv of namespace name up to date in the
// background, unless a refresh of it is running already.
func (m *Memory) refreshVectors(name string, nv *nsVectors) {
	vc := &m.vecs
	if vc.ctx == nil || vc.ctx.Err() != nil || time.Now().UnixNano() < nv.next.Load() || !nv.refreshing.CompareAndSwap(false, true) {
		return
	}
	started := m.background(func(ctx context.Context) {
		defer nv.refreshing.Store(false)
		start := time.Now()
		defer func() { nv.next.Store(start.Add(10 * time.Since(start)).UnixNano()) }()
		if err := m.loadVectors(ctx, name, nv); err != nil && ctx.Err() == nil {
			m.opts.logger.Warn("postgres: keeping a namespace's vectors in process", "namespace", name, "err", m.wrap(ctx, "read vectors", err))
		}
	})
	if !started {
		nv.refreshing.Store(false)
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
func (m *Memory) loadVectors(ctx context.Context, name string, nv *nsVectors) error {
	c, err := m.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	tx, err := c.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // read only
	nss, err := namespaces(ctx, tx, name)
	if err != nil || len(nss) != 1 || nss[0].textDocs > m.vecs.records {
		return err
	}
	info := nss[0]
	rows, err := tx.Query(ctx, `SELECT id, seq, ord, time, coalesce(valid_from, time), valid_until FROM chunks WHERE ns = $1`, info.id)
	if err != nil {
		return err
	}
	meta := map[int64]chunkMeta{}
	for rows.Next() {
		var id int64
		var c chunkMeta
		var until pgtype.Timestamptz
		if err := rows.Scan(&id, &c.seq, &c.ord, &c.time, &c.since, &until); err != nil {
			rows.Close()
			return err
		}
		c.until = until.Time
		meta[id] = c
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
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
	held := len(nv.meta)
	nv.mu.RUnlock()
	vc := &m.vecs
	vc.mu.Lock()
	fits := vc.held-held+len(meta) <= vc.chunks
	if fits {
		vc.held += len(meta) - held
	}
	vc.mu.Unlock()
	if !fits {
		return nil
	}
	done := false
	defer func() {
		if !done { // the copy keeps what it held
			vc.mu.Lock()
			vc.held -= len(meta) - held
			vc.mu.Unlock()
		}
	}()
	slices.Sort(need)
	vecs := make([][]float32, 0, len(need))
	for i := 0; i < len(need); i += 4096 {
		part := need[i:min(i+4096, len(need))]
		rows, err := tx.Query(ctx, `SELECT embedding FROM chunks WHERE id = ANY($1) ORDER BY id`, part)
		if err != nil {
			return err
		}
		got, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) ([]float32, error) {
			var v pgv.Vector
			err := row.Scan(&v)
			return v.Slice(), err
		})
		if err != nil {
			return err
		}
		if len(got) != len(part) {
			return fmt.Errorf("read %d vectors of %d chunks", len(got), len(part))
		}
		vecs = append(vecs, got...)
	}
	nv.mu.Lock()
	defer nv.mu.Unlock()
	if nv.db == nil {
		opts := []inmem.Option{inmem.WithCodes(inmem.Int8)}
		if embed.KindOf(m.emb) == embed.Lexical {
			// By columns too, as a store directory keeps a lexical
			// embedder's (longterm's vectorSpec): a query reads only
			// its few nonzero dimensions.
			opts = append(opts, inmem.WithColumns())
		}
		if nv.db, err = inmem.New(m.dim, opts...); err != nil {
			return err
		}
	}
	nv.ready = false
	if len(gone) > 0 {
		if _, err := nv.db.Delete(ctx, gone...); err != nil {
			return err
		}
	}
	if len(need) > 0 {
		if err := nv.db.Add(ctx, need, vecs); err != nil {
			return err
		}
	}
	nv.meta, nv.version, nv.ready = meta, info.version(), true
	done = true
	return nil
}
