package pgvector_test

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
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/vdb"
	_ "github.com/agentmem/agentmem/vdb/pgvector" // registers "pgvector"
)

// The tests run against a real PostgreSQL with pgvector:
//
//   - AGENTMEM_TEST_PG set: that DSN (eval "$(scripts/pg-test.sh start)"
//     exports it), whose user may create tables;
//   - otherwise, when scripts/pg-test.sh check finds PostgreSQL and pgvector
//     installed, TestMain starts a throwaway cluster with the script and
//     stops it (removing its folder) when the tests end;
//   - otherwise the tests skip, except under CI (CI set), where they fail.
var (
	testDSN    string
	skipReason string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
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
				fmt.Fprintln(os.Stderr, "pgvector tests: CI is set and "+skipReason)
				return 1
			}
		} else {
			dsn, dir, err := startCluster(script)
			if err != nil {
				fmt.Fprintln(os.Stderr, "pgvector tests:", err)
				return 1
			}
			defer func() {
				out, err := exec.Command("bash", script, "stop", dir).CombinedOutput()
				if err != nil {
					fmt.Fprintf(os.Stderr, "pgvector tests: stop cluster: %v\n%s", err, out)
				}
			}()
			testDSN = dsn
		}
	}
	return m.Run()
}

// startCluster runs `pg-test.sh start --no-install` and reads the DSN and
// folder it exports.
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

// needPG returns the test DSN or skips the test.
func needPG(tb testing.TB) string {
	tb.Helper()
	if testDSN == "" {
		tb.Skip(skipReason)
	}
	return testDSN
}

// withParams adds key=value parameters to a DSN of either form.
func withParams(dsn string, kv ...string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
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
	for i := 0; i+1 < len(kv); i += 2 {
		dsn += " " + kv[i] + "=" + kv[i+1]
	}
	return dsn
}

var nsSeq atomic.Int64

// uniqueNS returns a namespace no other test (or test run) uses.
func uniqueNS() string {
	return fmt.Sprintf("t%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6, nsSeq.Add(1))
}

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
	dsn := needPG(tb)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			tb.Errorf("cleanup: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP TABLE IF EXISTS `+pgx.Identifier{table}.Sanitize()); err != nil {
			tb.Errorf("cleanup: drop %s: %v", table, err)
		}
	})
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
