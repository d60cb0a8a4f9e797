package postgres_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

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

var schemaSeq atomic.Int64

// storeURL returns the URL of a fresh schema, dropped when the test ends.
func storeURL(tb testing.TB, kv ...string) string {
	tb.Helper()
	dsn := needPG(tb)
	schema := fmt.Sprintf("t%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6, schemaSeq.Add(1))
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			tb.Errorf("cleanup: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
			tb.Errorf("cleanup: drop schema %s: %v", schema, err)
		}
	})
	return withParams(dsn, append([]string{"schema", schema}, kv...)...)
}

func hashEmb(tb testing.TB, dim int) embed.Embedder {
	tb.Helper()
	e, err := hash.New(dim)
	require.NoError(tb, err)
	return e
}

// open opens (creating) the store at url, closing it when the test ends.
func open(tb testing.TB, url string, opts ...postgres.Option) *postgres.Memory {
	tb.Helper()
	m, err := postgres.Open(tb.Context(), url, hashEmb(tb, 256), append([]postgres.Option{postgres.WithCreate()}, opts...)...)
	require.NoError(tb, err)
	tb.Cleanup(func() { m.Close() })
	return m
}
