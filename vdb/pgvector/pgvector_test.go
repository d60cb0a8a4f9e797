package pgvector_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/internal/errs"
	"github.com/agentmem/agentmem/internal/testvec"
	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/pgvector"
)

func TestTableName(t *testing.T) {
	p := pgvector.DefaultTablePrefix
	assert.Equal(t, p+"default", pgvector.TableName(p, ""))
	assert.Equal(t, p+"user_42", pgvector.TableName(p, "user_42"))
	// Folded names get a hash, so that namespaces never share a table.
	a, b := pgvector.TableName(p, "User 42"), pgvector.TableName(p, "user_42")
	assert.NotEqual(t, a, b)
	assert.True(t, strings.HasPrefix(a, p+"user_42_"), a)
	assert.NotEqual(t, pgvector.TableName(p, "A"), pgvector.TableName(p, "a"))
	long := strings.Repeat("x", 200)
	assert.LessOrEqual(t, len(pgvector.TableName(p, long)), 58, "room for the index suffix in 63 bytes")
	assert.NotEqual(t, pgvector.TableName(p, long), pgvector.TableName(p, long+"y"))
}

func TestOpenBadSpec(t *testing.T) {
	dsn := needPG(t)
	ctx := t.Context()
	for _, tc := range []struct {
		name, spec string
	}{
		{"BadPort", "pgvector:postgres://agent:s3cretpw@localhost:notaport/db"},
		{"BadKeyValue", "pgvector:host=/tmp port=x password=s3cretpw"},
		{"EfSearchZero", "pgvector:" + withParams(dsn, "ef_search", "0")},
		{"EfSearchTooLarge", "pgvector:" + withParams(dsn, "ef_search", "5000")},
		{"ExactNotBool", "pgvector:" + withParams(dsn, "exact", "maybe")},
		{"MNotInt", "pgvector:" + withParams(dsn, "m", "lots")},
		{"BadPrefix", "pgvector:" + withParams(dsn, "table_prefix", "Bad-Prefix")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := vdb.Open(ctx, tc.spec, vdb.Config{Dim: 8, Namespace: uniqueNS()})
			require.ErrorIs(t, err, errs.InvalidArgument)
			assert.NotContains(t, err.Error(), "s3cretpw", "errors must not show the password")
		})
	}
	_, err := vdb.Open(ctx, "pgvector:"+dsn, vdb.Config{Dim: 3000, Namespace: uniqueNS()})
	require.ErrorIs(t, err, errs.InvalidArgument, "HNSW over more than 2000 dimensions")
	assert.Contains(t, err.Error(), "exact=1")
}

func TestOpenServerDown(t *testing.T) {
	needPG(t)
	dir := t.TempDir() // a socket folder where no server listens
	for _, spec := range []string{
		fmt.Sprintf("pgvector:host=%s port=5432 user=agent password=s3cretpw dbname=memory connect_timeout=5", dir),
		fmt.Sprintf("pgvector:postgres://agent:s3cretpw@/memory?host=%s&port=5432&connect_timeout=5", dir),
	} {
		start := time.Now()
		_, err := vdb.Open(t.Context(), spec, vdb.Config{Dim: 8, Namespace: "x"})
		require.ErrorIs(t, err, pgvector.ErrUnavailable)
		msg := err.Error()
		assert.Contains(t, msg, "host="+dir, "the error names where it tried")
		assert.Contains(t, msg, "dbname=memory")
		assert.Contains(t, msg, "check that the server is running")
		assert.NotContains(t, msg, "s3cretpw", "errors must not show the password")
		assert.Less(t, time.Since(start), 10*time.Second)
	}
}

func TestOpenUnknownDatabase(t *testing.T) {
	dsn := needPG(t)
	cfg, err := pgx.ParseConfig(dsn)
	require.NoError(t, err)
	spec := fmt.Sprintf("pgvector:host=%s port=%d user=%s dbname=agentmem_no_such_db", cfg.Host, cfg.Port, cfg.User)
	_, err = vdb.Open(t.Context(), spec, vdb.Config{Dim: 8, Namespace: "x"})
	require.ErrorIs(t, err, pgvector.ErrUnavailable)
	assert.Contains(t, err.Error(), "createdb")
}

func TestDimensionMismatchWithTable(t *testing.T) {
	dsn := needPG(t)
	ns := uniqueNS()
	db := openSpec(t, 8, ns)
	r := rand.New(rand.NewPCG(1, 2))
	require.NoError(t, db.Add(t.Context(), []int64{1}, testvec.Unit(r.Uint64(), 1, 8)))
	require.NoError(t, db.Close())

	_, err := vdb.Open(t.Context(), "pgvector:"+dsn, vdb.Config{Dim: 16, Namespace: ns})
	require.ErrorIs(t, err, vdb.ErrDimension)
	assert.Contains(t, err.Error(), "vector(8)")
	assert.Contains(t, err.Error(), "DROP TABLE")
	// Exact mode checks too.
	_, err = vdb.Open(t.Context(), "pgvector:"+withParams(dsn, "exact", "1"), vdb.Config{Dim: 16, Namespace: ns})
	require.ErrorIs(t, err, vdb.ErrDimension)
	// The same dimension opens and sees the stored vector.
	again := openSpec(t, 8, ns)
	assert.Equal(t, 1, again.Len())
}

func TestNotAVectorTable(t *testing.T) {
	admin := adminPool(t)
	ns := uniqueNS()
	table := pgvector.TableName(pgvector.DefaultTablePrefix, ns)
	dropTable(t, table)
	_, err := admin.Exec(t.Context(), `CREATE TABLE `+pgx.Identifier{table}.Sanitize()+` (id bigint, note text)`)
	require.NoError(t, err)
	_, err = vdb.Open(t.Context(), "pgvector:"+needPG(t), vdb.Config{Dim: 8, Namespace: ns})
	require.ErrorIs(t, err, errs.InvalidArgument)
	assert.Contains(t, err.Error(), "not an agentmem vector table")
}

func TestExtensionNotInstalled(t *testing.T) {
	dsn := needPG(t)
	old := pgvector.SetExtension("agentmem_absent_extension")
	t.Cleanup(func() { pgvector.SetExtension(old) })
	_, err := vdb.Open(t.Context(), "pgvector:"+dsn, vdb.Config{Dim: 8, Namespace: uniqueNS()})
	require.ErrorIs(t, err, pgvector.ErrNoExtension)
	msg := err.Error()
	assert.Contains(t, msg, "postgresql-15-pgvector", "names the distribution package for the server's major version")
	assert.Contains(t, msg, "pgvector/pgvector:pg15")
}

// TestExtensionNotCreated: a database without the extension gets it from a
// superuser's Open; a user who may not create it is told whom to ask.
func TestExtensionNotCreated(t *testing.T) {
	admin := adminPool(t)
	ctx := t.Context()
	var super bool
	require.NoError(t, admin.QueryRow(ctx, `SELECT rolsuper FROM pg_roles WHERE rolname = current_user`).Scan(&super))
	if !super {
		t.Skip("the test DSN's user is not a superuser: cannot create a database and a role")
	}
	suffix := uniqueNS()
	dbName, role := "agentmem_noext_"+suffix, "agentmem_user_"+suffix
	_, err := admin.Exec(ctx, `CREATE ROLE `+role+` LOGIN`)
	require.NoError(t, err)
	_, err = admin.Exec(ctx, `CREATE DATABASE `+dbName+` OWNER `+role)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx := context.Background()
		_, err := admin.Exec(ctx, `DROP DATABASE IF EXISTS `+dbName+` WITH (FORCE)`)
		assert.NoError(t, err)
		_, err = admin.Exec(ctx, `DROP ROLE IF EXISTS `+role)
		assert.NoError(t, err)
	})
	cfg, err := pgx.ParseConfig(needPG(t))
	require.NoError(t, err)
	base := fmt.Sprintf("host=%s port=%d dbname=%s", cfg.Host, cfg.Port, dbName)

	_, err = vdb.Open(ctx, "pgvector:"+base+" user="+role, vdb.Config{Dim: 8, Namespace: "x"})
	require.ErrorIs(t, err, pgvector.ErrNoExtension)
	assert.Contains(t, err.Error(), "ask a superuser to run CREATE EXTENSION vector")

	db, err := vdb.Open(ctx, "pgvector:"+base+" user="+cfg.User, vdb.Config{Dim: 8, Namespace: "x"})
	require.NoError(t, err, "a superuser's Open creates the extension")
	require.NoError(t, db.Close())
}

// TestHNSWIndexIsUsed checks the plans: HNSW mode goes through the index,
// exact mode scans even when the table has one.
func TestHNSWIndexIsUsed(t *testing.T) {
	ctx := t.Context()
	ns := uniqueNS()
	const dim, n = 32, 3000
	hnsw := openSpec(t, dim, ns, "ef_search", "100")
	vecs := testvec.Unit(3, n, dim)
	require.NoError(t, hnsw.Add(ctx, testvec.IDs(0, n), vecs))
	exact := openSpec(t, dim, ns, "exact", "1")
	admin := adminPool(t)
	_, err := admin.Exec(ctx, `ANALYZE `+pgx.Identifier{hnsw.Table()}.Sanitize())
	require.NoError(t, err)

	plan := func(db vdb.VectorDatabase) string {
		var lines []string
		rows, err := admin.Query(ctx, `EXPLAIN `+db.(*pgvector.DB).SearchSQL(10), vecLiteral(vecs[0]))
		require.NoError(t, err)
		for rows.Next() {
			var l string
			require.NoError(t, rows.Scan(&l))
			lines = append(lines, l)
		}
		require.NoError(t, rows.Err())
		return strings.Join(lines, "\n")
	}
	p := plan(hnsw)
	assert.Contains(t, p, "Index Scan using "+hnsw.Table()+"_hnsw", p)
	p = plan(exact)
	assert.NotContains(t, p, "Index Scan", p)

	// And the HNSW answers are good on this table.
	var hit int
	queries := testvec.Unit(4, 50, dim)
	for _, q := range queries {
		want, err := exact.Search(ctx, q, 10)
		require.NoError(t, err)
		got, err := hnsw.Search(ctx, q, 10)
		require.NoError(t, err)
		for _, w := range want {
			for _, g := range got {
				if g.ID == w.ID {
					hit++
					break
				}
			}
		}
	}
	recall := float64(hit) / float64(10*len(queries))
	t.Logf("HNSW recall@10 over %d random %d-d vectors: %.3f", n, dim, recall)
	assert.GreaterOrEqual(t, recall, 0.9)
}

// vecLiteral is a vector's text form, for EXPLAIN through a pool that has
// not registered pgvector's types.
func vecLiteral(v []float32) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, x := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%g", x)
	}
	b.WriteByte(']')
	return b.String()
}

// TestSharedPool: New over a caller's pool. Two DBs on one namespace see
// each other's writes (as two servers would); namespaces are separate
// tables; Close leaves the pool open; Drop removes the table.
func TestSharedPool(t *testing.T) {
	ctx := t.Context()
	pool := adminPool(t)
	ns := uniqueNS()
	const dim = 8
	a, err := pgvector.New(ctx, pool, dim, pgvector.WithNamespace(ns))
	require.NoError(t, err)
	dropTable(t, a.Table())
	b, err := pgvector.New(ctx, pool, dim, pgvector.WithNamespace(ns), pgvector.WithExact())
	require.NoError(t, err)
	other, err := pgvector.New(ctx, pool, dim, pgvector.WithNamespace(ns+"_other"))
	require.NoError(t, err)
	dropTable(t, other.Table())

	vecs := testvec.Unit(9, 3, dim)
	require.NoError(t, a.Add(ctx, []int64{1, 2, 3}, vecs))
	assert.Equal(t, 3, b.Len(), "a second DB on the namespace sees the first one's rows")
	res, err := b.Search(ctx, vecs[1], 1)
	require.NoError(t, err)
	require.Len(t, res, 1)
	assert.Equal(t, int64(2), res[0].ID)
	assert.Equal(t, 0, other.Len(), "another namespace is another table")

	require.NoError(t, a.Close())
	require.NoError(t, pool.Ping(ctx), "Close leaves a caller's pool open")
	n, err := b.Delete(ctx, 1, 7)
	require.NoError(t, err)
	assert.Equal(t, 1, n)

	require.NoError(t, b.Drop(ctx))
	var exists bool
	require.NoError(t, pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, a.Table()).Scan(&exists))
	assert.False(t, exists, "Drop removes the table")
	assert.ErrorIs(t, b.Add(ctx, []int64{1}, vecs[:1]), vdb.ErrClosed, "Drop closes the DB")
	require.NoError(t, other.Close())
	require.NoError(t, pool.Ping(ctx))
}

// TestSearchCancelled: a Search blocked on the server (the table is locked
// by another transaction) returns when its context ends, and the server
// stops running it.
func TestSearchCancelled(t *testing.T) {
	ctx := t.Context()
	const app = "agentmem_cancel_test"
	ns := uniqueNS()
	db := openSpec(t, 8, ns, "exact", "1", "application_name", app)
	vecs := testvec.Unit(1, 10, 8)
	require.NoError(t, db.Add(ctx, testvec.IDs(0, 10), vecs))

	admin := adminPool(t)
	lock, err := admin.Begin(ctx)
	require.NoError(t, err)
	defer lock.Rollback(context.Background()) //nolint:errcheck
	_, err = lock.Exec(ctx, `LOCK TABLE `+pgx.Identifier{db.Table()}.Sanitize()+` IN ACCESS EXCLUSIVE MODE`)
	require.NoError(t, err)

	sctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = db.Search(sctx, vecs[0], 3)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 5*time.Second)
	// While the lock is still held, the server is no longer running the query.
	assert.Eventually(t, func() bool {
		var n int
		err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND state = 'active'`, app).Scan(&n)
		return err == nil && n == 0
	}, 10*time.Second, 20*time.Millisecond, "the cancelled query must stop on the server")
	require.NoError(t, lock.Rollback(ctx))
	res, err := db.Search(ctx, vecs[0], 3)
	require.NoError(t, err, "the DB is usable after a cancelled search")
	assert.Equal(t, int64(0), res[0].ID)
}

// TestConnectionLostMidBatch terminates the backend serving a large Add
// (pg_terminate_backend from another connection), once while the batch is
// being copied and once while it waits to be merged into the table: the Add
// fails with ErrUnavailable, nothing of the batch is stored, and the next Add
// works.
func TestConnectionLostMidBatch(t *testing.T) {
	const dim = 64
	for _, phase := range []string{"copy", "upsert"} {
		t.Run(phase, func(t *testing.T) {
			// The kill races the Add: on a busy machine the COPY can end
			// before the killer sees it. Such an attempt tests nothing (the
			// Add succeeded whole); try again on a fresh table, a few times.
			for attempt := 1; ; attempt++ {
				if lostMidBatch(t, dim, phase) {
					return
				}
				require.Less(t, attempt, 5, "the Add's backend was never terminated mid-batch in %d attempts", attempt)
				t.Logf("attempt %d: the Add finished before the kill; trying again", attempt)
			}
		})
	}
}

// lostMidBatch is one attempt of TestConnectionLostMidBatch. It reports
// false when the Add completed before its backend could be terminated.
func lostMidBatch(t *testing.T, dim int, phase string) bool {
	ctx := t.Context()
	app := "agentmem_fault_" + phase
	db := openSpec(t, dim, uniqueNS(), "exact", "1", "application_name", app)
	seed := testvec.Unit(1, 10, dim)
	require.NoError(t, db.Add(ctx, testvec.IDs(0, 10), seed))
	admin := adminPool(t)

	var lock pgx.Tx
	waitFor := `query ILIKE 'copy%'`
	if phase == "upsert" {
		// Hold a lock that the INSERT … ON CONFLICT waits on, so that the
		// backend is killed after the COPY, mid-transaction.
		var err error
		lock, err = admin.Begin(ctx)
		require.NoError(t, err)
		defer lock.Rollback(context.Background()) //nolint:errcheck
		_, err = lock.Exec(ctx, `LOCK TABLE `+pgx.Identifier{db.Table()}.Sanitize()+` IN SHARE MODE`)
		require.NoError(t, err)
		waitFor = `query ILIKE 'insert%' AND wait_event_type = 'Lock'`
	}
	var killed int
	var wg sync.WaitGroup
	// The killer's queries run on the test's context, not on one cancelled
	// when the Add returns: the Add returns as soon as its backend dies,
	// while the query that killed it may still be reading its answer.
	var stopped atomic.Bool
	wg.Go(func() {
		for !stopped.Load() {
			var n int
			err := admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE application_name = $1 AND state = 'active' AND `+waitFor, app).Scan(&n)
			if err == nil && n > 0 {
				killed = n
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	})
	const n = 200_000
	err := db.Add(ctx, testvec.IDs(1000, n), testvec.Unit(2, n, dim))
	stopped.Store(true)
	wg.Wait()
	if killed == 0 && err == nil {
		return false
	}
	require.Equal(t, 1, killed, "the test must have terminated the Add's backend (Add: %v)", err)
	require.ErrorIs(t, err, pgvector.ErrUnavailable, "a lost connection is ErrUnavailable")
	assert.Contains(t, err.Error(), "retrying is safe")
	if lock != nil {
		require.NoError(t, lock.Rollback(ctx))
	}
	assert.Equal(t, 10, db.Len(), "nothing of the interrupted batch was stored")
	require.NoError(t, db.Add(ctx, testvec.IDs(1000, 100), testvec.Unit(3, 100, dim)), "the pool replaces the lost connection")
	assert.Equal(t, 110, db.Len())
	return true
}

func TestOpenValidatesDim(t *testing.T) {
	pool := adminPool(t)
	_, err := pgvector.New(t.Context(), pool, 0)
	require.ErrorIs(t, err, vdb.ErrDimension)
	_, err = pgvector.New(t.Context(), nil, 8)
	require.ErrorIs(t, err, errs.InvalidArgument)
	_, err = pgvector.New(t.Context(), pool, 8, pgvector.WithM(1))
	require.ErrorIs(t, err, errs.InvalidArgument)
}
