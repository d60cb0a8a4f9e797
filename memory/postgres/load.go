package postgres

import (
	"context"
	"fmt"
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
// WithMaintenanceWorkMem). Meanwhile queries, of any process, scan the
// vectors exactly: the same hits, more slowly. A load that fails keeps
// the batches it committed, and still builds the index (the next Open
// builds it otherwise). Smaller loads are AddBatch calls. With exact=1
// there is no index, and Load is AddBatch calls too.
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
		if err := pgx.BeginFunc(ctx, m.pool, func(tx pgx.Tx) error {
			if err := m.lockSchema(ctx, tx); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `DROP INDEX IF EXISTS chunks_hnsw`)
			return err
		}); err != nil {
			return nil, m.wrap(ctx, "load: drop HNSW index", err)
		}
	}
	ids := make([]string, 0, len(recs))
	for lo := 0; lo < len(recs) && err == nil; lo += batch {
		var preps []prepared
		if preps, err = m.addBatchMode(ctx, recs[lo:min(lo+batch, len(recs))], deferIndex); err == nil {
			for i := range preps {
				ids = append(ids, preps[i].outcome().ID)
			}
			if progress != nil {
				progress(len(ids))
			}
		}
	}
	if deferIndex {
		bctx := ctx
		if err != nil {
			var cancel context.CancelFunc
			bctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), indexRebuildTimeout)
			defer cancel()
		}
		if berr := pgx.BeginFunc(bctx, m.pool, func(tx pgx.Tx) error {
			if err := m.lockSchema(bctx, tx); err != nil {
				return err
			}
			return m.createIndex(bctx, tx)
		}); berr != nil && err == nil {
			err = m.wrap(ctx, "load: build HNSW index (the next open builds it)", berr)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: load: stored %d of %d records, then: %w", len(ids), len(recs), err)
	}
	return ids, nil
}

// deferIndex reports whether a load of n records drops the HNSW index and
// builds it at the end (see Load).
func (m *Memory) deferIndex(ctx context.Context, n int) (bool, error) {
	if m.opts.exact || m.opts.bulkRecords == 0 || n < m.opts.bulkRecords {
		return false, nil
	}
	var stored int64
	if err := m.pool.QueryRow(ctx, `SELECT coalesce(sum(text_docs), 0) FROM namespaces`).Scan(&stored); err != nil {
		return false, m.wrap(ctx, "load: count records", err)
	}
	return int64(n) >= stored, nil
}
