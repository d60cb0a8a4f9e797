package postgres_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/internal/pgtest"
	"github.com/agentmem/agentmem/memory/postgres"
)

// The tests run against a real PostgreSQL with pgvector, found or started
// by internal/pgtest. Every test works in a schema of its own, dropped when
// it ends.
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(m.Run()) // a child process of TestKill9LosesNoAcknowledgedWrite
	}
	os.Exit(pgtest.Main(m, "memory/postgres"))
}

// needPG returns the test DSN or skips the test.
func needPG(tb testing.TB) string { return pgtest.DSN(tb) }

// withParams adds key=value parameters to a DSN.
var withParams = pgtest.WithParams

// storeURL returns the URL of a fresh schema, dropped when the test ends.
func storeURL(tb testing.TB, kv ...string) string {
	tb.Helper()
	schema := pgtest.UniqueName()
	pgtest.ExecOnCleanup(tb, "drop schema "+schema, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
	return withParams(needPG(tb), append([]string{"schema", schema}, kv...)...)
}

func hashEmb(tb testing.TB, dim int) embed.Embedder {
	tb.Helper()
	e, err := hash.New(dim)
	require.NoError(tb, err)
	return e
}

// open opens (creating) the store at url with hash:256, closing it when
// the test ends.
func open(tb testing.TB, url string, opts ...postgres.Option) *postgres.Memory {
	tb.Helper()
	return openWith(tb, url, hashEmb(tb, 256), opts...)
}

// openWith is open with the embedder emb.
func openWith(tb testing.TB, url string, emb embed.Embedder, opts ...postgres.Option) *postgres.Memory {
	tb.Helper()
	m, err := postgres.Open(context.Background(), url, emb, append([]postgres.Option{postgres.WithCreate()}, opts...)...)
	require.NoError(tb, err)
	tb.Cleanup(func() { m.Close() })
	return m
}
