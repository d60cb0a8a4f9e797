package pgvector_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/internal/pgtest"
	"github.com/agentmem/agentmem/vdb"
	_ "github.com/agentmem/agentmem/vdb/pgvector" // registers "pgvector"
)

// The tests run against a real PostgreSQL with pgvector, found or started
// by internal/pgtest.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, "vdb/pgvector")) }

// needPG returns the test DSN or skips the test.
func needPG(tb testing.TB) string { return pgtest.DSN(tb) }

// withParams adds key=value parameters to a DSN of either form.
var withParams = pgtest.WithParams

// uniqueNS returns a namespace no other test (or test run) uses.
func uniqueNS() string { return pgtest.UniqueName() }

// adminPool is a pool on the test database for setup and cleanup.
func adminPool(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	pool, err := pgxpool.New(context.Background(), needPG(tb))
	require.NoError(tb, err)
	tb.Cleanup(pool.Close)
	return pool
}

// dropTable removes a test's table when the test ends.
func dropTable(tb testing.TB, table string) {
	tb.Helper()
	pgtest.ExecOnCleanup(tb, "drop "+table, `DROP TABLE IF EXISTS `+pgx.Identifier{table}.Sanitize())
}

// tabler is what the tests need beyond vdb.VectorDatabase.
type tabler interface {
	vdb.VectorDatabase
	Table() string
}

// openSpec opens a fresh namespace through the registry with the given
// agentmem options, closing it and dropping its table when the test ends.
func openSpec(tb testing.TB, dim int, ns string, kv ...string) tabler {
	tb.Helper()
	db, err := vdb.Open(tb.Context(), "pgvector:"+withParams(needPG(tb), kv...), vdb.Config{Dim: dim, Namespace: ns})
	require.NoError(tb, err)
	tdb := db.(tabler)
	dropTable(tb, tdb.Table())
	tb.Cleanup(func() { db.Close() })
	return tdb
}
