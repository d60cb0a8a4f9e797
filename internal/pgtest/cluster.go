package pgtest

import (
	"os"
	"os/exec"
	"testing"
)

// Cluster is a throwaway PostgreSQL server of a test's own (scripts/pg-test.sh
// start), which the test may stop and start again: the shared server of
// [DSN] must stay up for the other tests.
type Cluster struct {
	DSN    string // postgres://postgres@/agentmem_test?host=DIR&port=5432
	dir    string
	script string
}

// StartCluster starts a cluster of the test's own, removed when the test
// ends. It skips the test when PostgreSQL with pgvector is not installed,
// except under CI (CI set), where it fails.
func StartCluster(tb testing.TB) *Cluster {
	tb.Helper()
	script, err := scriptPath()
	if err != nil {
		tb.Fatal(err)
	}
	if err := exec.Command("bash", script, "check").Run(); err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatal("CI is set and PostgreSQL with pgvector is not installed: run scripts/pg-test.sh install (as root)")
		}
		tb.Skip("PostgreSQL with pgvector is not installed: run scripts/pg-test.sh install (as root)")
	}
	dsn, dir, err := startCluster(script)
	if err != nil {
		tb.Fatal(err)
	}
	c := &Cluster{DSN: dsn, dir: dir, script: script}
	tb.Cleanup(func() {
		if out, err := exec.Command("bash", script, "stop", dir).CombinedOutput(); err != nil {
			tb.Errorf("stop cluster: %v\n%s", err, out)
		}
	})
	return c
}

// Halt stops the server as an operator's restart does (pg_ctl stop -m
// fast: sessions are terminated, what was committed is kept), keeping
// its data.
func (c *Cluster) Halt(tb testing.TB) { c.run(tb, "halt") }

// Resume starts a halted server again, on the same socket and data.
func (c *Cluster) Resume(tb testing.TB) { c.run(tb, "resume") }

func (c *Cluster) run(tb testing.TB, cmd string) {
	tb.Helper()
	if out, err := exec.Command("bash", c.script, cmd, c.dir).CombinedOutput(); err != nil {
		tb.Fatalf("pg-test.sh %s: %v\n%s", cmd, err, out)
	}
}
