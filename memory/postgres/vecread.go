package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/vdb/inmem"
)

// Reading the copies of namespaces' vectors (vectors.go): a refresh in
// the background after a search found a copy missing or out of date,
// one namespace at a time for a search of several, adding the chunks
// written since when the namespace only grew, else reading it again.

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
			grown := nv.onlyGrew(info)
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
	grow := nv.onlyGrew(info)
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
