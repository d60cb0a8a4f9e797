package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// The HNSW index of a small store. Below WithIndexAfter's records the
// store has none: its vector path scans the chunks exactly (Vectors), and
// its writes store their chunks as indexed (not pending: there is nothing
// to fold them into). m.indexed is whether this process last found the
// index; a search or write that misjudges it (another process built it
// since) is still right, only slower, until the next check.

// indexIfDue builds the HNSW index when it is missing and the store
// holds at least WithIndexAfter's records, in a transaction under the
// schema lock (writers of the chunks table wait for the build, as for
// Open's), and records whether the index exists (m.indexed).
func (m *Memory) indexIfDue(ctx context.Context) error {
	if m.opts.exact {
		return nil
	}
	var exists bool
	err := pgx.BeginFunc(ctx, m.pool, func(tx pgx.Tx) error {
		// One opener builds it; the others wait and find it.
		if err := m.lockSchema(ctx, tx); err != nil {
			return err
		}
		var stored int64
		if err := tx.QueryRow(ctx, `SELECT to_regclass('chunks_hnsw') IS NOT NULL, (SELECT coalesce(sum(text_docs), 0) FROM namespaces)`).
			Scan(&exists, &stored); err != nil {
			return err
		}
		if exists || stored < int64(m.opts.indexAfter) {
			return nil
		}
		if err := m.createIndex(ctx, tx); err != nil {
			return err
		}
		exists = true
		return nil
	})
	if err != nil {
		return m.wrap(ctx, "create HNSW index", err)
	}
	m.indexed.Store(exists)
	m.sinceIndexCheck.Store(0)
	return nil
}

// wroteUnindexed counts n records written while this process found no
// HNSW index; once WithIndexAfter's eighth has been written since the
// last check, it has the background fold check whether the store has
// reached the index's size. A batch of at least WithBulkLoad's records
// (an import), or any write of a memory without the background fold,
// checks (and builds) itself. The write has committed: a failed build is
// logged, and left to the next check or Open.
func (m *Memory) wroteUnindexed(ctx context.Context, n int) {
	if m.opts.exact || m.indexed.Load() || n == 0 {
		return
	}
	step := int64(max(1, m.opts.indexAfter/8))
	if m.sinceIndexCheck.Add(int64(n)) < step {
		return
	}
	if m.foldSignal != nil && (m.opts.bulkRecords == 0 || n < m.opts.bulkRecords) {
		m.sinceIndexCheck.Store(0)
		select {
		case m.foldSignal <- struct{}{}:
		default: // a check is already due
		}
		return
	}
	if err := m.indexIfDue(ctx); err != nil {
		m.opts.logger.Warn("postgres: building the HNSW index failed; searches scan the chunks exactly until it is built",
			"schema", m.schema, "err", err)
	}
}
