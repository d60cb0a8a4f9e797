package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// The HNSW index of a small store. Below WithIndexAfter's size (its
// records, or more chunks than the process's copies hold: indexDue) the
// store has none: its vector path scans the chunks exactly (Vectors), and
// its writes store their chunks as indexed (not pending: there is nothing
// to fold them into). m.indexed is whether this process last found the
// index; a search or write that misjudges it (another process built it
// since) is still right, only slower, until the next check: after
// WithIndexAfter's eighth of records written here, or a search or write
// indexRecheck after the last check.
//
// Open, Load and a bulk AddBatch build the index in a transaction, as
// they did before (writers wait, as they wait for an import). The
// background fold, which builds it once small writes bring the store to
// the size, builds it with CREATE INDEX CONCURRENTLY instead: an agent's
// writes go on meanwhile. Both hold the store's index lock, and so does
// every transaction that drops or builds an index of the chunks table
// (lockIndex), so that one build runs at a time and a transaction waits
// for a concurrent build outside the database rather than finding its
// unfinished (invalid) index or deadlocking with it.

// indexRecheck is how long after a check a search or write of a memory
// that found no index has the background fold check again.
const indexRecheck = time.Minute

// indexLockKey names the advisory lock held by whoever builds the HNSW
// index (hashtextextended(key, 0) is the lock's key).
func (m *Memory) indexLockKey() string { return "agentmem:index:" + m.schema }

// errIndexBusy: a concurrent build of the index holds the index lock.
var errIndexBusy = errors.New("postgres: the HNSW index is being built")

// lockIndex takes the index lock for tx without waiting (errIndexBusy
// when a concurrent build holds it). A transaction that changes the
// chunks table's indexes takes it before any lock on the table: a
// concurrent build waits for the transactions older than it, so one that
// waited for the build inside a statement would deadlock with it.
func (m *Memory) lockIndex(ctx context.Context, tx pgx.Tx) error {
	var ok bool
	if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))`, m.indexLockKey()).Scan(&ok); err != nil {
		return err
	}
	if !ok {
		return errIndexBusy
	}
	return nil
}

// indexTx runs fn in a transaction holding the schema and index locks,
// starting it again (every 200 ms, outside any transaction) while a
// concurrent build of the index holds the index lock.
func (m *Memory) indexTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	for {
		err := pgx.BeginFunc(ctx, m.pool, func(tx pgx.Tx) error {
			if err := m.lockSchema(ctx, tx); err != nil {
				return err
			}
			if err := m.lockIndex(ctx, tx); err != nil {
				return err
			}
			return fn(tx)
		})
		if !errors.Is(err, errIndexBusy) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// indexStateSQL reads whether the index exists and is valid (a failed
// concurrent build leaves an invalid one), the store's records, those of
// its namespaces of more than $1 records, and the planner's estimate of
// its chunks (ANALYZE's, a load's last step, or autovacuum's; 0 before
// any: -1 in pg_class).
const indexStateSQL = `SELECT to_regclass('chunks_hnsw') IS NOT NULL,
	coalesce((SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass('chunks_hnsw')), false),
	(SELECT coalesce(sum(text_docs), 0) FROM namespaces),
	(SELECT coalesce(sum(text_docs), 0) FROM namespaces WHERE text_docs > $1),
	(SELECT greatest(reltuples, 0)::bigint FROM pg_class WHERE oid = to_regclass('chunks'))`

// indexState is what indexStateSQL reads.
type indexState struct {
	exists, valid        bool
	records, big, chunks int64
}

// readIndexState runs indexStateSQL on q, big being the records of the
// namespaces of more than exactRecords (options.bigNamespace).
func (m *Memory) readIndexState(ctx context.Context, q querier) (s indexState, err error) {
	err = q.QueryRow(ctx, indexStateSQL, m.opts.bigNamespace).Scan(&s.exists, &s.valid, &s.records, &s.big, &s.chunks)
	return s, err
}

// indexDue reports whether the store in state s should have its HNSW index
// built (again): it has none, or an invalid one, and it holds
// WithIndexAfter's records, or its namespaces of more than exactRecords
// records hold more chunks than WithVectorCache lets a process keep
// (DefaultVectorCache's when that is 0; their chunks estimated at the
// store's mean per record). The index serves the searches that reach
// the server: of all namespaces, and of a namespace of more than
// exactRecords records whose copy is not in the process (not read yet,
// or past the copies' bound); a smaller namespace is always scanned
// exactly, and without the index so are those searches.
func (m *Memory) indexDue(s indexState) bool {
	if s.exists && s.valid {
		return false
	}
	if s.exists {
		return true
	}
	if s.records >= int64(m.opts.indexAfter) {
		return true
	}
	bound := float64(m.opts.vectorCache)
	if bound == 0 {
		bound = DefaultVectorCache
	}
	return s.records > 0 && float64(s.chunks)*float64(s.big)/float64(s.records) > bound
}

// indexIfDue builds the HNSW index when it is due (indexDue: missing or
// invalid, and the store at WithIndexAfter's size), in a transaction under the
// schema and index locks (writers of the chunks table wait for the
// build, as for Open's), and records whether the index exists
// (m.indexed).
func (m *Memory) indexIfDue(ctx context.Context) error {
	if m.opts.exact {
		return nil
	}
	var exists bool
	// One opener builds it; the others wait and find it.
	err := m.indexTx(ctx, func(tx pgx.Tx) error {
		s, err := m.readIndexState(ctx, tx)
		if err != nil {
			return err
		}
		exists = s.exists
		if !m.indexDue(s) {
			return nil
		}
		if exists { // left invalid by a concurrent build that failed
			if _, err := tx.Exec(ctx, `DROP INDEX chunks_hnsw`); err != nil {
				return err
			}
		}
		// Minutes at a million chunks, while writers wait: say so (a
		// command-line user otherwise sees a command that hangs); a
		// store's first, empty, index (WithIndexAfter(0)) costs nothing.
		if s.records > 0 {
			m.opts.logger.Warn("postgres: building the HNSW index, once: writes wait until it is built (WithIndexAfter)",
				"schema", m.schema, "records", s.records, "chunks", s.chunks)
		}
		t := time.Now()
		if err := m.createIndex(ctx, tx); err != nil {
			return err
		}
		if s.records > 0 {
			m.opts.logger.Info("postgres: built the HNSW index", "schema", m.schema, "seconds", time.Since(t).Seconds())
		}
		exists = true
		return nil
	})
	m.indexChecked()
	if err != nil {
		return m.wrap(ctx, "create HNSW index", err)
	}
	m.indexed.Store(exists)
	return nil
}

// indexConcurrently is indexIfDue for the background fold: it builds
// the index with CREATE INDEX CONCURRENTLY, which lets writers go on,
// holding the index lock for its session, and returns at once when
// another session holds that lock (a build is under way).
func (m *Memory) indexConcurrently(ctx context.Context) error {
	if m.opts.exact {
		return nil
	}
	defer m.indexChecked()
	c, err := m.pool.Acquire(ctx)
	if err != nil {
		return m.wrap(ctx, "create HNSW index", err)
	}
	defer c.Release()
	// The lock and the setting are the session's: a connection that may
	// keep either is closed rather than returned to the pool.
	drop := func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.Conn().Close(cctx)
	}
	var ok bool
	if err := c.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`, m.indexLockKey()).Scan(&ok); err != nil {
		drop()
		return m.wrap(ctx, "create HNSW index: lock", err)
	}
	if !ok {
		return nil
	}
	defer func() {
		uctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := c.Exec(uctx, `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, m.indexLockKey()); err != nil {
			drop()
		}
	}()
	s, err := m.readIndexState(ctx, c)
	if err != nil {
		return m.wrap(ctx, "create HNSW index", err)
	}
	if !m.indexDue(s) {
		m.indexed.Store(s.exists)
		return nil
	}
	if s.exists { // left invalid by a concurrent build that failed
		if _, err := c.Exec(ctx, `DROP INDEX CONCURRENTLY chunks_hnsw`); err != nil {
			return m.wrap(ctx, "create HNSW index: drop the invalid one", err)
		}
	}
	if _, err := c.Exec(ctx, fmt.Sprintf(`SET maintenance_work_mem = '%dMB'`, m.opts.maintenanceMem)); err != nil {
		drop()
		return m.wrap(ctx, "create HNSW index", err)
	}
	defer func() {
		if _, err := c.Exec(context.Background(), `RESET maintenance_work_mem`); err != nil {
			drop()
		}
	}()
	if _, err := c.Exec(ctx, hnswIndexSQL(m.indexExpr(), true)); err != nil {
		// An invalid index may be left: the next build drops it.
		return m.wrap(ctx, "create HNSW index", err)
	}
	m.indexed.Store(true)
	return nil
}

// indexChecked notes that the index was just looked for.
func (m *Memory) indexChecked() {
	m.sinceIndexCheck.Store(0)
	m.indexCheckedAt.Store(time.Now().UnixNano())
}

// recheckIndex has the background fold look for the index again when
// this process found none and the last check is indexRecheck old (a
// search or write calls it; it does not wait).
func (m *Memory) recheckIndex() {
	if m.opts.exact || m.indexed.Load() || m.foldSignal == nil ||
		time.Since(time.Unix(0, m.indexCheckedAt.Load())) < indexRecheck {
		return
	}
	m.indexCheckedAt.Store(time.Now().UnixNano()) // one signal per period
	m.signalFold()
}

// wroteUnindexed counts n records written while this process found no
// HNSW index; once WithIndexAfter's eighth has been written since the
// last check (or indexRecheck has passed), it has the background fold
// check whether the store has reached the index's size. A batch of at
// least WithBulkLoad's records (an import), or any write of a memory
// without the background fold, checks (and builds) itself. The write has
// committed: a failed build is logged, and left to the next check or
// Open.
func (m *Memory) wroteUnindexed(ctx context.Context, n int) {
	if m.opts.exact || m.indexed.Load() || n == 0 {
		return
	}
	step := int64(max(1, m.opts.indexAfter/8))
	if m.sinceIndexCheck.Add(int64(n)) < step {
		m.recheckIndex()
		return
	}
	if m.foldSignal != nil && (m.opts.bulkRecords == 0 || n < m.opts.bulkRecords) {
		m.sinceIndexCheck.Store(0)
		m.signalFold()
		return
	}
	if err := m.indexIfDue(ctx); err != nil {
		m.opts.logger.Warn("postgres: building the HNSW index failed; searches scan the chunks exactly until it is built",
			"schema", m.schema, "err", err)
	}
}
