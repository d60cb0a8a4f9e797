package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/internal/dirtest"
)

// hashStore returns the SHA-256 of every file of a store but LOCK (which
// holds only the last writer's process id).
func hashStore(t *testing.T, dir string) map[string]string {
	t.Helper()
	return dirtest.Hashes(t, dir, "LOCK")
}

func TestCLI_ListGetForgetVersion(t *testing.T) {
	t.Parallel()
	st := filepath.Join(t.TempDir(), "s")
	imp := filepath.Join(t.TempDir(), "in.jsonl")
	var lines []string
	for i := range 5 {
		ns := "a"
		if i%2 == 1 {
			ns = "b"
		}
		lines = append(lines, fmt.Sprintf(`{"id":"m%d","text":"note number %d","namespace":%q,"time":"2026-03-0%dT10:00:00Z"}`, i, i, ns, i+1))
	}
	require.NoError(t, os.WriteFile(imp, []byte(strings.Join(lines, "\n")), 0o644))
	r := runCLI(t, "", "--store", st, "--memory", "long", "import", imp)
	require.Equal(t, 0, r.code, r.stderr)

	r = runCLI(t, "", "--store", st, "--json", "list", "--namespace", "a", "--from", "2026-03-02", "--limit", "1")
	require.Equal(t, 0, r.code, r.stderr)
	var page struct {
		Total    int `json:"total"`
		Memories []struct {
			ID string `json:"id"`
		} `json:"memories"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &page))
	assert.Equal(t, 2, page.Total, "m2 and m4 are in a from March 2")
	require.Len(t, page.Memories, 1)
	assert.Equal(t, "m2", page.Memories[0].ID)

	r = runCLI(t, "", "--store", st, "get", "m3")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "note number 3")
	r = runCLI(t, "", "--store", st, "get", "nope")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "not found")

	r = runCLI(t, "", "--store", st, "forget", "m0", "nope")
	assert.Equal(t, 1, r.code, "an unknown id forgets nothing")
	r = runCLI(t, "", "--store", st, "forget", "--namespace", "b")
	assert.Equal(t, 2, r.code, "bulk forget needs --yes")
	assert.Contains(t, r.stderr, "would forget 2 memories")
	r = runCLI(t, "", "--store", st, "forget", "--namespace", "b", "--yes")
	require.Equal(t, 0, r.code, r.stderr)
	r = runCLI(t, "", "--store", st, "forget", "m0")
	require.Equal(t, 0, r.code, r.stderr)
	r = runCLI(t, "", "--store", st, "--json", "list", "--limit", "0")
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &page))
	assert.Equal(t, 2, page.Total, "m2 and m4 are left")

	r = runCLI(t, "", "--version")
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "agentmem version")
	assert.Contains(t, r.stdout, "go1.")
	for _, args := range [][]string{{"no-such-command"}, {"--store", "", "stats"}, {"--wait", "-1s", "add", "x"}, {"list", "--from", "yesterday"}, {"get"}} {
		assert.Equal(t, 2, runCLI(t, "", args...).code, "%v is a usage error", args)
	}
}

// TestCLI_TruncatedLogIsNamedAndRepairable is the case: a store of
// 72 memories whose log was cut short used to open with exit 0 and replace
// its snapshot with a smaller one. Now every command fails (exit 1) naming
// the damage, leaves every file as it was, verify says so, and repair
// keeps a backup, says what it dropped and puts back from the snapshot
// the memories the lost half of the log held.
func TestCLI_TruncatedLogIsNamedAndRepairable(t *testing.T) {
	t.Parallel()
	st := filepath.Join(t.TempDir(), "s")
	r := runCLI(t, "", "--store", st, "--memory", "long", "import", conversation)
	require.Equal(t, 0, r.code, r.stderr)
	r = runCLI(t, "", "--store", st, "--json", "stats")
	var stats storeStats
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &stats))
	n := stats.Memories

	log := filepath.Join(st, "memories.log")
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(log, b[:len(b)/2], 0o644))
	before := hashStore(t, st)
	for _, args := range [][]string{{"stats"}, {"search", "flight"}, {"list"}, {"add", "more"}, {"verify"}} {
		r := runCLI(t, "", append([]string{"--store", st}, args...)...)
		assert.Equal(t, 1, r.code, "%v", args)
		assert.Contains(t, r.stderr, "corrupt", "%v", args)
		assert.Contains(t, r.stderr, "agentmem repair", "%v", args)
	}
	assert.Equal(t, before, hashStore(t, st), "no command changed a file")

	r = runCLI(t, "", "--store", st, "--json", "repair")
	require.Equal(t, 0, r.code, r.stderr)
	var rep struct {
		Backup        string   `json:"backup"`
		RecordsBefore int      `json:"records_before"`
		RecordsAfter  int      `json:"records_after"`
		Lost          []string `json:"lost"`
		Restored      []string `json:"restored"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	assert.Equal(t, n, rep.RecordsBefore)
	assert.Equal(t, n, rep.RecordsAfter, "the snapshot's memories are kept")
	assert.Empty(t, rep.Lost)
	assert.NotEmpty(t, rep.Restored, "the memories of the lost half came from the snapshot")
	backup, err := os.ReadFile(filepath.Join(rep.Backup, "memories.log"))
	require.NoError(t, err)
	assert.Equal(t, b[:len(b)/2], backup, "the backup holds the damaged log")
	r = runCLI(t, "", "--store", st, "verify")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
}

// TestCLI_ReadersWriteNothing: stats, search, list, get and verify on a
// store whose writer was killed (a log tail after the snapshot) change no
// file; the previous release wrote a snapshot at each Close.
func TestCLI_ReadersWriteNothing(t *testing.T) {
	t.Parallel()
	st := filepath.Join(t.TempDir(), "s")
	r := runCLI(t, "", "--store", st, "--memory", "long", "import", conversation)
	require.Equal(t, 0, r.code, r.stderr)
	r = runCLI(t, "", "--store", st, "add", "a late note")
	require.Equal(t, 0, r.code, r.stderr)
	// No snapshot, as a writer killed before its first Close leaves it: a
	// command that wrote one at Close would change the store.
	for f := range hashStore(t, st) {
		if strings.HasPrefix(f, "snap") {
			require.NoError(t, os.Remove(filepath.Join(st, f)))
		}
	}
	before := hashStore(t, st)
	for _, args := range [][]string{{"stats"}, {"search", "late note"}, {"list"}, {"verify"}} {
		r := runCLI(t, "", append([]string{"--store", st}, args...)...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
	}
	assert.Equal(t, before, hashStore(t, st))
}

// TestCLI_TwoProcessesWrite: two agentmem processes import 200 memories
// each into one store at the same time; the second waits for the first
// (--wait) and all 400 are stored, while a reader searches meanwhile.
func TestCLI_TwoProcessesWrite(t *testing.T) {
	t.Parallel()
	bin := buildCLI(t)
	st := filepath.Join(t.TempDir(), "s")
	tmp := t.TempDir()
	var wg sync.WaitGroup
	outs := make([]string, 2)
	errs := make([]error, 2)
	require.Equal(t, 0, runCLI(t, "", "--store", st, "--memory", "long", "add", "first").code)
	for w := range 2 {
		var lines []string
		for i := range 200 {
			lines = append(lines, fmt.Sprintf(`{"text":"writer %d line %d"}`, w, i))
		}
		f := filepath.Join(tmp, fmt.Sprintf("w%d.jsonl", w))
		require.NoError(t, os.WriteFile(f, []byte(strings.Join(lines, "\n")), 0o644))
		wg.Go(func() {
			out, err := exec.Command(bin, "--store", st, "--wait", "60s", "import", "--batch", "10", f).CombinedOutput()
			outs[w], errs[w] = string(out), err
		})
	}
	// A reader needs no lock: it works while the writers run.
	out, err := exec.Command(bin, "--store", st, "--json", "stats").CombinedOutput()
	assert.NoError(t, err, "%s", out)
	wg.Wait()
	for w := range 2 {
		require.NoError(t, errs[w], outs[w])
	}
	r := runCLI(t, "", "--store", st, "--json", "stats")
	var stats storeStats
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &stats))
	assert.Equal(t, 401, stats.Memories)
}

// TestCLI_FullDiskStoresNothing: with writes failing (a file size limit,
// as a full disk fails them), add exits 1 and the store holds nothing new.
func TestCLI_FullDiskStoresNothing(t *testing.T) {
	t.Parallel()
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("needs prlimit")
	}
	bin := buildCLI(t)
	st := filepath.Join(t.TempDir(), "s")
	require.Equal(t, 0, runCLI(t, "", "--store", st, "--memory", "long", "add", "first").code)
	st0, err := os.Stat(filepath.Join(st, "memories.log"))
	require.NoError(t, err)
	big := strings.Repeat("a long note that does not fit. ", 2000)
	cmd := exec.Command(prlimit, fmt.Sprintf("--fsize=%d", st0.Size()+100), bin, "--store", st, "add", big)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s", out)
	assert.Equal(t, 1, ee.ExitCode(), "%s", out)
	st1, err := os.Stat(filepath.Join(st, "memories.log"))
	require.NoError(t, err)
	assert.Equal(t, st0.Size(), st1.Size(), "the failed append is rolled back")
	r := runCLI(t, "", "--store", st, "--json", "stats")
	var stats storeStats
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &stats))
	assert.Equal(t, 1, stats.Memories)
}

// TestCLI_VerifyWarnsOfUnusableKeywordIndex: a damaged keyword index file
// (snap-N.turns, a cache) is a warning, not damage: verify prints it and
// exits 0, and the next write's close rewrites the file.
func TestCLI_VerifyWarnsOfUnusableKeywordIndex(t *testing.T) {
	t.Parallel()
	st := filepath.Join(t.TempDir(), "s")
	r := runCLI(t, "", "--store", st, "--memory", "long", "import", conversation)
	require.Equal(t, 0, r.code, r.stderr)
	turns, err := filepath.Glob(filepath.Join(st, "snap-*.turns"))
	require.NoError(t, err)
	require.Len(t, turns, 1)
	b, err := os.ReadFile(turns[0])
	require.NoError(t, err)
	b[len(b)/2] ^= 0x10
	require.NoError(t, os.WriteFile(turns[0], b, 0o644))

	r = runCLI(t, "", "--store", st, "verify")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "warning    keyword index not used")
	assert.Contains(t, r.stdout, filepath.Base(turns[0]))
	assert.NotContains(t, r.stdout, "DAMAGE")

	r = runCLI(t, "", "--store", st, "--memory", "long", "add", "one more memory")
	require.Equal(t, 0, r.code, r.stderr)
	r = runCLI(t, "", "--store", st, "verify")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.NotContains(t, r.stdout, "warning", "the writer's close rewrote the index")
}
