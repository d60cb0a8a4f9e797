package postgres_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	pgv "github.com/pgvector/pgvector-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/postgres"
)

// TestMigrateFromVersion1: a store written at schema version 1 (the
// previous record's words as a field of postings of their own) opens at
// the current version with its records linked to their previous ones and
// cut into episodes (conversations), its postings packed into blocks
// (here of 2, whenever 2 records wait), and ranks as a store written at
// the current version.
func TestMigrateFromVersion1(t *testing.T) {
	t.Cleanup(postgres.SetBlocks(2, 2))
	ctx := t.Context()
	u := storeURL(t, "exact", "1")
	pu, err := url.Parse(u)
	require.NoError(t, err)
	schema := pu.Query().Get("schema")
	conn, err := pgx.Connect(ctx, needPG(t))
	require.NoError(t, err)
	defer conn.Close(ctx)
	sid := pgx.Identifier{schema}.Sanitize()
	// Version 1, as that build wrote it: two records of one conversation,
	// the second with the first's words in its neighbour field, and one
	// record a day later (no neighbour).
	for _, sql := range []string{
		`CREATE SCHEMA ` + sid,
		`CREATE TABLE ` + sid + `.schema_migrations (version int PRIMARY KEY, name text NOT NULL, applied timestamptz NOT NULL DEFAULT now())`,
		`SET search_path TO ` + sid + `, public`,
		postgres.MigrationSQL(0, 256),
		`INSERT INTO schema_migrations (version, name) VALUES (1, 'v1')`,
		`INSERT INTO manifest (embedder, dim) VALUES ('hash:256', 256)`,
		`INSERT INTO namespaces (name, text_docs, text_len, prev_docs, prev_len) VALUES ('default', 3, 6, 1, 2)`,
		`INSERT INTO records (seq, id, ns, text, time, speaker, text_len, prev_len) VALUES
			(1, 'q', 1, 'zebra crossing', '2025-03-01 10:00Z', 'Ann', 2, NULL),
			(2, 'a', 1, 'near station', '2025-03-01 10:01Z', 'Ben', 2, 2),
			(3, 'x', 1, 'other day', '2025-03-02 10:00Z', 'Ann', 2, NULL)`,
		`INSERT INTO speakers (ns, speaker, n) VALUES (1, 'Ann', 2), (1, 'Ben', 1)`,
		`SELECT setval(pg_get_serial_sequence('records', 'seq'), 3)`,
		`INSERT INTO chunks (seq, ns, time, ord, start_byte, end_byte, text, embedding)
			SELECT seq, 1, time, 0, 0, length(text), text, array_fill(0.0625, ARRAY[256])::vector FROM records`,
		`INSERT INTO postings (ns, field, term, seq, tf, dl) VALUES
			(1, 0, 'zebra', 1, 1, 2), (1, 0, 'cross', 1, 1, 2), (1, 0, 'near', 2, 1, 2), (1, 0, 'station', 2, 1, 2),
			(1, 0, 'other', 3, 1, 2), (1, 0, 'day', 3, 1, 2), (1, 1, 'zebra', 2, 1, 2), (1, 1, 'cross', 2, 1, 2)`,
	} {
		_, err := conn.Exec(ctx, sql)
		require.NoError(t, err, sql)
	}
	m := open(t, u)
	var version int
	require.NoError(t, m.Pool().QueryRow(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&version))
	assert.Equal(t, postgres.SchemaVersion, version)
	rows, err := m.Pool().Query(ctx, `SELECT id, coalesce(prev_seq, 0), episode FROM records ORDER BY seq`)
	require.NoError(t, err)
	type link struct {
		ID            string
		Prev, Episode int64
	}
	links, err := pgx.CollectRows(rows, pgx.RowToStructByPos[link])
	require.NoError(t, err)
	assert.Equal(t, []link{{"q", 0, 1}, {"a", 1, 1}, {"x", 0, 3}}, links)
	var merged int64
	require.NoError(t, m.Pool().QueryRow(ctx, `SELECT merged_seq FROM namespaces`).Scan(&merged))
	assert.Equal(t, int64(3), merged, "Open packed the migrated postings")
	checkStats(t, m)

	// The answer is found through its question, the question through its
	// answer; a new record links to the newest one.
	hits, err := m.Query(ctx, memory.Query{Text: "zebra", Mode: memory.KeywordOnly})
	require.NoError(t, err)
	assert.Equal(t, []string{"q", "a"}, hitIDs(hits))
	hits, err = m.Query(ctx, memory.Query{Text: "station", Mode: memory.KeywordOnly})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "q"}, hitIDs(hits))
	_, err = m.Add(ctx, memory.Record{ID: "y", Text: "the next day", Time: t0.AddDate(0, 0, 1).Add(-10 * time.Hour)})
	require.NoError(t, err)
	var prev int64
	require.NoError(t, m.Pool().QueryRow(ctx, `SELECT prev_seq FROM records WHERE id = 'y'`).Scan(&prev))
	assert.Equal(t, int64(3), prev, "linked to x, 10 hours before it")
	var episode, episodes int64
	require.NoError(t, m.Pool().QueryRow(ctx, `SELECT episode, (SELECT episode_docs FROM namespaces) FROM records WHERE id = 'y'`).Scan(&episode, &episodes))
	assert.Equal(t, int64(3), episode, "in x's episode")
	assert.Equal(t, int64(2), episodes)
	checkStats(t, m)
}

func hitIDs(hits []memory.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

// TestMigrateFromVersion5: a store at schema version 5 with its (full)
// HNSW index opens at the current version with the index built again as
// the partial one (by the migration: here opened with exact=1, which
// builds no index), its chunks not pending, and the same hits as before.
func TestMigrateFromVersion5(t *testing.T) {
	ctx := t.Context()
	u := storeURL(t)
	m, want := migrationStore(t, u)
	chunks := m.Chunks()
	require.NoError(t, m.Close())

	require.NoError(t, downgradeToV5(ctx, needPG(t), m.Schema()))
	conn, err := pgx.Connect(ctx, withParams(needPG(t), "search_path", m.Schema()+",public"))
	require.NoError(t, err)
	defer conn.Close(ctx)
	var oldOID uint32
	require.NoError(t, conn.QueryRow(ctx, `SELECT 'chunks_hnsw'::regclass::oid`).Scan(&oldOID))

	check := func(m *postgres.Memory) {
		t.Helper()
		var version int
		require.NoError(t, m.Pool().QueryRow(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&version))
		assert.Equal(t, postgres.SchemaVersion, version)
		var def string
		var oid uint32
		require.NoError(t, m.Pool().QueryRow(ctx, `SELECT indexdef, (SELECT 'chunks_hnsw'::regclass::oid) FROM pg_indexes WHERE schemaname = $1 AND indexname = 'chunks_hnsw'`,
			m.Schema()).Scan(&def, &oid))
		assert.Contains(t, def, "WHERE (NOT pending)")
		assert.NotEqual(t, oldOID, oid, "the index was built again")
		pending, folded := chunkStates(t, m)
		assert.Zero(t, pending)
		assert.Equal(t, chunks, folded)
		assert.Equal(t, len(parityTurns), m.Len())
		sameHits(t, m, want)
		checkStats(t, m)
	}
	check(open(t, withParams(u, "exact", "1")))
	m = open(t, u)
	check(m)
	// The upgraded store keeps facts that change.
	hits, err := m.Query(ctx, migrationQueries[0])
	require.NoError(t, err)
	first := hits[0].ID
	out, err := m.Supersede(ctx, first, memory.Record{Text: "A new version of the first hit."})
	require.NoError(t, err)
	hits, err = m.Query(ctx, migrationQueries[0])
	require.NoError(t, err)
	assert.NotContains(t, hitIDs(hits), first, "a superseded record is not current")
	h, err := m.History(ctx, out.ID)
	require.NoError(t, err)
	assert.Equal(t, []string{first, out.ID}, []string{h[0].ID, h[1].ID})
}

// reconnect closes m and returns a connection to its schema, closed when
// the test ends.
func reconnect(t *testing.T, m *postgres.Memory) *pgx.Conn {
	t.Helper()
	require.NoError(t, m.Close())
	conn, err := pgx.Connect(t.Context(), withParams(needPG(t), "search_path", m.Schema()+",public"))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// migrationQueries are the queries a migration test asks before and
// after.
var migrationQueries = []memory.Query{
	{Text: "who drives the van", Mode: memory.VectorOnly, K: 5},
	{Text: "lake weather", Mode: memory.Hybrid, K: 5},
}

// migrationStore opens (creating) the store at u with hash:256, writes
// parityRecords, folds them and returns it, open, with the hits of
// migrationQueries.
func migrationStore(t *testing.T, u string) (*postgres.Memory, [][]memory.Hit) {
	t.Helper()
	m, err := postgres.Open(t.Context(), u, hashEmb(t, 256), postgres.WithCreate())
	require.NoError(t, err)
	_, err = m.AddBatch(t.Context(), parityRecords())
	require.NoError(t, err)
	require.NoError(t, m.Fold(t.Context()))
	var want [][]memory.Hit
	for _, q := range migrationQueries {
		hits, err := m.Query(t.Context(), q)
		require.NoError(t, err)
		require.NotEmpty(t, hits)
		want = append(want, hits)
	}
	return m, want
}

// sameHits asserts that m answers migrationQueries with want's hits and
// scores (hitsAlike).
func sameHits(t *testing.T, m *postgres.Memory, want [][]memory.Hit) {
	t.Helper()
	for i, q := range migrationQueries {
		hits, err := m.Query(t.Context(), q)
		require.NoError(t, err)
		hitsAlike(t, want[i], hits, q.Text)
	}
}

// downgradeToV5 turns the store in schema back into a version-5 one: no
// pending column (nor the indexes over it), the full HNSW index, no
// validity columns, no record of migrations 6 and 7.
func downgradeToV5(ctx context.Context, dsn, schema string) error {
	conn, err := pgx.Connect(ctx, withParams(dsn, "search_path", schema+",public"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if err := downgradeToV8(ctx, conn); err != nil {
		return err
	}
	for _, sql := range []string{
		`ALTER TABLE records DROP COLUMN valid_from, DROP COLUMN valid_until, DROP COLUMN supersedes, DROP COLUMN superseded_by,
			DROP COLUMN seen, DROP COLUMN last_seen, DROP COLUMN text_key`,
		`ALTER TABLE chunks DROP COLUMN valid_from, DROP COLUMN valid_until`,
		`ALTER TABLE namespaces DROP COLUMN ended, DROP COLUMN latest`,
		`ALTER TABLE chunks DROP COLUMN pending`,
		`SET maintenance_work_mem = '1GB'`,
		`CREATE INDEX chunks_hnsw ON chunks USING hnsw (embedding vector_ip_ops)`,
		`DELETE FROM schema_migrations WHERE version > 5`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	return nil
}

// downgradeToV8 turns the store that conn's search_path leads to into one
// at schema version 8, as that build wrote it: a postings row per term of
// each record instead of the records' terms arrays.
func downgradeToV8(ctx context.Context, conn *pgx.Conn) error {
	if err := downgradeToV9(ctx, conn); err != nil {
		return err
	}
	for _, sql := range []string{
		`CREATE TABLE postings (ns int NOT NULL, term text NOT NULL, seq bigint NOT NULL, tf int NOT NULL, dl int NOT NULL, episode bigint NOT NULL,
			PRIMARY KEY (ns, term, seq) INCLUDE (tf, dl, episode)) WITH (fillfactor = 90)`,
		`CREATE INDEX postings_seq ON postings (seq)`,
		`INSERT INTO postings SELECT r.ns, u.term, r.seq, u.tf, r.text_len, r.episode FROM records r CROSS JOIN LATERAL unnest(r.terms, r.tfs) AS u(term, tf)`,
		`ALTER TABLE records DROP COLUMN terms, DROP COLUMN tfs`,
		postgres.MigrationSQL(7, 0),
		`DELETE FROM schema_migrations WHERE version > 8`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	return nil
}

// downgradeToV9 turns the store that conn's search_path leads to into one
// at schema version 9: its chunks' vectors of type vector(dim), and its
// HNSW index, if it has one, over that type.
func downgradeToV9(ctx context.Context, conn *pgx.Conn) error {
	var dim int
	var indexed bool
	if err := conn.QueryRow(ctx, `SELECT dim, to_regclass(current_schema() || '.chunks_hnsw') IS NOT NULL FROM manifest`).Scan(&dim, &indexed); err != nil {
		return err
	}
	sqls := []string{
		`DROP INDEX IF EXISTS chunks_hnsw`,
		fmt.Sprintf(`ALTER TABLE chunks ALTER COLUMN embedding TYPE vector(%d) USING embedding::vector(%d)`, dim, dim),
		`ALTER TABLE chunks ALTER COLUMN embedding SET STORAGE MAIN`,
		`ALTER TABLE manifest DROP COLUMN tokenizer`,
	}
	if indexed {
		sqls = append(sqls, `CREATE INDEX chunks_hnsw ON chunks USING hnsw (embedding vector_ip_ops) WHERE NOT pending`)
	}
	for _, sql := range append(sqls, `DELETE FROM schema_migrations WHERE version > 9`) {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	return nil
}

// TestMigrateFromVersion9: a store of a lexical embedder at schema version
// 9 (its vectors as vector(dim)), with its HNSW index, opens at the
// current version with them as sparsevec(dim) and the index built again
// over them cast to vector(dim), the same rows, hits and scores, and
// verifies clean.
func TestMigrateFromVersion9(t *testing.T) {
	ctx := t.Context()
	u := withParams(storeURL(t), "index_after", "0")
	m, want := migrationStore(t, u)
	rows := storeRows(t, m)
	schema := m.Schema()
	conn := reconnect(t, m)
	require.NoError(t, downgradeToV9(ctx, conn))
	assert.Equal(t, "vector(256)", columnType(t, conn))

	m = open(t, u)
	var version int
	require.NoError(t, m.Pool().QueryRow(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&version))
	assert.Equal(t, postgres.SchemaVersion, version)
	assert.Equal(t, "sparsevec(256)", columnType(t, conn))
	var def string
	require.NoError(t, conn.QueryRow(ctx, `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'chunks_hnsw'`, schema).Scan(&def))
	assert.Contains(t, def, "((embedding)::vector(256)) vector_ip_ops")
	assert.Contains(t, def, "WHERE (NOT pending)")
	assert.Equal(t, rows, storeRows(t, m))
	sameHits(t, m, want)
	problems, err := m.Verify(ctx)
	require.NoError(t, err)
	assert.Empty(t, problems)
	checkStats(t, m)
}

// modelEmb is a hash embedder that does not say its Kind: taken for a
// model's (embed.KindOf), whose vectors are held dense.
type modelEmb struct{ embed.Embedder }

// TestVectorColumnType: a new store holds a lexical embedder's vectors as
// sparsevec(dim) up to 1,000 dimensions (maxSparseDim) and as
// vector(dim) past it, and a model
// embedder's as vector(dim); each finds what it stored, through an exact
// scan and through its HNSW index, and verifies clean.
func TestVectorColumnType(t *testing.T) {
	for _, c := range []struct {
		name string
		emb  embed.Embedder
		want string
	}{
		{"lexical", hashEmb(t, 256), "sparsevec(256)"},
		{"lexical past 1000", hashEmb(t, 1024), "vector(1024)"},
		{"model", modelEmb{hashEmb(t, 256)}, "vector(256)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := t.Context()
			for _, indexAfter := range []string{"1000000", "0"} {
				m := openWith(t, storeURL(t, "index_after", indexAfter), c.emb)
				conn, err := m.Pool().Acquire(ctx)
				require.NoError(t, err)
				assert.Equal(t, c.want, columnType(t, conn.Conn()))
				conn.Release()
				_, err = m.AddBatch(ctx, parityRecords())
				require.NoError(t, err)
				require.NoError(t, m.Fold(ctx))
				for _, r := range parityRecords()[:3] {
					hits, err := m.Query(ctx, memory.Query{Text: r.Text, Mode: memory.VectorOnly, K: 1})
					require.NoError(t, err)
					require.NotEmpty(t, hits, r.Text)
					assert.Equal(t, r.ID, hits[0].ID, "index_after=%s: %q", indexAfter, r.Text)
					assert.InDelta(t, 1, hits[0].Score, 1e-5)
				}
				if indexAfter == "0" {
					// A search orders by what the HNSW index holds.
					assert.Contains(t, plan(t, m, `SELECT id FROM chunks WHERE NOT pending ORDER BY `+postgres.IndexOrder(m)+` LIMIT 10`, make([]float32, 256)),
						"Index Scan using chunks_hnsw")
				}
				problems, err := m.Verify(ctx)
				require.NoError(t, err)
				assert.Empty(t, problems)
			}
		})
	}
}

// plan returns the plan of sql with the query vector q as $1, with
// sequential scans and sorts off, as the store's index search runs.
func plan(t *testing.T, m *postgres.Memory, sql string, q []float32) string {
	t.Helper()
	tx, err := m.Pool().Begin(t.Context())
	require.NoError(t, err)
	defer tx.Rollback(context.Background()) //nolint:errcheck // read only
	_, err = tx.Exec(t.Context(), `SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off`)
	require.NoError(t, err)
	rows, err := tx.Query(t.Context(), `EXPLAIN `+sql, pgv.NewVector(q))
	require.NoError(t, err)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return strings.Join(lines, "\n")
}

// columnType returns the type of the chunks' embedding column, as
// format_type prints it.
func columnType(t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	var typ string
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = to_regclass(current_schema() || '.chunks') AND attname = 'embedding'`).Scan(&typ))
	return typ
}

// TestMigrateFromVersion8: a store at schema version 8 (a postings row
// per term), with records packed into posting blocks and a tail, opens at
// the current version with each record's terms in its row, the same rows
// otherwise, the same hits, and verifies clean; it then writes through
// add_record and forgets a packed record.
func TestMigrateFromVersion8(t *testing.T) {
	defer postgres.SetBlocks(4, 8)()
	ctx := t.Context()
	u := storeURL(t)
	m, err := postgres.Open(ctx, u, hashEmb(t, 256), postgres.WithCreate())
	require.NoError(t, err)
	recs := oneWriteRecords()
	for _, r := range recs {
		_, err := m.Add(ctx, r)
		require.NoError(t, err)
	}
	queries := []memory.Query{
		{Text: "blue crate 77", Namespace: "b", Mode: memory.KeywordOnly, K: 5},
		{Text: "ferry cancelled", Namespace: "a", Mode: memory.Hybrid, K: 5},
	}
	before := make([][]string, len(queries))
	for i, q := range queries {
		hits, err := m.Query(ctx, q)
		require.NoError(t, err)
		require.NotEmpty(t, hits)
		before[i] = hitIDs(hits)
	}
	rows := storeRows(t, m)
	conn := reconnect(t, m)
	require.NoError(t, downgradeToV8(ctx, conn))
	var postings int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM postings`).Scan(&postings))
	require.Positive(t, postings)

	m = open(t, u)
	assert.Equal(t, rows, storeRows(t, m))
	for i, q := range queries {
		hits, err := m.Query(ctx, q)
		require.NoError(t, err)
		assert.Equal(t, before[i], hitIDs(hits), q.Text)
	}
	checkStats(t, m)
	_, err = m.Add(ctx, memory.Record{ID: "after", Namespace: "b", Text: "a blue crate arrived after the migration", Time: t0.Add(300 * time.Hour)})
	require.NoError(t, err)
	require.NoError(t, m.Forget(ctx, recs[0].ID))
	hits, err := m.Query(ctx, memory.Query{Text: "blue crate arrived migration", Namespace: "b", Mode: memory.KeywordOnly})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "after", hits[0].ID)
	checkStats(t, m)
}

// noStatistics are the columns that schema version 11 keeps no planner
// statistics for.
var noStatistics = []string{"records.text", "records.terms", "records.tfs", "records.tags",
	"chunks.text", "chunks.embedding", "posting_blocks.data"}

// statTargets returns the statistics target of each of noStatistics in
// the store conn's search_path leads to (-1 or NULL: the default).
func statTargets(t *testing.T, conn *pgx.Conn) map[string]int {
	t.Helper()
	rows, err := conn.Query(t.Context(), `SELECT c.relname || '.' || a.attname, coalesce(a.attstattarget, -1)
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
		WHERE c.relnamespace = current_schema()::regnamespace AND c.relname || '.' || a.attname = ANY($1)`, noStatistics)
	require.NoError(t, err)
	got := map[string]int{}
	for rows.Next() {
		var col string
		var target int
		require.NoError(t, rows.Scan(&col, &target))
		got[col] = target
	}
	require.NoError(t, rows.Err())
	return got
}

// TestMigrateFromVersion10: a store at schema version 10 (the planner's
// statistics of every column) opens at the current version with none for
// the columns no query filters on, and a load's ANALYZE then gathers none
// for them (pg_stats has no row), while the columns queries select by
// keep theirs.
func TestMigrateFromVersion10(t *testing.T) {
	ctx := t.Context()
	u := storeURL(t)
	m := openWith(t, u, hashEmb(t, 256), postgres.WithCreate())
	want := map[string]int{}
	for _, c := range noStatistics {
		want[c] = 0
	}
	conn, err := m.Pool().Acquire(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, statTargets(t, conn.Conn()), "a new store")
	for _, c := range noStatistics {
		table, col, _ := strings.Cut(c, ".")
		_, err := conn.Exec(ctx, fmt.Sprintf(`ALTER TABLE %s ALTER COLUMN %s SET STATISTICS -1`, table, col))
		require.NoError(t, err)
	}
	_, err = conn.Exec(ctx, `DELETE FROM schema_migrations WHERE version > 10`)
	require.NoError(t, err)
	conn.Release()
	require.NoError(t, m.Close())

	m = openWith(t, u, hashEmb(t, 256))
	_, err = m.Load(ctx, parityRecords(), 4, nil)
	require.NoError(t, err)
	conn, err = m.Pool().Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	assert.Equal(t, want, statTargets(t, conn.Conn()), "migrated")
	var analyzed []string
	rows, err := conn.Query(ctx, `SELECT tablename || '.' || attname FROM pg_stats WHERE schemaname = current_schema() AND tablename IN ('records', 'chunks', 'posting_blocks') ORDER BY 1`)
	require.NoError(t, err)
	for rows.Next() {
		var c string
		require.NoError(t, rows.Scan(&c))
		analyzed = append(analyzed, c)
	}
	require.NoError(t, rows.Err())
	assert.Subset(t, analyzed, []string{"records.ns", "records.seq", "records.time", "chunks.ns", "chunks.seq"})
	for _, c := range noStatistics {
		assert.NotContains(t, analyzed, c)
	}
}

// TestReindexWhenTokenizerChanges: a store whose terms another tokenizer
// cut (plural-only stemming, as an older build's; the manifest names it)
// opens with this build's tokenizer having cut them again: the same rows
// (terms, token counts, episodes' and namespaces' statistics) and the same
// hits and scores in every mode as a store this build wrote, posting
// blocks packed again and verified clean; the manifest then names this
// build's tokenizer, and the next open rewrites nothing.
func TestReindexWhenTokenizerChanges(t *testing.T) {
	t.Cleanup(postgres.SetBlocks(3, 4))
	t.Cleanup(postgres.SetLoadMerge(5)) // the open packs a namespace's tail 5 records at a time
	ctx := t.Context()
	recs := parityRecords()
	fresh := open(t, storeURL(t))
	_, err := fresh.AddBatch(ctx, recs)
	require.NoError(t, err)

	plural, err := keyword.NewTokenizer(keyword.WithStemming(keyword.PluralsOnly))
	require.NoError(t, err)
	u := storeURL(t)
	old := open(t, u, postgres.WithTokenizer(plural))
	for i := 0; i < len(recs); i += 5 { // batches, so that blocks are packed between them
		_, err = old.AddBatch(ctx, recs[i:min(i+5, len(recs))])
		require.NoError(t, err)
	}
	want := storeRows(t, fresh)
	require.NotEqual(t, want["terms"], storeRows(t, old)["terms"], "the two tokenizers cut these records alike: the test tests nothing")
	var blocks int
	require.NoError(t, old.Pool().QueryRow(ctx, `SELECT count(*) FROM posting_blocks`).Scan(&blocks))
	require.Positive(t, blocks)
	require.NoError(t, old.Close())

	m := open(t, u)
	assert.Equal(t, want, storeRows(t, m))
	checkStats(t, m)
	require.NoError(t, postgres.CheckBlocks(ctx, m))
	rows, err := m.Pool().Query(ctx, `SELECT tail_docs FROM namespaces`)
	require.NoError(t, err)
	tails, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	require.NoError(t, err)
	for _, n := range tails {
		assert.Less(t, n, int64(4), "a tail left unpacked")
	}
	var tokName string
	require.NoError(t, m.Pool().QueryRow(ctx, `SELECT tokenizer FROM manifest`).Scan(&tokName))
	tok, err := keyword.NewTokenizer()
	require.NoError(t, err)
	assert.Equal(t, keyword.TokenizerName(tok), tokName)
	for _, mode := range []memory.Mode{memory.Hybrid, memory.KeywordOnly, memory.VectorOnly} {
		for _, q := range []string{"who drives the van", "lake weather", "invoices arriving", "paid for games"} {
			query := memory.Query{Text: q, Mode: mode, K: 5}
			w, err := fresh.Query(ctx, query)
			require.NoError(t, err)
			got, err := m.Query(ctx, query)
			require.NoError(t, err)
			assert.Equal(t, hitIDs(w), hitIDs(got), "%s %q", mode, q)
			for j := range min(len(w), len(got)) {
				assert.InDelta(t, w[j].Score, got[j].Score, 1e-6, "%s %q hit %d", mode, q, j)
			}
		}
	}

	var xmins string
	require.NoError(t, m.Pool().QueryRow(ctx, `SELECT string_agg(xmin::text, ',' ORDER BY seq) FROM records`).Scan(&xmins))
	require.NoError(t, m.Close())
	m = open(t, u)
	var again string
	require.NoError(t, m.Pool().QueryRow(ctx, `SELECT string_agg(xmin::text, ',' ORDER BY seq) FROM records`).Scan(&again))
	assert.Equal(t, xmins, again, "a second open rewrote records")
}
