package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/internal/errs"
	"github.com/agentmem/agentmem/memory"
)

// indexRebuildTimeout bounds Load's build of the HNSW index after a load
// that failed or was cancelled (the next Open builds it otherwise).
const indexRebuildTimeout = 30 * time.Minute

// Load stores recs in batches of batch records, each batch one
// transaction as AddBatch's (all or nothing, statistics updated once), and
// calls progress, if not nil, after each with the number stored so far. It
// returns the ids of recs. It is for imports: when recs are at least
// WithBulkLoad's records and at least as many as the store holds (a new
// store, or one the load at least doubles), inserting their chunks into
// the HNSW index one at a time would cost pgvector more than building the
// index once over every chunk, so Load drops the index, copies the
// batches without it and builds it at the end (with
// WithMaintenanceWorkMem) if the store is then at WithIndexAfter's
// size (a smaller store has none; a smaller load that brings the
// store to that size builds it at its end too). It does the same with the indexes of the
// chunks table (building an index once sorts the rows instead of
// inserting each), recording their definitions in deferred_indexes in the
// transaction that drops them. Meanwhile queries, of any process, scan
// the vectors exactly and that table without its indexes: the same
// hits, more slowly. A load
// that fails keeps the batches it committed, and still builds the
// indexes (the next Open builds them otherwise). A load that succeeds
// runs ANALYZE of the tables it wrote before the HNSW index's build,
// whose rule reads the chunks' number from it. Its batches pack their
// namespaces' postings into blocks (blocks.go) every loadMergeRecords
// records and at the load's end rather than every mergeRecords (see
// loadTails). Smaller loads are
// AddBatch calls. With exact=1 there is no HNSW index: only the B-tree
// indexes are built at the end.
func (m *Memory) Load(ctx context.Context, recs []memory.Record, batch int, progress func(stored int)) ([]string, error) {
	if batch <= 0 {
		return nil, fmt.Errorf("postgres: %w: load batch %d: want > 0", errs.InvalidArgument, batch)
	}
	if err := m.check(ctx); err != nil {
		return nil, err
	}
	deferIndex, err := m.deferIndex(ctx, len(recs))
	if err != nil {
		return nil, err
	}
	if deferIndex {
		if err := m.indexTx(ctx, func(tx pgx.Tx) error {
			if !m.opts.exact {
				if _, err := tx.Exec(ctx, `DROP INDEX IF EXISTS chunks_hnsw`); err != nil {
					return err
				}
			}
			return deferIndexes(ctx, tx, "chunks")
		}); err != nil {
			return nil, m.wrap(ctx, "load: drop indexes", err)
		}
		m.indexed.Store(false)
	}
	ids := make([]string, 0, len(recs))
	lt := &loadTails{ns: map[int32]*loadTail{}}
	// Each batch is prepared (chunked, tokenized, embedded) while the
	// one before it is written.
	type prepped struct {
		preps   []prepared
		release func()
		err     error
	}
	prepare := func(lo int) <-chan prepped {
		ch := make(chan prepped, 1)
		go func() {
			preps, release, err := m.prepareBatch(ctx, recs[lo:min(lo+batch, len(recs))])
			ch <- prepped{preps, release, err}
		}()
		return ch
	}
	var ahead <-chan prepped
	if len(recs) > 0 {
		ahead = prepare(0)
	}
	for lo := 0; lo < len(recs) && err == nil; lo += batch {
		p := <-ahead
		ahead = nil
		if lo+batch < len(recs) {
			ahead = prepare(lo + batch)
		}
		if err = p.err; err != nil {
			break
		}
		var preps []prepared
		if preps, err = m.writeBatch(ctx, p.preps, deferIndex, lt); err == nil {
			for i := range preps {
				ids = append(ids, preps[i].outcome().ID)
			}
			if progress != nil {
				progress(len(ids))
			}
		}
		p.release()
	}
	if ahead != nil {
		if p := <-ahead; p.err == nil { // a batch prepared for nothing: the load stopped
			p.release()
		}
	}
	bctx := ctx
	if err != nil {
		var cancel context.CancelFunc
		bctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), indexRebuildTimeout)
		defer cancel()
	}
	// The load's end, on two connections at once: the indexes it dropped
	// (the chunks', deferIndex) built again, then the chunks' planner
	// statistics; beside them, the tails its batches left packed
	// (packLoad), then the other tables' statistics (an ANALYZE waits for
	// an index build of its own table, not of another's).
	//
	// The statistics of a fresh load are empty until autovacuum's next
	// round: gathered now, the first queries are planned for the tables'
	// real sizes (and the HNSW index's rule below reads the chunks'
	// number). The chunks' under the index lock (indexTx): a concurrent
	// build of the index that a writer set off in the background waits
	// for the transactions older than it, ANALYZE among them, while
	// ANALYZE would wait for the build's lock on the chunks table: a
	// deadlock. The other tables' take no lock a build holds, each table
	// in a transaction of its own (analyzeApart).
	analyze := err == nil && len(ids) > 0
	var berr, cerr error
	built := make(chan struct{})
	go func() {
		defer close(built)
		if deferIndex {
			berr = m.buildDeferred(bctx)
		}
		if analyze {
			cerr = m.indexTx(ctx, func(tx pgx.Tx) error { return analyzeLoad(ctx, tx, "chunks") })
		}
	}()
	if err == nil {
		err = m.packLoad(ctx, lt)
	}
	if analyze {
		if aerr := m.analyzeApart(ctx, "records, posting_blocks, episodes, speakers, namespaces"); aerr != nil && err == nil {
			err = m.wrap(ctx, "load: analyze", aerr)
		}
	}
	<-built
	if cerr != nil && err == nil {
		err = m.wrap(ctx, "load: analyze", cerr)
	}
	if deferIndex && berr == nil || !deferIndex && err == nil && !m.indexed.Load() {
		// The load may have brought the store to the HNSW index's size.
		berr = m.indexIfDue(bctx)
	}
	if berr != nil && err == nil {
		what := "build the HNSW index (the next open builds it)"
		if deferIndex {
			what = "build indexes (the next open builds them)"
		}
		err = m.wrap(ctx, "load: "+what, berr)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: load: stored %d of %d records, then: %w", len(ids), len(recs), err)
	}
	return ids, nil
}

// loadStatisticsTarget is the default_statistics_target of a load's
// ANALYZE: samples of 300 times it rows per table (9,000), where 100 read
// every row of a 10,000-record load's 30,000 chunks. Measured with psql
// on such a load: 77–104 ms against 125–179 ms for its six tables. Enough
// for the planner's choices here (a namespace's share of the rows, ranges
// of seq and time); autovacuum samples at the server's target once a
// tenth of a table has changed.
const loadStatisticsTarget = 30

// analyzeLoad gathers the planner's statistics of tables (a list for
// ANALYZE) after a load.
func analyzeLoad(ctx context.Context, tx pgx.Tx, tables string) error {
	if _, err := tx.Exec(ctx, fmt.Sprintf(`SET LOCAL default_statistics_target = %d`, loadStatisticsTarget)); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `ANALYZE `+tables)
	return err
}

// analyzeApart is analyzeLoad outside a transaction block, where ANALYZE
// takes each table in a transaction of its own: it never holds one
// table's lock while it waits for another's (which a concurrent migration
// could hold while it waits for the first: a deadlock). The session's
// statistics target is set for it and reset.
func (m *Memory) analyzeApart(ctx context.Context, tables string) error {
	c, err := m.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	if _, err := c.Exec(ctx, fmt.Sprintf(`SET default_statistics_target = %d`, loadStatisticsTarget)); err != nil {
		return err
	}
	_, err = c.Exec(ctx, `ANALYZE `+tables)
	if _, rerr := c.Exec(context.WithoutCancel(ctx), `RESET default_statistics_target`); rerr != nil {
		// Not given back to the pool with the load's target.
		c.Conn().Close(context.WithoutCancel(ctx)) //nolint:errcheck // the reset's error is the one to report
		return cmp.Or(err, rerr)
	}
	return err
}

// deferIndex reports whether a load of n records drops the indexes and
// builds them at the end (see Load).
func (m *Memory) deferIndex(ctx context.Context, n int) (bool, error) {
	if m.opts.bulkRecords == 0 || n < m.opts.bulkRecords {
		return false, nil
	}
	var stored int64
	if err := m.pool.QueryRow(ctx, `SELECT coalesce(sum(text_docs), 0) FROM namespaces`).Scan(&stored); err != nil {
		return false, m.wrap(ctx, "load: count records", err)
	}
	return int64(n) >= stored, nil
}

// deferIndexes drops the indexes of table (and its primary key), recording
// in deferred_indexes the statements that build each again; tx holds the
// schema lock.
func deferIndexes(ctx context.Context, tx pgx.Tx, table string) error {
	rows, err := tx.Query(ctx, `SELECT c.relname, coalesce(con.conname, ''), pg_get_indexdef(i.indexrelid),
		CASE WHEN con.oid IS NOT NULL THEN 'ALTER TABLE ' || quote_ident($1) || ' ADD CONSTRAINT ' || quote_ident(con.conname) || ' '
			|| CASE con.contype WHEN 'p' THEN 'PRIMARY KEY' ELSE 'UNIQUE' END || ' USING INDEX ' || quote_ident(c.relname) END
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		LEFT JOIN pg_constraint con ON con.conindid = i.indexrelid AND con.conrelid = i.indrelid AND con.contype IN ('p', 'u')
		WHERE i.indrelid = to_regclass(quote_ident($1)) ORDER BY c.relname`, table)
	if err != nil {
		return err
	}
	type index struct {
		Name, Constraint, Def string
		ConstraintDef         *string
	}
	idx, err := pgx.CollectRows(rows, pgx.RowToStructByPos[index])
	if err != nil {
		return err
	}
	for _, ix := range idx {
		if _, err := tx.Exec(ctx, `INSERT INTO deferred_indexes (name, def, constraint_def) VALUES ($1, $2, $3)`, ix.Name, ix.Def, ix.ConstraintDef); err != nil {
			return err
		}
		drop := `DROP INDEX ` + pgx.Identifier{ix.Name}.Sanitize()
		if ix.Constraint != "" {
			drop = `ALTER TABLE ` + pgx.Identifier{table}.Sanitize() + ` DROP CONSTRAINT ` + pgx.Identifier{ix.Constraint}.Sanitize()
		}
		if _, err := tx.Exec(ctx, drop); err != nil {
			return fmt.Errorf("%s: %w", drop, err)
		}
	}
	return nil
}

// buildDeferred builds the indexes that a load dropped (deferIndexes), in
// a transaction of its own under the schema lock, and forgets their
// definitions. A constraint's index is built as a plain one first, which
// lets queries read the table meanwhile (as CREATE INDEX does), and
// becomes the constraint's at the end, briefly locking the table.
func (m *Memory) buildDeferred(ctx context.Context) error {
	return m.indexTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT def, constraint_def FROM deferred_indexes ORDER BY name`)
		if err != nil {
			return err
		}
		type index struct {
			Def           string
			ConstraintDef *string
		}
		idx, err := pgx.CollectRows(rows, pgx.RowToStructByPos[index])
		if err != nil || len(idx) == 0 {
			return err
		}
		if _, err := tx.Exec(ctx, fmt.Sprintf(`SET LOCAL maintenance_work_mem = '%dMB'`, m.opts.maintenanceMem)); err != nil {
			return err
		}
		for _, ix := range idx {
			if _, err := tx.Exec(ctx, ix.Def); err != nil {
				return fmt.Errorf("%s: %w", ix.Def, err)
			}
		}
		for _, ix := range idx {
			if ix.ConstraintDef == nil {
				continue
			}
			if _, err := tx.Exec(ctx, *ix.ConstraintDef); err != nil {
				return fmt.Errorf("%s: %w", *ix.ConstraintDef, err)
			}
		}
		_, err = tx.Exec(ctx, `DELETE FROM deferred_indexes`)
		return err
	})
}

// loadMergeRecords is how many records a load's batches leave in a
// namespace's tail before one packs it into posting blocks (packLoad packs
// what they leave). A variable so that tests can lower it.
var loadMergeRecords = tunable(16384)

// loadTails is what a load's batches wrote to the tails of their
// namespaces (records after merged_seq, blocks.go) and did not pack yet.
// Packing a tail rewrites the last block of each of its terms: a batch of
// 1,000 records, packing its namespace's tail as every write does past
// mergeRecords records, rewrote most of the namespace's blocks at each
// batch (in a 10,000-record load, 54,000 blocks written for 15,000 kept,
// a third of the server's time). Load's batches pack every
// loadMergeRecords records and at its end (packLoad) instead, from the postings they
// hold in memory when the tail holds, after the records that were there
// before the load, exactly the load's (checked under the namespace's
// lock: another writer's record, or one of the load's records deleted or
// replaced since, makes the pack read the tail from the records as any
// write's does). A nil *loadTails is a write that is not a load's.
type loadTails struct {
	ns map[int32]*loadTail
}

// loadTail is a namespace's records written by a load's committed batches
// since its tail was last packed, in seq order.
type loadTail struct {
	name string
	recs []written
}

// due reports whether a batch packs the tail of namespace ns (locked, its
// statistics counting the batch).
func (lt *loadTails) due(ns *nsRow) bool {
	if lt == nil {
		return ns.tailDocs >= mergeRecords.Load()
	}
	return ns.tailDocs >= max(loadMergeRecords.Load(), mergeRecords.Load())
}

// held returns the records the load holds for ns's tail, and the seq
// before the first of them (records up to it are read from the table),
// when the tail's records from that one on are exactly the held ones
// followed by batch (the records the writing batch gives ns); else nil.
func (lt *loadTails) held(ctx context.Context, tx pgx.Tx, ns *nsRow, batch []written) (int64, []written, error) {
	if lt == nil {
		return 0, nil, nil
	}
	h := lt.ns[ns.id]
	if h == nil || len(h.recs) == 0 || h.recs[0].seq <= ns.mergedSeq {
		return 0, nil, nil
	}
	rows, err := tx.Query(ctx, `SELECT seq FROM records WHERE ns = $1 AND seq >= $2 ORDER BY seq`, ns.id, h.recs[0].seq)
	if err != nil {
		return 0, nil, err
	}
	stored, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return 0, nil, err
	}
	if len(stored) != len(h.recs)+len(batch) {
		return 0, nil, nil
	}
	for i, w := range slices.Concat(h.recs, batch) {
		if stored[i] != w.seq {
			return 0, nil, nil
		}
	}
	return h.recs[0].seq - 1, h.recs, nil
}

// committed records a committed batch's records by namespace (as
// commitOnce gathers them, nss its namespaces); packed are the namespaces
// whose tails it packed.
func (lt *loadTails) committed(nss map[string]*nsRow, ws map[int32][]written, packed map[int32]bool) {
	if lt == nil {
		return
	}
	for _, ns := range nss {
		w, ok := ws[ns.id]
		switch {
		case !ok:
		case packed[ns.id]:
			delete(lt.ns, ns.id)
		default:
			h := lt.ns[ns.id]
			if h == nil {
				h = &loadTail{name: ns.name}
				lt.ns[ns.id] = h
			}
			h.recs = append(h.recs, w...)
		}
	}
}

// pack packs namespace ns's tail (locked) into its blocks (mergeTail):
// the records after from are ws, a batch's in seq order, whose postings
// are taken from memory, and the tail's records up to from are read from
// the table, unless the load holds them (held): then theirs are taken
// from memory too.
func (lt *loadTails) pack(ctx context.Context, tx pgx.Tx, ns *nsRow, from int64, ws []written) error {
	f, held, err := lt.held(ctx, tx, ns, ws)
	if err != nil {
		return fmt.Errorf("read the tail: %w", err)
	}
	if held != nil {
		from, ws = f, slices.Concat(held, ws)
	}
	return mergeTail(ctx, tx, ns, from, ns.lastSeq, postingsOf(ws))
}

// packLoad packs the tails that a load's batches left (loadTails) of more
// than mergeRecords records, each namespace's in a transaction of its own
// under its lock, from the postings the load holds when the tail is still
// exactly the load's records (held), else from the records as any write's
// pack does. Load runs it after its last batch, beside the build of the
// chunks' indexes on another connection: the last batch packed them in
// its own transaction before (at 10,000 records, some 150 ms of the
// load's end, most of it Go's work on the postings and the blocks' COPY,
// while the other connection waited).
func (m *Memory) packLoad(ctx context.Context, lt *loadTails) error {
	ids := make([]int32, 0, len(lt.ns))
	for id := range lt.ns {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		var err error
		for range maxWriteAttempts {
			if err = m.packLoadOnce(ctx, lt, id); err == nil || !retryable(errors.Unwrap(err)) && !retryable(err) {
				break
			}
		}
		if err != nil {
			return m.wrap(ctx, "load: pack postings", err)
		}
	}
	return nil
}

// packLoadOnce packs namespace id's tail (packLoad) in a transaction.
func (m *Memory) packLoadOnce(ctx context.Context, lt *loadTails, id int32) error {
	h := lt.ns[id]
	c, err := m.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
		nss, err := lockNamespaces(ctx, tx, map[string]bool{h.name: true})
		if err != nil {
			return err
		}
		ns := nss[h.name]
		if ns == nil || ns.id != id || ns.tailDocs < mergeRecords.Load() {
			return nil
		}
		if err := lt.pack(ctx, tx, ns, ns.lastSeq, nil); err != nil {
			return err
		}
		return writeStats(ctx, tx, nss)
	})
}
