package postgres_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/memory/postgres"
)

// The tests run against a real PostgreSQL with pgvector, found as
// vdb/pgvector's tests find it:
//
//   - AGENTMEM_TEST_PG set: that DSN (eval "$(scripts/pg-test.sh start)"
//     exports it), whose user may create schemas;
//   - otherwise, when scripts/pg-test.sh check finds PostgreSQL and pgvector
//     installed, TestMain starts a throwaway cluster and stops it at the end;
//   - otherwise the tests skip, except under CI (CI set), where they fail.
//
// Every test works in a schema of its own, dropped when it ends.
var (
	testDSN    string
	skipReason string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	if os.Getenv(helperEnv) != "" {
		return m.Run() // a child process of TestKill9LosesNoAcknowledgedWrite
	}
	testDSN = os.Getenv("AGENTMEM_TEST_PG")
	if testDSN == "" {
		script, err := filepath.Abs("../../scripts/pg-test.sh")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := exec.Command("bash", script, "check").Run(); err != nil {
			skipReason = "PostgreSQL with pgvector is not installed: run scripts/pg-test.sh install (as root), or set AGENTMEM_TEST_PG to a DSN"
			if os.Getenv("CI") != "" {
				fmt.Fprintln(os.Stderr, "memory/postgres tests: CI is set and "+skipReason)
				return 1
			}
		} else {
			dsn, dir, err := startCluster(script)
			if err != nil {
				fmt.Fprintln(os.Stderr, "memory/postgres tests:", err)
				return 1
			}
			defer func() {
				out, err := exec.Command("bash", script, "stop", dir).CombinedOutput()
				if err != nil {
					fmt.Fprintf(os.Stderr, "memory/postgres tests: stop cluster: %v\n%s", err, out)
				}
			}()
			testDSN = dsn
		}
	}
	return m.Run()
}

func startCluster(script string) (dsn, dir string, err error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("bash", script, "start", "--no-install")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", "", fmt.Errorf("pg-test.sh start: %w\n%s", err, stderr.String())
	}
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "export "), "=")
		if !ok {
			continue
		}
		v = strings.Trim(v, "'")
		switch k {
		case "AGENTMEM_TEST_PG":
			dsn = v
		case "AGENTMEM_TEST_PGDIR":
			dir = v
		}
	}
	if dsn == "" || dir == "" {
		return "", "", fmt.Errorf("pg-test.sh start printed no DSN:\n%s", stdout.String())
	}
	return dsn, dir, nil
}

func needPG(tb testing.TB) string {
	tb.Helper()
	if testDSN == "" {
		tb.Skip(skipReason)
	}
	return testDSN
}

// withParams adds key=value parameters to a URL DSN.
func withParams(dsn string, kv ...string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		panic(err)
	}
	q := u.Query()
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	u.RawQuery = q.Encode()
	return u.String()
}

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
