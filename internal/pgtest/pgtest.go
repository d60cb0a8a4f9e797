// Package pgtest finds or starts the PostgreSQL (with pgvector) that the
// Postgres tests of vdb/pgvector and memory/postgres run against:
//
//   - AGENTMEM_TEST_PG set: that DSN (eval "$(scripts/pg-test.sh start)"
//     exports it), whose user may create tables and schemas;
//   - otherwise, when scripts/pg-test.sh check finds PostgreSQL and pgvector
//     installed, [Main] starts a throwaway cluster with the script and stops
//     it (removing its folder) when the tests end;
//   - otherwise the tests skip, except under CI (CI set), where they fail.
package pgtest

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

var (
	dsn        string
	skipReason string
)

// Main finds or starts the server and runs the tests; a package's TestMain
// calls os.Exit(pgtest.Main(m, "its name")).
func Main(m *testing.M, name string) int {
	dsn = os.Getenv("AGENTMEM_TEST_PG")
	if dsn != "" {
		return m.Run()
	}
	if fuzzWorker() {
		skipReason = "a fuzzing worker process starts no PostgreSQL"
		return m.Run()
	}
	script, err := scriptPath()
	if err != nil {
		fmt.Fprintln(os.Stderr, name, "tests:", err)
		return 1
	}
	if err := exec.Command("bash", script, "check").Run(); err != nil {
		skipReason = "PostgreSQL with pgvector is not installed: run scripts/pg-test.sh install (as root), or set AGENTMEM_TEST_PG to a DSN"
		if os.Getenv("CI") != "" {
			fmt.Fprintln(os.Stderr, name+" tests: CI is set and "+skipReason)
			return 1
		}
		return m.Run()
	}
	var dir string
	dsn, dir, err = startCluster(script)
	if err != nil {
		fmt.Fprintln(os.Stderr, name, "tests:", err)
		return 1
	}
	defer func() {
		if out, err := exec.Command("bash", script, "stop", dir).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "%s tests: stop cluster: %v\n%s", name, err, out)
		}
	}()
	return m.Run()
}

// fuzzWorker reports whether this process is a worker that go test -fuzz
// started. A worker runs only the fuzz target, and the fuzz targets of
// these packages need no server: starting one in every worker only slowed
// the fuzzing down (and would leave it running if the worker were
// killed). The process that runs the tests starts one as before.
func fuzzWorker() bool {
	if !flag.Parsed() {
		flag.Parse()
	}
	f := flag.Lookup("test.fuzzworker")
	return f != nil && f.Value.String() == "true"
}

// scriptPath returns scripts/pg-test.sh of this module.
func scriptPath() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("cannot locate package pgtest's source")
	}
	return filepath.Abs(filepath.Join(filepath.Dir(file), "..", "..", "scripts", "pg-test.sh"))
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

// DSN returns the test server's DSN or skips the test.
func DSN(tb testing.TB) string {
	tb.Helper()
	if dsn == "" {
		tb.Skip(skipReason)
	}
	return dsn
}

// WithParams adds key=value parameters to a DSN of either form (URL or
// key=value).
func WithParams(dsn string, kv ...string) string {
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

var nameSeq atomic.Int64

// UniqueName returns a name (for a schema, table or namespace) that no
// other test or test run uses.
func UniqueName() string {
	return fmt.Sprintf("t%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6, nameSeq.Add(1))
}

// ExecOnCleanup runs sql on the test server when the test ends; a failure
// is a test error naming what the statement does.
func ExecOnCleanup(tb testing.TB, what, sql string) {
	tb.Helper()
	dsn := DSN(tb)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			tb.Errorf("cleanup: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			tb.Errorf("cleanup: %s: %v", what, err)
		}
	})
}
