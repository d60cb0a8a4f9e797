package postgres

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmem/agentmem/internal/errs"
	"github.com/agentmem/agentmem/internal/redact"
	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/vdb/pgvector"
)

// A migration brings the schema from version i to i+1 (its index + 1).
// Migrations are append-only: a released one is never edited, a change is
// a new one. Each runs in the transaction that records it in
// schema_migrations, so a failed migration leaves the previous version.
type migration struct {
	name string
	sql  func(shape) string
}

// A shape is what a migration's SQL depends on besides the schema's
// contents: the vectors' dimension and whether they are held sparse
// (a lexical embedder's: migration 10).
type shape struct {
	dim    int
	sparse bool
}

// migrations are the schema's versions; SchemaVersion is their count.
var migrations = []migration{
	{"records, chunks with vectors, keyword postings and per-namespace statistics", func(s shape) string {
		return `
CREATE TABLE manifest (
	singleton  bool PRIMARY KEY DEFAULT true CHECK (singleton),
	embedder   text NOT NULL,
	dim        int NOT NULL,
	created    timestamptz NOT NULL DEFAULT now()
);
-- One row per namespace: the keyword path's BM25 statistics for the
-- record's text (text_*) and for the previous record's text (prev_*).
-- Writers lock the row (FOR UPDATE) so that statistics, insertion order
-- and the neighbour field stay consistent across processes.
CREATE TABLE namespaces (
	id        serial PRIMARY KEY,
	name      text NOT NULL UNIQUE,
	text_docs bigint NOT NULL DEFAULT 0,
	text_len  bigint NOT NULL DEFAULT 0,
	prev_docs bigint NOT NULL DEFAULT 0,
	prev_len  bigint NOT NULL DEFAULT 0
);
CREATE TABLE records (
	seq      bigserial PRIMARY KEY,       -- insertion order: the keyword index's document id
	id       text NOT NULL UNIQUE,
	ns       int NOT NULL REFERENCES namespaces (id),
	text     text NOT NULL,
	time     timestamptz NOT NULL,
	speaker  text NOT NULL DEFAULT '',
	tags     text[] NOT NULL DEFAULT '{}',
	text_len int NOT NULL,                -- tokens of header + text
	prev_len int                          -- tokens of the neighbour field; NULL: no neighbour
);
CREATE INDEX records_ns_seq ON records (ns, seq);
CREATE INDEX records_time_id ON records (time, id);
CREATE INDEX records_ns_time_id ON records (ns, time, id);
CREATE TABLE chunks (
	id         bigserial PRIMARY KEY,
	seq        bigint NOT NULL,           -- the record's
	ns         int NOT NULL,
	time       timestamptz NOT NULL,      -- the record's, for time-range filters on the vector path
	ord        int NOT NULL,              -- index among the record's chunks
	start_byte int NOT NULL,
	end_byte   int NOT NULL,
	text       text NOT NULL,
	embedding  vector(` + strconv.Itoa(s.dim) + `) NOT NULL  -- L2-normalised: inner product = cosine
);
CREATE INDEX chunks_seq ON chunks (seq);
CREATE INDEX chunks_ns ON chunks (ns);
-- field 0: header + text; field 1: the previous record's text.
CREATE TABLE postings (
	ns    int NOT NULL,
	field smallint NOT NULL,
	term  text NOT NULL,
	seq   bigint NOT NULL,
	tf    int NOT NULL,
	dl    int NOT NULL,                   -- the document's length in that field
	PRIMARY KEY (ns, field, term, seq)
) WITH (fillfactor = 90);
CREATE INDEX postings_seq ON postings (seq);
CREATE TABLE speakers (
	ns      int NOT NULL,
	speaker text NOT NULL,
	n       int NOT NULL,
	PRIMARY KEY (ns, speaker)
);`
	}},
	{"neighbour links instead of a field of the previous record's words; postings of the record's own words only", func(shape) string {
		return `
-- A record's neighbours are the records written just before and after it
-- in its namespace (at most 12 hours apart): prev_seq links a record to
-- the one before, and a record's keyword score adds what its neighbours'
-- text scores, weighted (memory/longterm's turn index). A forgotten
-- record unlinks its neighbours. The namespace remembers its newest
-- record, the one the next write links to (NULL once that is forgotten).
ALTER TABLE records ADD COLUMN prev_seq bigint;
UPDATE records r SET prev_seq = l.prev
	FROM (SELECT seq, lag(seq) OVER (PARTITION BY ns ORDER BY seq) AS prev FROM records) l
	WHERE r.seq = l.seq AND r.prev_len IS NOT NULL;
ALTER TABLE records DROP COLUMN prev_len;
CREATE INDEX records_prev_seq ON records (prev_seq) WHERE prev_seq IS NOT NULL;
ALTER TABLE namespaces ADD COLUMN last_seq bigint, ADD COLUMN last_time timestamptz,
	DROP COLUMN prev_docs, DROP COLUMN prev_len;
UPDATE namespaces n SET last_seq = r.seq, last_time = r.time
	FROM (SELECT DISTINCT ON (ns) ns, seq, time FROM records ORDER BY ns, seq DESC) r WHERE n.id = r.ns;
DELETE FROM postings WHERE field = 1;
ALTER TABLE postings DROP CONSTRAINT postings_pkey;
ALTER TABLE postings DROP COLUMN field;
-- Covering: a query's postings are read by an index-only scan.
ALTER TABLE postings ADD PRIMARY KEY (ns, term, seq) INCLUDE (tf, dl);`
	}},
	{"chunks keep their vectors in line", func(shape) string {
		// A vector of 512 float4 makes a row of more than 2 kB, which
		// PostgreSQL moves out of line to the TOAST table: every distance
		// of an exact scan then reads a second table. Up to a full page
		// (about 2,000 dimensions) stays in line now; rows written before
		// keep their place until rewritten (VACUUM FULL chunks).
		return `ALTER TABLE chunks SET (toast_tuple_target = 8160);
ALTER TABLE chunks ALTER COLUMN embedding SET STORAGE MAIN;`
	}},
	{"episodes: conversations as keyword documents", func(shape) string {
		// memory/longterm's turn index (turns.go): a run of records of a
		// namespace each at most 12 hours after the one before is one
		// episode, scored by BM25 as one document. Existing records are
		// cut into episodes by that rule over the records that are left,
		// as memory/longterm does when it builds its index from a store.
		return `
-- A record's episode is the seq of the episode's first record; a record
-- linked to the one before it (prev_seq) is in that one's episode. A
-- forgotten record leaves its episode whole.
ALTER TABLE records ADD COLUMN episode bigint;
UPDATE records r SET episode = e.episode FROM (
	SELECT seq, min(seq) OVER (PARTITION BY ns, run) AS episode FROM (
		SELECT seq, ns, count(*) FILTER (WHERE brk) OVER (PARTITION BY ns ORDER BY seq) AS run FROM (
			SELECT seq, ns, lag(time) OVER w IS NULL OR time - lag(time) OVER w > interval '12 hours'
				OR lag(time) OVER w - time > interval '12 hours' AS brk
			FROM records WINDOW w AS (PARTITION BY ns ORDER BY seq)) a) b) e
	WHERE r.seq = e.seq;
ALTER TABLE records ALTER COLUMN episode SET NOT NULL;
-- An episode's length (tokens of all its records' indexed texts) and
-- number of records; the namespace counts its episodes.
CREATE TABLE episodes (
	ns      int NOT NULL,
	episode bigint NOT NULL,
	len     bigint NOT NULL,
	records int NOT NULL,
	PRIMARY KEY (ns, episode) INCLUDE (len)
);
INSERT INTO episodes (ns, episode, len, records)
	SELECT ns, episode, sum(text_len), count(*) FROM records GROUP BY ns, episode;
ALTER TABLE namespaces ADD COLUMN episode_docs bigint NOT NULL DEFAULT 0;
UPDATE namespaces n SET episode_docs = (SELECT count(*) FROM episodes e WHERE e.ns = n.id);
-- A posting carries its record's episode: a query scores episodes from
-- the postings it reads anyway, grouped by episode.
ALTER TABLE postings ADD COLUMN episode bigint;
UPDATE postings p SET episode = r.episode FROM records r WHERE r.seq = p.seq;
ALTER TABLE postings ALTER COLUMN episode SET NOT NULL;
ALTER TABLE postings DROP CONSTRAINT postings_pkey;
ALTER TABLE postings ADD PRIMARY KEY (ns, term, seq) INCLUDE (tf, dl, episode);`
	}},
	{"postings packed in blocks per term for queries", func(shape) string {
		// blocks.go: a query reads a term's postings from a few blocks
		// instead of a row per record. Existing postings are the tail
		// (merged_seq 0) until the next write to their namespace packs
		// them.
		return `
CREATE TABLE posting_blocks (
	ns       int NOT NULL,
	term     text NOT NULL,
	last_seq bigint NOT NULL,             -- the block holds seqs after the term's previous block's, up to this one
	n        int NOT NULL,                -- postings in data
	data     bytea NOT NULL,              -- per posting: uvarints seq − previous seq, tf, dl, seq − episode
	PRIMARY KEY (ns, term, last_seq)
);
-- Packed varints do not compress: keep them out of pglz.
ALTER TABLE posting_blocks ALTER COLUMN data SET STORAGE EXTERNAL;
-- The newest record whose postings are in blocks, and how many records
-- were written after it.
ALTER TABLE namespaces ADD COLUMN merged_seq bigint NOT NULL DEFAULT 0, ADD COLUMN tail_docs bigint NOT NULL DEFAULT 0;
UPDATE namespaces SET tail_docs = text_docs;`
	}},
	{"chunks written pending, outside the HNSW index until folded", func(shape) string {
		// fold.go: a small write's chunks are inserted pending, which the
		// HNSW index (now partial) leaves out; a query scans them exactly
		// besides searching the index, and a fold moves them into it.
		// An existing index is built again as the partial one (every
		// chunk written so far is in it: none is pending).
		return `
ALTER TABLE chunks ADD COLUMN pending boolean NOT NULL DEFAULT false;
CREATE INDEX chunks_pending ON chunks (ns) WHERE pending;
DO $$
BEGIN
	IF EXISTS (SELECT FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'chunks_hnsw') THEN
		EXECUTE format('DROP INDEX %I.chunks_hnsw', current_schema());
		CREATE INDEX chunks_hnsw ON chunks USING hnsw (embedding vector_ip_ops) WHERE NOT pending;
	END IF;
END
$$;`
	}},
	{"facts that change: validity, versions, duplicates", func(shape) string {
		// facts.go: memory.Facts. Columns are only added (no table is
		// rewritten): a record written before holds from its time, has no
		// versions and no text key (so a duplicate of it is stored again).
		return `
-- When a record holds: from valid_from (NULL: its time) until valid_until
-- (NULL: still); the versions it replaced and that replaced it (ids, ''
-- for none); how often its text was written again; the key of its
-- normalised text (fact.Key), for finding duplicates.
ALTER TABLE records ADD COLUMN valid_from timestamptz, ADD COLUMN valid_until timestamptz,
	ADD COLUMN supersedes text NOT NULL DEFAULT '', ADD COLUMN superseded_by text NOT NULL DEFAULT '',
	ADD COLUMN seen int NOT NULL DEFAULT 0, ADD COLUMN last_seen timestamptz, ADD COLUMN text_key bigint;
CREATE INDEX records_ns_text_key ON records (ns, text_key) WHERE text_key IS NOT NULL;
-- The record's validity, for the vector path's filter.
ALTER TABLE chunks ADD COLUMN valid_from timestamptz, ADD COLUMN valid_until timestamptz;
-- How many of the namespace's records have ended, and the latest moment
-- one starts: a search at a later moment in a namespace where none ended
-- filters nothing.
ALTER TABLE namespaces ADD COLUMN ended bigint NOT NULL DEFAULT 0, ADD COLUMN latest timestamptz;
UPDATE namespaces n SET latest = (SELECT max(time) FROM records r WHERE r.ns = n.id);`
	}},
	{"add_record: a single record's write in one statement; indexes a load builds at its end", func(shape) string {
		// addone.go (addFast): the write of one new record, which is most
		// writes of an agent, as one server-side call instead of a dozen
		// statements, each a round trip. It does what commitOnce does for
		// such a record, or nothing (returning 0) when the record needs
		// the general path: its id is stored already, or the namespace's
		// tail is due to be packed into blocks. deferred_indexes
		// (load.go) lists the indexes a load dropped, to build at its end.
		return addRecordSQL
	}},
	{"a record's terms in its row; the postings table is gone", func(shape) string {
		// A postings row per term of a record cost a single write about
		// 60% of its time in PostgreSQL (40 rows, each a heap tuple and
		// two B-tree entries in indexes of hundreds of thousands of
		// entries). A record's terms and their counts are now arrays in
		// its row (sorted by term); a query reads a namespace's tail
		// (records after merged_seq) from them, and the posting blocks
		// hold the rest as before (blocks.go). Indexes of postings that a
		// failed load left to build go with the table.
		return `
ALTER TABLE records ADD COLUMN terms text[], ADD COLUMN tfs int[];
UPDATE records r SET terms = p.terms, tfs = p.tfs
	FROM (SELECT seq, array_agg(term ORDER BY term COLLATE "C") AS terms, array_agg(tf ORDER BY term COLLATE "C") AS tfs FROM postings GROUP BY seq) p
	WHERE r.seq = p.seq;
UPDATE records SET terms = '{}', tfs = '{}' WHERE terms IS NULL;
ALTER TABLE records ALTER COLUMN terms SET NOT NULL, ALTER COLUMN tfs SET NOT NULL;
DELETE FROM deferred_indexes WHERE name IN ('postings_pkey', 'postings_seq');
DROP TABLE postings;` + addRecordSQL9
	}},
	{"a lexical embedder's chunk vectors as sparsevec", func(s shape) string {
		// sparse.go: the vectors of a lexical embedder (embed/hash) are
		// mostly zeros (a chunk of a turn sets about 50 of 512
		// dimensions), so its chunks hold them as pgvector's sparsevec,
		// a fifth of the bytes to write, read and copy into the process.
		// A store of another embedder keeps vector(dim). An HNSW index
		// is built again, over the vectors cast to vector(dim).
		if !s.sparse {
			return `SELECT 1`
		}
		return fmt.Sprintf(`
DO $$
DECLARE
	indexed boolean := EXISTS (SELECT FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'chunks_hnsw');
BEGIN
	IF indexed THEN
		EXECUTE format('DROP INDEX %%I.chunks_hnsw', current_schema());
	END IF;
	ALTER TABLE chunks ALTER COLUMN embedding TYPE sparsevec(%d) USING embedding::sparsevec(%d);
	ALTER TABLE chunks ALTER COLUMN embedding SET STORAGE MAIN;
	IF indexed THEN
		CREATE INDEX chunks_hnsw ON chunks USING hnsw ((embedding::vector(%d)) vector_ip_ops) WHERE NOT pending;
	END IF;
END
$$;`, s.dim, s.dim, s.dim)
	}},
	{"no planner statistics for columns no query filters on", func(shape) string {
		// ANALYZE, which a load ends with (load.go), spent about 70% of
		// its time on columns that no statement filters or sorts on: a
		// record's terms and counts (the most common elements of arrays
		// of ~76 terms), texts, the chunks' vectors and the posting
		// blocks' bytes (436 ms of a 10,000-record load's ~1.2 s of
		// server CPU). The planner reads the statistics of the columns
		// queries select by (ns, seq, time, id, text_key, …); for
		// terms && $2 it falls back to a default selectivity, under the
		// ns and seq conditions that choose the plan.
		return `
ALTER TABLE records ALTER COLUMN text SET STATISTICS 0, ALTER COLUMN terms SET STATISTICS 0,
	ALTER COLUMN tfs SET STATISTICS 0, ALTER COLUMN tags SET STATISTICS 0;
ALTER TABLE chunks ALTER COLUMN text SET STATISTICS 0, ALTER COLUMN embedding SET STATISTICS 0;
ALTER TABLE posting_blocks ALTER COLUMN data SET STATISTICS 0;`
	}},
	{"add_record in fewer statements", func(shape) string {
		// addone.go: a single write's server-side call, the same writes
		// with fewer executor starts (addRecordSQL12).
		return addRecordSQL12
	}},
	{"the manifest names the keyword tokenizer that cut the records' terms", func(shape) string {
		// NULL until migrate sets it: terms cut before the tokenizer was
		// recorded are checked against this build's (reindex.go).
		return `ALTER TABLE manifest ADD COLUMN IF NOT EXISTS tokenizer text;`
	}},
	{"records without a foreign key to their namespace", func(shape) string {
		// The key's check ran once for every record written, a
		// statement of its own that locks the namespace's row (KEY
		// SHARE): 12% of a 10,000-record load's server CPU
		// (BenchmarkVsDir: 0.96–0.97 s without it, 1.08–1.10 s with it,
		// 3 runs each). Every writer takes the namespace's row, locked
		// until it commits, before it writes the namespace's records
		// (writeStats), and no statement deletes a namespace; the other
		// tables of a namespace's rows never had the key: Verify finds a
		// row of a namespace that does not exist, records among them.
		return `ALTER TABLE records DROP CONSTRAINT IF EXISTS records_ns_fkey;`
	}},
}

// hnswIndexSQL creates the HNSW index over indexed (Memory.indexExpr) of
// the chunks that are not pending (migrations 6 and 10 create it too, in
// their own words); concurrently builds it without blocking writers
// (index.go).
func hnswIndexSQL(indexed string, concurrently bool) string {
	c := ""
	if concurrently {
		c = "CONCURRENTLY "
	}
	return `CREATE INDEX ` + c + `IF NOT EXISTS chunks_hnsw ON chunks USING hnsw ((` + indexed + `) vector_ip_ops) WHERE NOT pending`
}

// SchemaVersion is the schema version this build creates and reads.
var SchemaVersion = len(migrations)

// lockSchema takes the store's schema lock until tx ends: openers that
// create or change the schema (migrate, the HNSW index build) take it in
// turn.
func (m *Memory) lockSchema(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "agentmem:schema:"+m.schema)
	return err
}

// migrate creates the schema and the manifest, or checks and upgrades
// them, in one transaction under an advisory lock (concurrent openers wait
// for the first). A newer schema is ErrVersion; another embedder or
// dimension is ErrEmbedderMismatch.
func (m *Memory) migrate(ctx context.Context, create bool) error {
	tx, err := m.pool.Begin(ctx)
	if err != nil {
		return m.wrap(ctx, "migrate", err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // after Commit it is a no-op
	if err := m.lockSchema(ctx, tx); err != nil {
		return m.wrap(ctx, "migrate: lock", err)
	}
	version, err := schemaVersion(ctx, tx, m.schema)
	if err != nil {
		return m.wrap(ctx, "migrate: read version", err)
	}
	if version > SchemaVersion {
		return fmt.Errorf("postgres: %w: schema %q of %s is at version %d, this build knows versions up to %d: upgrade agentmem (or open another schema)",
			errs.Version, m.schema, m.dsn, version, SchemaVersion)
	}
	if version == 0 {
		if !create {
			return fmt.Errorf("postgres: no memory store in schema %q of %s: %w (create it: agentmem serve --store with a new store, or store.Config.Create)", m.schema, m.dsn, fs.ErrNotExist)
		}
		if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{m.schema}.Sanitize()); err != nil {
			return m.wrap(ctx, "migrate: create schema", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE `+pgx.Identifier{m.schema, "schema_migrations"}.Sanitize()+` (version int PRIMARY KEY, name text NOT NULL, applied timestamptz NOT NULL DEFAULT now())`); err != nil {
			return m.wrap(ctx, "migrate: create schema_migrations", err)
		}
	}
	if _, err := tx.Exec(ctx, `SET LOCAL search_path TO `+pgx.Identifier{m.schema}.Sanitize()+`, public`); err != nil {
		return m.wrap(ctx, "migrate: search_path", err)
	}
	if version < SchemaVersion {
		// A migration may build the HNSW index again.
		if _, err := tx.Exec(ctx, fmt.Sprintf(`SET LOCAL maintenance_work_mem = '%dMB'`, m.opts.maintenanceMem)); err != nil {
			return m.wrap(ctx, "migrate: maintenance_work_mem", err)
		}
	}
	for v := version; v < SchemaVersion; v++ {
		mig := migrations[v]
		if _, err := tx.Exec(ctx, mig.sql(shape{dim: m.dim, sparse: holdsSparse(m.emb, m.dim)})); err != nil {
			return m.wrap(ctx, fmt.Sprintf("migrate to version %d (%s)", v+1, mig.name), err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, v+1, mig.name); err != nil {
			return m.wrap(ctx, "migrate: record version", err)
		}
	}
	var embedder string
	var dim int
	var tokenizer pgtype.Text
	tokName := keyword.TokenizerName(m.tok)
	err = tx.QueryRow(ctx, `SELECT embedder, dim, tokenizer FROM manifest`).Scan(&embedder, &dim, &tokenizer)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		if _, err := tx.Exec(ctx, `INSERT INTO manifest (embedder, dim, tokenizer) VALUES ($1, $2, $3)`, m.emb.Name(), m.dim, tokName); err != nil {
			return m.wrap(ctx, "migrate: write manifest", err)
		}
	case err != nil:
		return m.wrap(ctx, "migrate: read manifest", err)
	case embedder != m.emb.Name() || dim != m.dim:
		return fmt.Errorf("postgres: %w: schema %q of %s was built with embedder %s (dimension %d), opened with %s (dimension %d): open it with %s, or use another schema (schema=NAME in the URL)",
			errs.EmbedderMismatch, m.schema, m.dsn, embedder, dim, m.emb.Name(), m.dim, embedder)
	case tokenizer.String != tokName:
		// Another tokenizer cut the stored terms (an older build's, or
		// none recorded): cut them again, once, in this transaction.
		start := time.Now()
		n, changed, err := m.reindex(ctx, tx)
		if err != nil {
			return m.wrap(ctx, "migrate: reindex the records' terms", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE manifest SET tokenizer = $1`, tokName); err != nil {
			return m.wrap(ctx, "migrate: write manifest", err)
		}
		if changed > 0 {
			m.opts.logger.Info("postgres: the keyword tokenizer changed; records' terms cut again",
				"schema", m.schema, "records", n, "changed", changed, "took", time.Since(start).Round(time.Millisecond))
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return m.wrap(ctx, "migrate: commit", err)
	}
	return nil
}

// schemaVersion returns the highest applied migration, 0 for no schema.
func schemaVersion(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, schema string) (int, error) {
	var exists bool
	if err := q.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, pgx.Identifier{schema, "schema_migrations"}.Sanitize()).Scan(&exists); err != nil {
		return 0, err
	}
	if !exists {
		return 0, nil
	}
	var v int
	err := q.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM `+pgx.Identifier{schema, "schema_migrations"}.Sanitize()).Scan(&v)
	return v, err
}

// Manifest is what a store in PostgreSQL records about itself.
type Manifest struct {
	Schema   string // the PostgreSQL schema that holds the store
	Version  int    // the schema version (migrations applied)
	Embedder string // the embedder's name, an embed.Open spec
	Dim      int
	// Tokenizer names the keyword tokenizer that cut the records' terms
	// (keyword.TokenizerName); empty before schema version 13, which
	// records it.
	Tokenizer string
}

// ReadManifest reads what the store at url was built with, without
// creating or changing anything. No store there is an error wrapping
// fs.ErrNotExist; a server that cannot be reached one wrapping
// ErrUnavailable. No error holds the URL's password.
func ReadManifest(ctx context.Context, url string) (Manifest, error) {
	man, err := readManifest(ctx, url)
	return man, redact.Error(err, url)
}

func readManifest(ctx context.Context, url string) (Manifest, error) {
	pc, up, err := parseURL(url)
	if err != nil {
		return Manifest{}, err
	}
	schema := up.schema
	dsn := pgvector.RedactedDSN(pc)
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return Manifest{}, pgvector.WrapError(ctx, dsn, "connect", err)
	}
	defer pool.Close()
	man := Manifest{Schema: schema}
	man.Version, err = schemaVersion(ctx, pool, schema)
	if err != nil {
		return Manifest{}, pgvector.WrapError(ctx, dsn, "read schema version", err)
	}
	if man.Version == 0 {
		return Manifest{}, fmt.Errorf("postgres: no memory store in schema %q of %s: %w", schema, dsn, fs.ErrNotExist)
	}
	err = pool.QueryRow(ctx, `SELECT embedder, dim FROM `+pgx.Identifier{schema, "manifest"}.Sanitize()).Scan(&man.Embedder, &man.Dim)
	if errors.Is(err, pgx.ErrNoRows) {
		return Manifest{}, fmt.Errorf("postgres: schema %q of %s has no manifest row: %w", schema, dsn, fs.ErrNotExist)
	}
	if err != nil {
		return Manifest{}, pgvector.WrapError(ctx, dsn, "read manifest", err)
	}
	if man.Version >= 13 {
		var tok pgtype.Text
		if err := pool.QueryRow(ctx, `SELECT tokenizer FROM `+pgx.Identifier{schema, "manifest"}.Sanitize()).Scan(&tok); err != nil {
			return Manifest{}, pgvector.WrapError(ctx, dsn, "read manifest", err)
		}
		man.Tokenizer = tok.String
	}
	return man, nil
}

// IsURL reports whether target names a PostgreSQL store (postgres:// or
// postgresql://) rather than a store directory.
func IsURL(target string) bool {
	return strings.HasPrefix(target, "postgres://") || strings.HasPrefix(target, "postgresql://")
}

// DefaultSchema is the PostgreSQL schema a store lives in when the URL
// does not say (schema=NAME).
const DefaultSchema = "agentmem"

// urlParams are the parameters of a store URL that are agentmem's, not
// pgx's.
type urlParams struct {
	schema     string // schema=NAME (default DefaultSchema)
	exact      bool   // exact=1: no HNSW index, exact vector search
	indexAfter int    // index_after=N (WithIndexAfter); -1: not given
}

// parseURL parses a store URL: a libpq URL with agentmem's parameters
// (urlParams) removed from what goes to pgx, and DefaultConnectTimeout
// unless it sets connect_timeout.
func parseURL(url string) (pc *pgxpool.Config, up urlParams, err error) {
	up = urlParams{schema: DefaultSchema, indexAfter: -1}
	pc, err = pgxpool.ParseConfig(url)
	if err != nil {
		// pgx redacts the password from its message.
		return nil, up, fmt.Errorf("postgres: %w: bad store URL: %v (want postgres://user@host:5432/db?schema=agentmem)", errs.InvalidArgument, err)
	}
	if pc.ConnConfig.ConnectTimeout == 0 {
		pc.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	params := pc.ConnConfig.RuntimeParams
	if v, ok := params["schema"]; ok {
		delete(params, "schema")
		up.schema = v
	}
	if !schemaRE(up.schema) {
		return nil, up, fmt.Errorf("postgres: %w: schema=%q: want a lower-case identifier (letters, digits, _), at most 48 characters", errs.InvalidArgument, up.schema)
	}
	if v, ok := params["exact"]; ok {
		delete(params, "exact")
		up.exact, err = strconv.ParseBool(v)
		if err != nil {
			return nil, up, fmt.Errorf("postgres: %w: exact=%q: want 1 or 0", errs.InvalidArgument, v)
		}
	}
	if v, ok := params["index_after"]; ok {
		delete(params, "index_after")
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > math.MaxInt32 {
			return nil, up, fmt.Errorf("postgres: %w: index_after=%q: want a number of records, 0 or more", errs.InvalidArgument, v)
		}
		up.indexAfter = n
	}
	return pc, up, nil
}

func schemaRE(s string) bool {
	if s == "" || len(s) > 48 || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
