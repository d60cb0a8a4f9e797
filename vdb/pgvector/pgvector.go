package pgvector

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	pgv "github.com/pgvector/pgvector-go"

	"github.com/agentmem/agentmem/internal/errs"
	"github.com/agentmem/agentmem/internal/pgpool"
	"github.com/agentmem/agentmem/internal/redact"
	"github.com/agentmem/agentmem/vdb"
)

// maxDim is the vector type's dimension limit; HNSW indexes over vector
// stop at maxIndexDim.
const (
	maxDim      = 16000
	maxIndexDim = 2000
)

// copyThreshold: batches at least this large go through COPY into a
// temporary table; smaller ones are one INSERT … SELECT FROM unnest.
const copyThreshold = 64

// extension is the extension's name; a variable so that a test can ask for
// one the server does not have.
var extension = "vector"

// DB is a [vdb.VectorDatabase] over one PostgreSQL table. It is safe for
// concurrent use; any number of DBs, in any number of processes, may serve
// the same table.
type DB struct {
	pool   *pgxpool.Pool
	owned  bool // Close closes the pool
	dim    int
	cfg    config
	table  string // unquoted name
	ident  string // quoted, for SQL
	dsn    string // without the password, for errors
	closed atomic.Bool
	length atomic.Int64 // last count Len saw

	sqlUpsertUnnest, sqlUpsertStage, sqlDelete, sqlCount string
}

var (
	_ vdb.VectorDatabase   = (*DB)(nil)
	_ vdb.MinScoreSearcher = (*DB)(nil)
	_ vdb.BatchSearcher    = (*DB)(nil)
)

// New opens the table of the namespace set by [WithNamespace] in the
// database pool connects to, for vectors of dimension dim, creating the
// extension (when the user may), the table and, unless [WithExact], its HNSW
// index. The pool stays the caller's: Close does not close it. Opening a
// table created with another dimension fails with an error wrapping
// [vdb.ErrDimension].
func New(ctx context.Context, pool *pgxpool.Pool, dim int, opts ...Option) (*DB, error) {
	if pool == nil {
		return nil, fmt.Errorf("%w: pgvector: nil pool", errs.InvalidArgument)
	}
	return newDB(ctx, pool, false, dim, opts)
}

// Open connects to the database the DSN names (a libpq connection string,
// either form, with the agentmem options of the package documentation) and
// opens it as [New] does, with opts applied after the DSN's options. The DB
// owns the pool: Close closes it. No error holds the DSN's password.
func Open(ctx context.Context, dsn string, dim int, opts ...Option) (*DB, error) {
	db, err := open(ctx, dsn, dim, opts)
	return db, redact.Error(err, dsn)
}

func open(ctx context.Context, dsn string, dim int, opts []Option) (*DB, error) {
	pc, specOpts, err := parseSpec(dsn)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, wrapErr(ctx, redactedDSN(pc), "connect", err)
	}
	db, err := newDB(ctx, pool, true, dim, append(specOpts, opts...))
	if err != nil {
		pool.Close()
		return nil, err
	}
	return db, nil
}

func newDB(ctx context.Context, pool *pgxpool.Pool, owned bool, dim int, opts []Option) (*DB, error) {
	cfg := defaults()
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if dim <= 0 || dim > maxDim {
		return nil, fmt.Errorf("%w: pgvector: dimension %d out of range [1, %d]", vdb.ErrDimension, dim, maxDim)
	}
	if !cfg.exact && dim > maxIndexDim {
		return nil, fmt.Errorf("%w: pgvector: HNSW indexes over vector hold at most %d dimensions, got %d: use exact=1", errs.InvalidArgument, maxIndexDim, dim)
	}
	table := TableName(cfg.prefix, cfg.namespace)
	db := &DB{
		pool:  pool,
		owned: owned,
		dim:   dim,
		cfg:   cfg,
		table: table,
		ident: pgx.Identifier{table}.Sanitize(),
		dsn:   redactedDSN(pool.Config()),
	}
	db.sqlUpsertUnnest = `INSERT INTO ` + db.ident + ` (id, embedding)
		SELECT id, embedding FROM unnest($1::bigint[], $2::vector[]) AS u(id, embedding) ORDER BY id
		ON CONFLICT (id) DO UPDATE SET embedding = EXCLUDED.embedding`
	db.sqlUpsertStage = `INSERT INTO ` + db.ident + ` (id, embedding)
		SELECT id, embedding FROM agentmem_stage ORDER BY id
		ON CONFLICT (id) DO UPDATE SET embedding = EXCLUDED.embedding`
	db.sqlDelete = `DELETE FROM ` + db.ident + ` WHERE id = ANY($1)`
	db.sqlCount = `SELECT count(*) FROM ` + db.ident

	if err := pool.Ping(ctx); err != nil {
		return nil, db.wrap(ctx, "connect", err)
	}
	if err := db.ensureExtension(ctx); err != nil {
		return nil, err
	}
	if err := db.ensureTable(ctx); err != nil {
		return nil, err
	}
	return db, nil
}

// ensureExtension creates the vector extension in the database when it is
// missing, and explains what to do when that is not possible.
func (db *DB) ensureExtension(ctx context.Context) error {
	return EnsureExtension(ctx, db.pool)
}

// EnsureExtension creates the vector extension in the database pool
// connects to when it is missing. When that is not possible the error wraps
// [ErrNoExtension] and says what to do (install pgvector on the server, or
// have a superuser create the extension); a server that cannot be reached
// wraps [ErrUnavailable]. Programs that keep their own tables beside the
// vectors (a long-term store in PostgreSQL) call it before they create them.
func EnsureExtension(ctx context.Context, pool *pgxpool.Pool) error {
	dsn := redactedDSN(pool.Config())
	var present bool
	err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = $1)`, extension).Scan(&present)
	if err != nil {
		return wrapErr(ctx, dsn, "check extension", err)
	}
	if present {
		return nil
	}
	_, err = pool.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS `+pgx.Identifier{extension}.Sanitize())
	if err == nil {
		return nil
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return wrapErr(ctx, dsn, "create extension", err)
	}
	switch pe.Code {
	case "23505": // a concurrent CREATE EXTENSION won
		return nil
	case "58P01", "0A000", "22023": // control file missing: not installed on the server
		var major string
		_ = pool.QueryRow(ctx, `SELECT current_setting('server_version_num')::int / 10000`).Scan(&major)
		if major == "" {
			major = "NN"
		}
		return fmt.Errorf("%w on the server (%s): %w; install pgvector where PostgreSQL runs: "+
			"Debian/Ubuntu apt-get install postgresql-%s-pgvector (from PGDG, apt.postgresql.org, when the distribution lacks it), "+
			"RHEL pgvector_%s, Homebrew brew install pgvector, Docker the pgvector/pgvector:pg%s image, "+
			"or build it from source (github.com/pgvector/pgvector); then reopen",
			ErrNoExtension, dsn, err, major, major, major)
	case "42501": // insufficient_privilege
		return fmt.Errorf("%w in database %q and user %q may not create it: %w; ask a superuser to run CREATE EXTENSION vector; in that database, then reopen",
			ErrNoExtension, pool.Config().ConnConfig.Database, pool.Config().ConnConfig.User, err)
	}
	return wrapErr(ctx, dsn, "create extension", err)
}

// ensureTable creates the table (and index) when missing and checks the
// dimension of an existing one. An advisory lock serialises concurrent
// openers of the same table.
func (db *DB) ensureTable(ctx context.Context) error {
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return db.wrap(ctx, "open table", err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // after Commit it is a no-op
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "agentmem:"+db.table); err != nil {
		return db.wrap(ctx, "lock table", err)
	}
	var typ *string
	var exists bool
	err = tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL,
		(SELECT format_type(atttypid, atttypmod) FROM pg_attribute
		 WHERE attrelid = to_regclass($1) AND attname = 'embedding' AND NOT attisdropped)`, db.ident).Scan(&exists, &typ)
	if err != nil {
		return db.wrap(ctx, "inspect table", err)
	}
	switch {
	case !exists:
		_, err = tx.Exec(ctx, `CREATE TABLE `+db.ident+` (id bigint PRIMARY KEY, embedding vector(`+strconv.Itoa(db.dim)+`) NOT NULL)`)
		if err != nil {
			return db.wrap(ctx, "create table "+db.table, err)
		}
	case typ == nil:
		return fmt.Errorf("%w: pgvector: table %s exists but has no embedding column: it is not an agentmem vector table; choose another table_prefix or namespace", errs.InvalidArgument, db.table)
	default:
		var got int
		if _, err := fmt.Sscanf(*typ, "vector(%d)", &got); err != nil {
			return fmt.Errorf("%w: pgvector: table %s has embedding of type %s, not vector(n): it is not an agentmem vector table; choose another table_prefix or namespace", errs.InvalidArgument, db.table, *typ)
		}
		if got != db.dim {
			return fmt.Errorf("%w: pgvector: table %s holds vector(%d), opened for dimension %d: open it with the embedder that filled it, use another namespace or table_prefix, or drop the table (DROP TABLE %s) and re-add the vectors",
				vdb.ErrDimension, db.table, got, db.dim, db.ident)
		}
	}
	if !db.cfg.exact {
		_, err = tx.Exec(ctx, fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s USING hnsw (embedding vector_ip_ops) WITH (m = %d, ef_construction = %d)`,
			pgx.Identifier{db.table + indexSuffix}.Sanitize(), db.ident, db.cfg.m, db.cfg.efConstruction))
		if err != nil {
			return db.wrap(ctx, "create index on "+db.table, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return db.wrap(ctx, "open table", err)
	}
	return nil
}

// Dim returns the dimension of the vectors.
func (db *DB) Dim() int { return db.dim }

// Table returns the name of the table that holds the vectors.
func (db *DB) Table() string { return db.table }

// Pool returns the connection pool, for callers that keep other tables in
// the same database.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// lenTimeout bounds the count behind Len, which has no context.
const lenTimeout = 30 * time.Second

// Len returns the number of rows in the table, counted by the server: other
// processes' writes included. Len has no way to report an error; when the
// count fails (server unreachable, closed DB) it returns the last count it
// made.
func (db *DB) Len() int {
	if db.closed.Load() {
		return int(db.length.Load())
	}
	ctx, cancel := context.WithTimeout(context.Background(), lenTimeout)
	defer cancel()
	var n int64
	if err := db.pool.QueryRow(ctx, db.sqlCount).Scan(&n); err != nil {
		return int(db.length.Load())
	}
	db.length.Store(n)
	return int(n)
}

func (db *DB) check(ctx context.Context, op string) error {
	if db.closed.Load() {
		return fmt.Errorf("pgvector: %s: %w", op, vdb.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("pgvector: %s: %w", op, err)
	}
	return nil
}

// acquire takes a connection from the pool and makes sure pgvector's types
// are registered on it (pools the caller built may not do it on connect).
func (db *DB) acquire(ctx context.Context) (*pgxpool.Conn, error) {
	return pgpool.Acquire(ctx, db.pool)
}

// Add stores the vectors, replacing those whose ids are present, in one
// transaction: on error nothing of the batch was stored.
func (db *DB) Add(ctx context.Context, ids []int64, vecs [][]float32) error {
	if err := db.check(ctx, "add"); err != nil {
		return err
	}
	if len(ids) != len(vecs) {
		return fmt.Errorf("%w: pgvector: %d ids for %d vectors", vdb.ErrInvalidID, len(ids), len(vecs))
	}
	for i, id := range ids {
		if id < 0 {
			return fmt.Errorf("%w: pgvector: id %d at %d is negative", vdb.ErrInvalidID, id, i)
		}
		if err := vdb.CheckVector(vecs[i], db.dim); err != nil {
			return fmt.Errorf("pgvector: vector %d: %w", i, err)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	// The last vector of a repeated id wins; rows go in id order so that
	// concurrent upserts lock rows in the same order.
	last := make(map[int64]int, len(ids))
	for i, id := range ids {
		last[id] = i
	}
	order := make([]int, 0, len(last))
	for _, i := range last {
		order = append(order, i)
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(ids[a], ids[b]) })
	flat := make([]float32, len(order)*db.dim)
	rowIDs := make([]int64, len(order))
	rows := make([]pgv.Vector, len(order))
	for j, i := range order {
		v := flat[j*db.dim : (j+1)*db.dim : (j+1)*db.dim]
		if err := vdb.Normalize(v, vecs[i]); err != nil {
			return fmt.Errorf("pgvector: vector %d: %w", i, err)
		}
		rowIDs[j] = ids[i]
		rows[j] = pgv.NewVector(v)
	}

	c, err := db.acquire(ctx)
	if err != nil {
		return db.wrap(ctx, "add", err)
	}
	defer c.Release()
	if len(rows) < copyThreshold {
		// One statement: atomic on its own.
		_, err := c.Exec(ctx, db.sqlUpsertUnnest, rowIDs, rows)
		return db.wrap(ctx, "add", err)
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		return db.wrap(ctx, "add", err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // after Commit it is a no-op
	if _, err := tx.Exec(ctx, `CREATE TEMP TABLE agentmem_stage (id bigint NOT NULL, embedding vector NOT NULL) ON COMMIT DROP`); err != nil {
		return db.wrap(ctx, "add: stage", err)
	}
	_, err = tx.CopyFrom(ctx, pgx.Identifier{"agentmem_stage"}, []string{"id", "embedding"},
		pgx.CopyFromSlice(len(rows), func(j int) ([]any, error) { return []any{rowIDs[j], rows[j]}, nil }))
	if err != nil {
		return db.wrap(ctx, "add: copy", err)
	}
	if _, err := tx.Exec(ctx, db.sqlUpsertStage); err != nil {
		return db.wrap(ctx, "add: upsert", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return db.wrap(ctx, "add: commit", err)
	}
	return nil
}

// Delete removes the ids and reports how many were present.
func (db *DB) Delete(ctx context.Context, ids ...int64) (int, error) {
	if err := db.check(ctx, "delete"); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, nil
	}
	tag, err := db.pool.Exec(ctx, db.sqlDelete, ids)
	if err != nil {
		return 0, db.wrap(ctx, "delete", err)
	}
	return int(tag.RowsAffected()), nil
}

// Search returns the k nearest vectors to query by cosine similarity. A
// cancelled context cancels the query on the server.
func (db *DB) Search(ctx context.Context, query []float32, k int) ([]vdb.Result, error) {
	return db.search(ctx, "search", query, k, nil)
}

// SearchMinScore is Search restricted to results with Score ≥ minScore, the
// cut-off applied by the server.
func (db *DB) SearchMinScore(ctx context.Context, query []float32, k int, minScore float32) ([]vdb.Result, error) {
	return db.search(ctx, "search", query, k, &minScore)
}

// SearchBatch answers the queries in one round trip (one pipeline, one
// read-only transaction).
func (db *DB) SearchBatch(ctx context.Context, queries [][]float32, k int) ([][]vdb.Result, error) {
	if err := db.check(ctx, "search batch"); err != nil {
		return nil, err
	}
	if k <= 0 {
		return nil, fmt.Errorf("%w: got %d", vdb.ErrInvalidK, k)
	}
	qs := make([]pgv.Vector, len(queries))
	for i, q := range queries {
		v, err := db.prepareQuery(q)
		if err != nil {
			return nil, fmt.Errorf("pgvector: query %d: %w", i, err)
		}
		qs[i] = v
	}
	out := make([][]vdb.Result, len(queries))
	if len(queries) == 0 {
		return out, nil
	}
	if err := db.run(ctx, k, qs, nil, out); err != nil {
		return nil, db.wrap(ctx, "search batch", err)
	}
	return out, nil
}

func (db *DB) prepareQuery(q []float32) (pgv.Vector, error) {
	if err := vdb.CheckVector(q, db.dim); err != nil {
		return pgv.Vector{}, err
	}
	u := make([]float32, len(q))
	if err := vdb.Normalize(u, q); err != nil {
		return pgv.Vector{}, err
	}
	return pgv.NewVector(u), nil
}

func (db *DB) search(ctx context.Context, op string, query []float32, k int, minScore *float32) ([]vdb.Result, error) {
	if err := db.check(ctx, op); err != nil {
		return nil, err
	}
	if k <= 0 {
		return nil, fmt.Errorf("%w: got %d", vdb.ErrInvalidK, k)
	}
	q, err := db.prepareQuery(query)
	if err != nil {
		return nil, fmt.Errorf("pgvector: %s: %w", op, err)
	}
	out := make([][]vdb.Result, 1)
	if err := db.run(ctx, k, []pgv.Vector{q}, minScore, out); err != nil {
		return nil, db.wrap(ctx, op, err)
	}
	return out[0], nil
}

// searchSQL returns the query for k results ($1 the query vector, $2 the
// minimum score when withMin) and whether it runs on the HNSW index. Scores
// come back as float8; the exact form orders by inner_product(), which no
// index serves; the HNSW form asks the index for k candidates ordered by
// <#> and re-sorts them with ties by id.
func (db *DB) searchSQL(k int, withMin bool) (string, bool) {
	lim := strconv.Itoa(k)
	if db.cfg.exact || k > maxEfSearch {
		where := ""
		if withMin {
			where = ` WHERE inner_product(embedding, $1) >= $2`
		}
		return `SELECT id, inner_product(embedding, $1) AS s FROM ` + db.ident + where +
			` ORDER BY s DESC, id LIMIT ` + lim, false
	}
	where := ""
	if withMin {
		where = ` WHERE -d >= $2`
	}
	return `SELECT id, -d AS s FROM (SELECT id, embedding <#> $1 AS d FROM ` + db.ident +
		` ORDER BY embedding <#> $1 LIMIT ` + lim + `) c` + where + ` ORDER BY d, id`, true
}

// run sends the queries in one pipeline and fills out[i] with query i's
// results. HNSW searches run in a read-only transaction that sets
// hnsw.ef_search.
func (db *DB) run(ctx context.Context, k int, qs []pgv.Vector, minScore *float32, out [][]vdb.Result) error {
	sql, hnsw := db.searchSQL(k, minScore != nil)
	c, err := db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	b := &pgx.Batch{}
	if hnsw {
		b.Queue(`BEGIN READ ONLY`)
		b.Queue(`SET LOCAL hnsw.ef_search = ` + strconv.Itoa(max(db.cfg.efSearch, k)))
	}
	for _, q := range qs {
		if minScore != nil {
			b.Queue(sql, q, float64(*minScore))
		} else {
			b.Queue(sql, q)
		}
	}
	if hnsw {
		b.Queue(`COMMIT`)
	}
	br := c.SendBatch(ctx, b)
	defer br.Close()
	if hnsw {
		for range 2 {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
	}
	for i := range qs {
		rows, err := br.Query()
		if err != nil {
			return err
		}
		res := make([]vdb.Result, 0, min(k, 256))
		var id int64
		var s float64
		_, err = pgx.ForEachRow(rows, []any{&id, &s}, func() error {
			res = append(res, vdb.Result{ID: id, Score: float32(s)})
			return nil
		})
		if err != nil {
			return err
		}
		out[i] = res
	}
	if hnsw {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	return br.Close()
}

// Drop deletes the namespace's table (and its index) and closes db: every
// process serving the namespace loses its vectors.
func (db *DB) Drop(ctx context.Context) error {
	if err := db.check(ctx, "drop"); err != nil {
		return err
	}
	if _, err := db.pool.Exec(ctx, `DROP TABLE IF EXISTS `+db.ident); err != nil {
		return db.wrap(ctx, "drop", err)
	}
	db.length.Store(0)
	return db.Close()
}

// Close marks db closed and closes its pool when [Open] made it; a pool
// given to [New] stays open. Idempotent.
func (db *DB) Close() error {
	if db.closed.Swap(true) {
		return nil
	}
	if db.owned {
		db.pool.Close()
	}
	return nil
}
