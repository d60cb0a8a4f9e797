package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory"
)

// cliResult is what one in-process run of the CLI produced.
type cliResult struct {
	code           int
	stdout, stderr string
}

// runCLI runs `agentmem ARGS` in-process through run(), with stdin, and
// returns the exit code and output (stderr: the command's, then the final
// error run prints). Each run builds a fresh command tree (newRootCmd), so
// nothing carries over between runs.
//
// A line saying that the store is in use by this very process is left out
// of stderr: every test's store is its own, and a run closes its store
// before it returns, but a test that starts the binary at that moment
// (exec) forks the test process, and until the child execs it holds the
// lock file's descriptor, and with it the lock, for a moment the next run
// waits out (seen once on a loaded machine, "store is in use by process
// <the test's>; waiting up to 5s").
func runCLI(t *testing.T, stdin string, args ...string) cliResult {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(t.Context(), args, strings.NewReader(stdin), &out, &errOut)
	return cliResult{code, out.String(), withoutOwnLockWait(errOut.String())}
}

// withoutOwnLockWait returns stderr without its lines saying that a store
// is in use by this process (runCLI).
func withoutOwnLockWait(stderr string) string {
	own := fmt.Sprintf(" is in use by process %d", os.Getpid())
	lines := strings.SplitAfter(stderr, "\n")
	kept := lines[:0]
	for _, l := range lines {
		if !strings.Contains(l, own) {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "")
}

const conversation = "../../testdata/conversation.jsonl"

func TestCLI_ImportThenSearch(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "store")
	r := runCLI(t, "", "import", conversation, "--store", store)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "imported 70 segments")
	assert.Empty(t, r.stderr, "no progress bar when stderr is not a terminal")

	r = runCLI(t, "", "search", "when is my flight to Berlin?", "--store", store)
	require.Equal(t, exitOK, r.code, r.stderr)
	first, _, _ := strings.Cut(r.stdout, "\n\n")
	assert.Contains(t, first, "1. score ")
	assert.Contains(t, first, "Flight LH 2043 leaves Munich at 09:40", "the flight round comes first")

	r = runCLI(t, "", "search", "花生过敏", "-k", "1", "--store", store)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "我对花生过敏")
	assert.Equal(t, 1, strings.Count(r.stdout, "score "), "-k 1 prints one hit")

	// --json for scripts.
	r = runCLI(t, "", "search", "--json", "--store", store, "-k", "3", "--min-score", "0", "PgBouncer transaction mode")
	require.Equal(t, exitOK, r.code, r.stderr)
	var res struct {
		Query string `json:"query"`
		Hits  []struct {
			ID    string  `json:"id"`
			Score float32 `json:"score"`
			Text  string  `json:"text"`
		} `json:"hits"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res))
	assert.Equal(t, "PgBouncer transaction mode", res.Query)
	require.Len(t, res.Hits, 3)
	assert.Contains(t, res.Hits[0].Text, "We decided to add PgBouncer in transaction mode.")
	assert.GreaterOrEqual(t, res.Hits[0].Score, res.Hits[1].Score)

	requireReimportSkipsAll(t, store, 70)

	r = runCLI(t, "", "stats", "--json", "--store", store)
	require.Equal(t, exitOK, r.code, r.stderr)
	var st storeStats
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st))
	assert.Equal(t, "short", st.Memory)
	assert.Equal(t, 70, st.Memories)
	assert.Equal(t, 70, st.Vectors, "one vector per segment")
	assert.Equal(t, "hash:512", st.Embedder)
	assert.Equal(t, "inmem", st.Backend)
	_, err := os.Stat(filepath.Join(store, "snapshot.json"))
	assert.NoError(t, err, "the last command's Close snapshotted the indexes")
}

func TestCLI_AddSearchStats(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "store")
	r := runCLI(t, "", "add", "--store", store, "user: the wifi password is tulip-42\nassistant: saved", "user: book a table for two at 7pm")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Regexp(t, `^added 2 segments \(id [0-9a-f]{24}, [0-9a-f]{24}\) to `+regexp.QuoteMeta(store)+"\n$", r.stdout)

	r = runCLI(t, "user: 明天北京天气怎么样\nassistant: 晴，最高 12 度\n", "add", "--json", "--store", store)
	require.Equal(t, exitOK, r.code, r.stderr)
	var added struct {
		IDs   []string `json:"ids"`
		Store string   `json:"store"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &added))
	assert.Len(t, added.IDs, 1)
	assert.Equal(t, store, added.Store)

	r = runCLI(t, "", "search", "--store", store, "北京天气")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "   user: 明天北京天气怎么样\n   assistant: 晴，最高 12 度\n", "stdin is one segment; lines are indented")

	r = runCLI(t, "", "search", "--store", store, "zebra crossing")
	require.Equal(t, exitOK, r.code, "no match is not a failure")
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, "no remembered segment")

	r = runCLI(t, "", "stats", "--store", store)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Regexp(t, `segments\s+3\n`, r.stdout)
	assert.Regexp(t, `embedder\s+hash:512 \(dim 512\)`, r.stdout)
}

func TestCLI_StoreRemembersEmbedder(t *testing.T) {
	t.Parallel()
	r := checkStoreRemembersEmbedder(t)
	assert.Contains(t, r.stderr, "hash:512")
}

// checkStoreRemembersEmbedder adds to a store (with extra add flags, such
// as --memory long) built by hash:128, checks that search without
// --embedder uses it and that search with another embedder fails naming
// it (a usage error), and returns the failed search's result.
func checkStoreRemembersEmbedder(t *testing.T, addFlags ...string) cliResult {
	t.Helper()
	store := filepath.Join(t.TempDir(), "store")
	r := runCLI(t, "", append(append([]string{"add"}, addFlags...), "--store", store, "--embedder", "hash:128", "the quick brown fox")...)
	require.Equal(t, exitOK, r.code, r.stderr)

	r = runCLI(t, "", "search", "--store", store, "quick fox")
	require.Equal(t, exitOK, r.code, "without --embedder the store's own is used: %s", r.stderr)
	assert.Contains(t, r.stdout, "quick brown fox")

	r = runCLI(t, "", "search", "--store", store, "--embedder", "hash:512", "quick fox")
	assert.Equal(t, exitUsage, r.code, "a contradicting --embedder is a usage error")
	assert.Contains(t, r.stderr, "built by hash:128")
	return r
}

func TestCLI_Errors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
		return p
	}
	tests := []struct {
		name  string
		stdin string
		args  []string
		code  int
		msg   string
	}{
		{"search without query", "", []string{"search"}, exitUsage, "requires at least 1 arg"},
		{"search bad k", "", []string{"search", "-k", "0", "x"}, exitUsage, "-k must be positive"},
		{"search bad min score", "", []string{"search", "--min-score", "2", "x"}, exitUsage, "--min-score"},
		{"search unknown flag", "", []string{"search", "--nope", "x"}, exitUsage, "unknown flag"},
		{"search missing store", "", []string{"search", "x"}, exitFailure, "no memory store"},
		{"stats missing store", "", []string{"stats"}, exitFailure, "no memory store"},
		{"stats extra argument", "", []string{"stats", "x"}, exitUsage, "unknown command"},
		{"add empty argument", "", []string{"add", " "}, exitUsage, "argument 1 is empty"},
		{"add empty stdin", "", []string{"add"}, exitUsage, "standard input is empty"},
		{"unknown embedder", "", []string{"add", "--embedder", "word2vec:x", "hi"}, exitUsage, "registered: "},
		{"bad embedder spec", "", []string{"add", "--embedder", "hash:abc", "hi"}, exitUsage, "hash:abc"},
		{"unknown backend", "", []string{"add", "--backend", "annoy", "hi"}, exitUsage, "unknown --backend"},
		{"index without faiss", "", []string{"add", "--index", "HNSW32,Flat", "hi"}, exitUsage, "needs --backend faiss"},
		{"import no file", "", []string{"import"}, exitUsage, "accepts 1 arg"},
		{"import missing file", "", []string{"import", filepath.Join(dir, "nope.jsonl")}, exitFailure, "no such file"},
		{"import bad json", "", []string{"import", write("bad.jsonl", "{\"text\":\"ok\"}\n\n{\"text\": oops}\n")}, exitFailure, "bad.jsonl:3: want one JSON object"},
		{"import no text field", "", []string{"import", write("notext.jsonl", "{\"content\":\"hi\"}\n")}, exitFailure, `notext.jsonl:1: the object has no "text" field`},
		{"import empty text", "", []string{"import", write("empty.jsonl", "{\"text\":\"a\"}\n{\"text\":\"  \"}\n")}, exitFailure, `empty.jsonl:2: "text" is empty`},
		{"import empty file", "", []string{"import", write("blank.jsonl", "\n\n")}, exitFailure, "no lines to import"},
		{"import empty text names the flag", "", []string{"import", write("empty2.jsonl", "{\"text\":\"\"}\n")}, exitFailure, "(--skip-empty skips such lines)"},
		{"import only empty texts", "", []string{"import", "--skip-empty", write("empties.jsonl", "{\"text\":\"\"}\n{\"text\":\" \\n\"}\n")}, exitFailure, "empties.jsonl holds no text to import (2 empty texts skipped)"},
		{"import skip empty still checks json", "", []string{"import", "--skip-empty", write("bad2.jsonl", "{\"text\":\"\"}\n{\"text\": oops}\n")}, exitFailure, "bad2.jsonl:2: want one JSON object"},
		{"import bad stdin", "[1,2]\n", []string{"import", "-"}, exitFailure, "standard input:1:"},
		{"import bad batch", "", []string{"import", "--batch", "0", conversation}, exitUsage, "--batch must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, tt.stdin, append(tt.args, "--store", store)...)
			assert.Equal(t, tt.code, r.code, "exit code")
			assert.Contains(t, r.stderr, tt.msg)
			assert.True(t, strings.HasPrefix(r.stderr, "agentmem: "), "errors start with the program name: %q", r.stderr)
		})
	}
	_, err := os.Stat(store)
	assert.ErrorIs(t, err, os.ErrNotExist, "failed commands created nothing")
}

func TestCLI_ImportFromStdin(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "store")
	in := `{"text":"user: 我的工号是 NW-20417\nassistant: 已记住","role":"ignored"}` + "\n" + `{"text":"user: ping\nassistant: pong"}`
	r := runCLI(t, in, "import", "-", "--store", store, "--batch", "1")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "imported 2 segments from - into")
	r = runCLI(t, "", "search", "--store", store, "工号")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "NW-20417")
}

// An export of a chat often holds messages without text (attachments,
// tool calls): --skip-empty stores the others and counts the empty ones,
// in the text and the JSON report, in both kinds of store.
func TestCLI_ImportSkipEmpty(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"short", "long"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			store := filepath.Join(t.TempDir(), "store")
			in := `{"text":"user: my flight is LH 401"}` + "\n" + `{"text":""}` + "\n" + `{"text":"  \t "}` + "\n" + `{"text":"user: my seat is 14C"}` + "\n"
			r := runCLI(t, in, "import", "-", "--skip-empty", "--memory", kind, "--store", store)
			require.Equal(t, exitOK, r.code, r.stderr)
			assert.Contains(t, r.stdout, "imported 2 ")
			assert.Contains(t, r.stdout, "(2 empty texts skipped)")

			r = runCLI(t, in, "import", "-", "--skip-empty", "--json", "--memory", kind, "--store", store)
			require.Equal(t, exitOK, r.code, r.stderr)
			var imp struct{ Imported, Skipped, Empty int }
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &imp))
			assert.Equal(t, struct{ Imported, Skipped, Empty int }{0, 2, 2}, imp, "the texts are stored once, the empty ones counted again")

			r = runCLI(t, "", "search", "--memory", kind, "--store", store, "--json", "seat")
			require.Equal(t, exitOK, r.code, r.stderr)
			assert.Contains(t, r.stdout, "14C")
		})
	}
}

// requireReimportSkipsAll imports the bundled conversation into store a
// second time and checks that nothing is stored twice: all n lines skipped.
func requireReimportSkipsAll(t *testing.T, store string, n int) {
	t.Helper()
	r := runCLI(t, "", "import", "--json", conversation, "--store", store)
	require.Equal(t, exitOK, r.code, r.stderr)
	var imp struct{ Imported, Skipped int }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &imp))
	assert.Equal(t, 0, imp.Imported, "importing the same file again stores nothing twice")
	assert.Equal(t, n, imp.Skipped)
}

func TestCLI_MigrateOldShortStore(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "store")
	require.NoError(t, os.CopyFS(store, os.DirFS("../../store/testdata/v1-short")))

	r := runCLI(t, "", "search", "--store", store, "badge number")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, "agentmem migrate --store "+store, "the error names the command that converts the store")

	r = runCLI(t, "", "migrate", "--store", store)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "migrated 13 segments in "+store)
	backups, err := filepath.Glob(filepath.Join(store, "backup-v1-*", "segments.jsonl"))
	require.NoError(t, err)
	assert.Len(t, backups, 1, "the old log is kept")

	r = runCLI(t, "", "search", "--store", store, "--json", "badge number")
	require.Equal(t, exitOK, r.code, r.stderr)
	var res struct {
		Hits []struct {
			ID    string  `json:"id"`
			Score float32 `json:"score"`
		} `json:"hits"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res))
	require.NotEmpty(t, res.Hits)
	assert.Equal(t, "12", res.Hits[0].ID, "the previous release's answer, same id")
	assert.InDelta(t, 0.6980101, res.Hits[0].Score, 1e-5, "and same score")

	r = runCLI(t, "", "migrate", "--store", store)
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, "already in the current format")
}

// TestCLI_OnePrefixPerError: an error is printed with one "agentmem: "
// prefix, at the start, though the library's sentinels carry it too
// (memory.ErrNotFound is "not found").
func TestCLI_OnePrefixPerError(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "store")
	require.Equal(t, exitOK, runCLI(t, "", "--store", store, "--memory", "long", "add", "a note").code)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"get", "nope"}, exitFailure, "agentmem: not found: " + store + " holds no memory with id nope\n"},
		{[]string{"forget", "nope"}, exitFailure, "agentmem: not found: " + store + " holds no memory with id nope; nothing forgotten\n"},
		{[]string{"migrate"}, exitFailure, "agentmem: store: migrate: invalid argument: " + store + " is already in the current format\n"},
		{[]string{"--memory", "short", "search", "x"}, exitUsage, "agentmem: --memory short, but "},
		{[]string{"--store", "mysql://root:hunter22@db/x", "stats"}, exitUsage, `agentmem: store: invalid argument: mysql://root:xxxxx@db/x: no store of scheme "mysql": want a store directory or a PostgreSQL URL`},
	} {
		args := append([]string{"--store", store}, tc.args...)
		r := runCLI(t, "", args...)
		assert.Equal(t, tc.code, r.code, "%v: %s", tc.args, r.stderr)
		assert.True(t, strings.HasPrefix(r.stderr, tc.want), "%v: got %q, want %q…", tc.args, r.stderr, tc.want)
		assert.Equal(t, 1, strings.Count(r.stderr, "agentmem: "), "%v: %q", tc.args, r.stderr)
	}
}

// TestErrorLine: one "agentmem: " prefix, the packages' names kept; a
// store path that ends in "agentmem" keeps its name.
func TestErrorLine(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("store: migrate: %w: /home/u/.agentmem: is current", memory.ErrInvalidArgument)
	assert.Equal(t, "agentmem: store: migrate: invalid argument: /home/u/.agentmem: is current", errorLine(err))
	err = fmt.Errorf("%w: x: %w", memory.ErrNotFound, memory.ErrCorrupt)
	assert.Equal(t, "agentmem: not found: x: corrupt data", errorLine(err))
	assert.Equal(t, "agentmem: plain", errorLine(errors.New("plain")))
}

// TestCLI_BackendPasswordNotShown: a --backend spec holding a DSN is named
// in errors without its password.
func TestCLI_BackendPasswordNotShown(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "store")
	r := runCLI(t, "", "--store", store, "--backend", "nosuch:postgres://u:hunter22@h/db", "add", "x")
	assert.Equal(t, exitUsage, r.code, r.stderr)
	assert.Contains(t, r.stderr, "nosuch:postgres://u:xxxxx@h/db")
	assert.NotContains(t, r.stderr, "hunter22")
}
