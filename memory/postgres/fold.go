package postgres

import (
	"context"
	"sync/atomic"
	"time"
)

// Deferred indexing. pgvector inserts a vector into the HNSW graph as the
// row is written, several milliseconds a chunk: two thirds of a small
// write's cost. A write that keeps the index (not exact=1, not a bulk
// load) therefore stores its chunks pending, and the index is partial
// (WHERE NOT pending): a query that searches the index also scans the
// pending chunks exactly and merges the two lists (vectorPath), so a
// pending chunk is as searchable as an indexed one. A fold moves pending
// chunks into the index, a few hundred per transaction, off the write
// path: in the background once the table holds WithFoldAfter's pending
// chunks, or when Fold is called.

// pendingWriteChunks is the most chunks a write stores pending: a batch
// with more (some 85 records of three chunks) inserts them into the index
// itself, as an import amortises that well. (A variable for tests.)
var pendingWriteChunks = tunable(256)

// pendingCapChunks, when positive, replaces pendingCap's rule (tests).
var pendingCapChunks atomic.Int64

// pendingCap is about the most pending chunks the store holds: past it
// (by this process's estimate, pendingEst) writes insert into the index,
// so that a query's exact scan of the pending chunks stays a few
// milliseconds even when writes outpace the fold. Four times
// WithFoldAfter's threshold, or the default's when the fold is off.
func (m *Memory) pendingCap() int64 {
	if c := pendingCapChunks.Load(); c > 0 {
		return c
	}
	return 4 * int64(max(m.opts.foldAfter, DefaultFoldAfter))
}

// foldBatch is how many chunks a fold moves into the index per
// transaction (a few hundred milliseconds of graph inserts, during which
// a write that deletes one of them waits).
const foldBatch = 256

// foldSQL moves up to $1 pending chunks into the index; rows locked by a
// writer (being deleted) are left for later.
const foldSQL = `UPDATE chunks SET pending = false
	WHERE id IN (SELECT id FROM chunks WHERE pending LIMIT $1 FOR UPDATE SKIP LOCKED)`

// foldLockKey names the session advisory lock that serialises folds of a
// store across processes.
func (m *Memory) foldLockKey() string { return "agentmem:fold:" + m.schema }

// startFolder starts the background fold of the memory (stopped by
// Close).
func (m *Memory) startFolder() {
	ctx, cancel := context.WithCancel(context.Background())
	m.foldCancel = cancel
	m.foldSignal = make(chan struct{}, 1)
	m.foldDone = make(chan struct{})
	go m.folder(ctx)
}

// stopFolder cancels the background fold and waits for it to end. A fold
// in progress is cancelled: its transaction rolls back and its chunks stay
// pending (and searchable).
func (m *Memory) stopFolder() {
	if m.foldCancel == nil {
		return
	}
	m.foldCancel()
	<-m.foldDone
}

// wrotePending tells the background fold that a write stored n pending
// chunks; once WithFoldAfter's eighth has been written since the last
// check, it wakes the fold to count the table's pending chunks. The write
// does not wait.
func (m *Memory) wrotePending(n int) {
	if n == 0 {
		return
	}
	m.pendingEst.Add(int64(n))
	if m.foldSignal == nil {
		return
	}
	step := int64(max(1, m.opts.foldAfter/8))
	if m.sincePending.Add(int64(n)) < step {
		return
	}
	m.sincePending.Store(0)
	m.signalFold()
}

// signalFold wakes the background fold to check, without waiting: a
// signal already pending is a check already due. m.foldSignal must not be
// nil.
func (m *Memory) signalFold() {
	select {
	case m.foldSignal <- struct{}{}:
	default:
	}
}

// folder is the background fold: woken by writes, it folds when the table
// holds at least WithFoldAfter's pending chunks and no other process is
// folding the store. Errors are logged; the chunks stay pending and
// searchable.
func (m *Memory) folder(ctx context.Context) {
	defer close(m.foldDone)
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.foldSignal:
		}
		if !m.indexed.Load() {
			// Small writes may have brought the store to the index's
			// size (index.go); until it has one there is nothing to fold.
			if err := m.indexConcurrently(ctx); err != nil && ctx.Err() == nil {
				m.opts.logger.Warn("postgres: building the HNSW index failed; searches scan the chunks exactly until it is built",
					"schema", m.schema, "err", err)
			}
			continue
		}
		start := time.Now()
		n, err := m.foldIfDue(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			m.opts.logger.Warn("postgres: folding pending chunks into the HNSW index failed; they stay pending (searchable)",
				"schema", m.schema, "folded", n, "err", err)
		case n > 0:
			m.opts.logger.Debug("postgres: folded pending chunks into the HNSW index", "schema", m.schema, "chunks", n, "took", time.Since(start))
		}
	}
}

// foldIfDue folds when the table holds at least WithFoldAfter's pending
// chunks and no other session holds the fold lock, returning how many
// chunks it folded.
func (m *Memory) foldIfDue(ctx context.Context) (int64, error) {
	var n int
	if err := m.pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT FROM chunks WHERE pending LIMIT $1) p`, m.opts.foldAfter).Scan(&n); err != nil {
		return 0, m.wrap(ctx, "fold: count pending chunks", err)
	}
	m.pendingEst.Store(int64(n))
	if n < m.opts.foldAfter {
		return 0, nil
	}
	return m.fold(ctx, false)
}

// Fold moves every pending chunk into the HNSW index and returns when none
// is left (but those written meanwhile), waiting for a fold of another
// process or of the background to finish first. Queries find pending
// chunks anyway (by an exact scan besides the index); Fold makes them
// cheaper, e.g. before a benchmark or after many small writes with the
// background fold turned off (WithFoldAfter(0)). Cancelling ctx stops it
// with the chunks of its current batch still pending.
func (m *Memory) Fold(ctx context.Context) error {
	if err := m.check(ctx); err != nil {
		return err
	}
	_, err := m.fold(ctx, true)
	return err
}

// fold folds pending chunks in transactions of foldBatch until none is
// left, holding the store's fold lock: waiting for it, or, unless wait,
// returning 0 at once when another session holds it.
func (m *Memory) fold(ctx context.Context, wait bool) (int64, error) {
	c, err := m.pool.Acquire(ctx)
	if err != nil {
		return 0, m.wrap(ctx, "fold", err)
	}
	defer c.Release()
	// The lock is the session's: a connection that may hold it and cannot
	// release it is closed (which releases it) rather than returned to the
	// pool.
	drop := func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.Conn().Close(cctx)
	}
	if wait {
		if _, err := c.Exec(ctx, `SELECT pg_advisory_lock(hashtextextended($1, 0))`, m.foldLockKey()); err != nil {
			drop() // the lock may have been granted as the call was cancelled
			return 0, m.wrap(ctx, "fold: lock", err)
		}
	} else {
		var ok bool
		if err := c.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`, m.foldLockKey()).Scan(&ok); err != nil {
			drop()
			return 0, m.wrap(ctx, "fold: lock", err)
		}
		if !ok {
			m.foldSkips.Add(1)
			return 0, nil
		}
	}
	defer func() {
		uctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := c.Exec(uctx, `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, m.foldLockKey()); err != nil {
			drop()
		}
	}()
	var total int64
	for {
		tag, err := c.Exec(ctx, foldSQL, foldBatch)
		if err != nil {
			return total, m.wrap(ctx, "fold", err)
		}
		total += tag.RowsAffected()
		m.pendingEst.Add(-tag.RowsAffected())
		if tag.RowsAffected() == 0 {
			m.pendingEst.Store(0)
			return total, nil
		}
	}
}
