package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/internal/pgtest"
)

// secret is the password the PostgreSQL tests put in their store URLs (the
// test cluster trusts local connections, so any password is accepted): it
// must appear in no output.
const secret = "hunter22-secret"

// pgStore returns a store URL of its own schema (dropped when the test
// ends) with secret as the password.
func pgStore(t *testing.T) string {
	t.Helper()
	dsn := pgtest.DSN(t)
	schema := pgtest.UniqueName()
	pgtest.ExecOnCleanup(t, "drop schema "+schema, `DROP SCHEMA IF EXISTS "`+schema+`" CASCADE`)
	u := pgtest.WithParams(dsn, "schema", schema)
	withPW := strings.Replace(u, "://postgres@", "://postgres:"+secret+"@", 1)
	require.NotEqual(t, u, withPW, "the test DSN names user postgres: %s", u)
	return withPW
}

// binResult is what one run of the built binary produced.
type binResult struct {
	code           int
	stdout, stderr string
}

// runBin runs the built binary in dir with args and checks that no output
// holds the password.
func runBin(t *testing.T, bin, dir string, args ...string) binResult {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := binResult{stdout: out.String(), stderr: errOut.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run %v: %v", args, err)
	}
	assert.NotContains(t, r.stdout+r.stderr, secret, "agentmem %v shows the password", args)
	return r
}

// pgCLI returns a runner of the built binary with --store a PostgreSQL
// store of the test's own (pgStore), in an empty working directory, and
// the store's URL and that directory.
func pgCLI(t *testing.T) (run func(args ...string) binResult, st, wd string) {
	t.Helper()
	bin := buildCLI(t)
	st = pgStore(t)
	wd = t.TempDir()
	return func(args ...string) binResult {
		t.Helper()
		return runBin(t, bin, wd, append([]string{"--store", st}, args...)...)
	}, st, wd
}

// TestCLI_Postgres_EveryCommand: every command that takes --store acts on
// the PostgreSQL store a postgres:// URL names; what add stores, search
// finds through the same URL, and no local directory appears.
func TestCLI_Postgres_EveryCommand(t *testing.T) {
	t.Parallel()
	run, _, wd := pgCLI(t)

	r := run("--json", "add", "--speaker", "user", "my locker code is 4417")
	require.Equal(t, exitOK, r.code, r.stderr)
	var added struct {
		IDs   []string `json:"ids"`
		Store string   `json:"store"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &added))
	require.Len(t, added.IDs, 1)
	assert.Contains(t, added.Store, "postgres://postgres:xxxxx@")
	id := added.IDs[0]

	r = run("search", "-k", "1", "locker code")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "my locker code is 4417")
	assert.Contains(t, r.stdout, id)

	r = run("import", conversationAbs(t))
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "imported 70 memories")
	r = run("import", conversationAbs(t))
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "imported 0 memories", "a second import stores nothing twice")

	r = run("--json", "search", "-k", "1", "--mode", "keyword", "LH 2043")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Flight LH 2043")

	r = run("--json", "list", "--limit", "0")
	require.Equal(t, exitOK, r.code, r.stderr)
	var page struct {
		Total int `json:"total"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &page))
	assert.Equal(t, 71, page.Total)

	r = run("get", id)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "my locker code is 4417")
	assert.Contains(t, r.stdout, "speaker    user")

	r = run("--json", "stats")
	require.Equal(t, exitOK, r.code, r.stderr)
	var stats storeStats
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &stats))
	assert.Equal(t, "long", stats.Memory)
	assert.Equal(t, 71, stats.Memories)
	assert.Positive(t, stats.Chunks)
	assert.Equal(t, "hash:512", stats.Embedder)
	assert.Equal(t, "postgres", stats.Backend)
	assert.NotEmpty(t, stats.Schema)
	assert.Positive(t, stats.SchemaVersion)
	r = run("stats")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Regexp(t, `memories\s+71\n`, r.stdout)
	assert.Contains(t, r.stdout, ":xxxxx@")

	r = run("verify")
	require.Equal(t, exitOK, r.code, r.stdout+r.stderr)
	assert.Regexp(t, `memories\s+71\n`, r.stdout)
	assert.Regexp(t, `embedder\s+hash:512 \(dim 512\)\n`, r.stdout)
	assert.Contains(t, r.stdout, "\nok\n")

	r = run("forget", id)
	require.Equal(t, exitOK, r.code, r.stderr)
	r = run("get", id)
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, "agentmem: not found: ")

	r = run("forget", "--namespace", "default", "--yes")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "forgot 70 memories")

	entries, err := os.ReadDir(wd)
	require.NoError(t, err)
	assert.Empty(t, entries, "no local directory appears")
}

// conversationAbs is the bundled conversation's absolute path (the binary
// runs in another directory).
func conversationAbs(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	require.NoError(t, err)
	return wd + "/" + conversation
}

// TestCLI_Postgres_Refusals: a missing store, a short-term --memory,
// --backend, another embedder, repair and migrate on a URL are clear
// errors that create nothing.
func TestCLI_Postgres_Refusals(t *testing.T) {
	t.Parallel()
	run, _, wd := pgCLI(t)

	for _, args := range [][]string{{"search", "x"}, {"stats"}, {"list"}, {"get", "x"}, {"verify"}, {"forget", "x"}} {
		r := run(args...)
		assert.Equal(t, exitFailure, r.code, "%v", args)
		assert.Contains(t, r.stderr, "agentmem: no memory store in postgres://postgres:xxxxx@", "%v", args)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"repair"}, "repair applies to store directories"},
		{[]string{"migrate"}, "migrate applies to store directories"},
		{[]string{"add", "--memory", "short", "x"}, "a PostgreSQL store is long-term"},
		{[]string{"add", "--backend", "inmem", "x"}, "--backend and --index apply to store directories"},
	} {
		r := run(tc.args...)
		assert.Equal(t, exitUsage, r.code, "%v", tc.args)
		assert.Contains(t, r.stderr, tc.want, "%v", tc.args)
	}
	r := run("add", "x y z")
	require.Equal(t, exitOK, r.code, r.stderr)
	r = run("search", "--embedder", "hash:128", "x")
	assert.Equal(t, exitUsage, r.code, "a contradicting --embedder is a usage error")
	assert.Contains(t, r.stderr, "built with embedder hash:512")
	assert.Equal(t, 1, strings.Count(r.stderr, "agentmem: "), "one prefix: %s", r.stderr)

	entries, err := os.ReadDir(wd)
	require.NoError(t, err)
	assert.Empty(t, entries, "no local directory appears")
}

// TestCLI_Postgres_VerifyNamesDamage: a manifest whose dimension is not
// its embedder's, and a schema newer than this build, are damage: verify
// exits 1 and names it.
func TestCLI_Postgres_VerifyNamesDamage(t *testing.T) {
	t.Parallel()
	run, st, _ := pgCLI(t)
	r := run("add", "a memory")
	require.Equal(t, exitOK, r.code, r.stderr)
	schema := schemaOf(t, st)
	manifest := pgx.Identifier{schema, "manifest"}.Sanitize()

	execPG(t, `UPDATE `+manifest+` SET dim = 7`)
	r = run("verify")
	assert.Equal(t, exitFailure, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "DAMAGE")
	assert.Contains(t, r.stdout, "dimension 7")
	assert.NotContains(t, r.stdout, "\nok\n")

	execPG(t, `UPDATE `+manifest+` SET dim = 512; INSERT INTO `+pgx.Identifier{schema, "schema_migrations"}.Sanitize()+` (version, name) VALUES (999, 'future')`)
	r = run("--json", "verify")
	assert.Equal(t, exitFailure, r.code, r.stdout+r.stderr)
	var rep struct {
		Problems      []string `json:"problems"`
		SchemaVersion int      `json:"schema_version"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	assert.Equal(t, 999, rep.SchemaVersion)
	require.Len(t, rep.Problems, 1)
	assert.Contains(t, rep.Problems[0], "is at version 999")
	assert.Contains(t, r.stderr, "upgrade agentmem")
}

// TestCLI_Postgres_VerifyReindexes: a store whose manifest names another
// tokenizer (an older build's; its terms cut as that one cut them) is not
// damage: verify cuts the terms again, warns that it did, names the
// tokenizer and exits 0, and the records' terms are this build's ("KPIs"
// found by "KPI").
func TestCLI_Postgres_VerifyReindexes(t *testing.T) {
	t.Parallel()
	run, st, _ := pgCLI(t)
	r := run("add", "We review our KPIs every Monday with the team")
	require.Equal(t, exitOK, r.code, r.stderr)
	schema := schemaOf(t, st)
	execPG(t, `UPDATE `+pgx.Identifier{schema, "manifest"}.Sanitize()+` SET tokenizer = 'agentmem-keyword/5';
		UPDATE `+pgx.Identifier{schema, "records"}.Sanitize()+` SET terms = array_replace(terms, 'kpi', 'kpis')`)

	r = run("verify")
	require.Equal(t, exitOK, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "terms were cut by tokenizer agentmem-keyword/5; opening cut them again with agentmem-keyword/")
	assert.Regexp(t, `tokenizer  agentmem-keyword/\d+ `, r.stdout)
	r = run("verify")
	require.Equal(t, exitOK, r.code, r.stdout+r.stderr)
	assert.NotContains(t, r.stdout, "warning", "the second verify finds the terms cut by this build")
	r = run("--json", "verify")
	require.Equal(t, exitOK, r.code, r.stdout+r.stderr)
	var rep struct {
		Opened    bool   `json:"opened"`
		Records   int    `json:"records"`
		Tokenizer string `json:"tokenizer"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	assert.True(t, rep.Opened, "records counts the open store's: %s", r.stdout)
	assert.Equal(t, 1, rep.Records)
	assert.Contains(t, rep.Tokenizer, "agentmem-keyword/")
	r = run("search", "--mode", "keyword", "KPI")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "We review our KPIs")
}

// execPG runs sql on the test cluster, as an operator (or damage) would
// change a store behind its back.
func execPG(t *testing.T, sql string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), pgtest.DSN(t))
	require.NoError(t, err)
	_, err = conn.Exec(t.Context(), sql)
	require.NoError(t, conn.Close(t.Context()))
	require.NoError(t, err)
}

// schemaOf returns the schema=NAME of a store URL.
func schemaOf(t *testing.T, url string) string {
	t.Helper()
	_, q, _ := strings.Cut(url, "?")
	for kv := range strings.SplitSeq(q, "&") {
		if v, ok := strings.CutPrefix(kv, "schema="); ok {
			return v
		}
	}
	t.Fatalf("no schema in %s", url)
	return ""
}

// TestCLI_Postgres_VerifyNamesRowDamage: statistics that disagree with the
// records and orphan rows are damage: verify exits 1 with a DAMAGE line for
// each, and --json lists them.
func TestCLI_Postgres_VerifyNamesRowDamage(t *testing.T) {
	t.Parallel()
	run, st, _ := pgCLI(t)
	for _, text := range []string{"the crane lifts containers", "the harbour closes at nine", "shipment 42 arrives on Monday"} {
		r := run("add", text)
		require.Equal(t, exitOK, r.code, r.stderr)
	}
	r := run("verify")
	require.Equal(t, exitOK, r.code, r.stdout+r.stderr)
	schema := pgx.Identifier{schemaOf(t, st)}.Sanitize()
	execPG(t, `UPDATE `+schema+`.namespaces SET text_len = text_len + 3;
		DELETE FROM `+schema+`.chunks WHERE seq = (SELECT min(seq) FROM `+schema+`.records)`)

	r = run("verify")
	assert.Equal(t, exitFailure, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "DAMAGE     namespaces whose statistics disagree with their records: 1 (first: namespace default:")
	assert.Contains(t, r.stdout, "DAMAGE     records without chunks: 1 (first: record ")
	assert.NotContains(t, r.stdout, "\nok\n")
	assert.Contains(t, r.stderr, "corrupt data")
	assert.Contains(t, r.stderr, "(and 1 more)")

	r = run("--json", "verify")
	assert.Equal(t, exitFailure, r.code)
	var rep struct {
		Problems []string `json:"problems"`
		Records  int      `json:"records"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	assert.Len(t, rep.Problems, 2)
	assert.Equal(t, 3, rep.Records)
}
