package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repairReport is what repair --json prints.
type repairReport struct {
	Backup        string   `json:"backup"`
	RecordsBefore int      `json:"records_before"`
	RecordsAfter  int      `json:"records_after"`
	Lost          []string `json:"lost"`
	Restored      []string `json:"restored"`
	Rebuilt       []string `json:"rebuilt"`
}

// importedStore makes a store of the conversation's 70 rounds with the
// built binary and returns it.
func importedStore(t *testing.T, bin string, flags ...string) string {
	t.Helper()
	st := filepath.Join(t.TempDir(), "s")
	r := runBin(t, bin, ".", append([]string{"--store", st, "import", conversation}, flags...)...)
	require.Equal(t, 0, r.code, r.stderr)
	return st
}

// statsOf returns the stats of the store st, which must open.
func statsOf(t *testing.T, bin, st string) storeStats {
	t.Helper()
	r := runBin(t, bin, ".", "--store", st, "--json", "stats")
	require.Equal(t, 0, r.code, r.stderr)
	var s storeStats
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &s))
	return s
}

// backups returns the repair backups in the store st.
func backups(t *testing.T, st string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(st, "repair-*"))
	require.NoError(t, err)
	return m
}

// TestCLI_RepairLostManifestKeepsKind: a store whose manifest is missing or
// garbled is repaired as the kind it was (the issue: a long-term store came
// back short-term), and one whose files do not tell is refused with a
// usage error that asks for --memory, without a backup.
func TestCLI_RepairLostManifestKeepsKind(t *testing.T) {
	t.Parallel()
	bin := buildCLI(t)
	for _, kind := range []string{"long", "short"} {
		for _, damage := range []string{"missing", "garbled"} {
			st := importedStore(t, bin, "--memory", kind)
			man := filepath.Join(st, "manifest.json")
			if damage == "missing" {
				require.NoError(t, os.Remove(man))
			} else {
				require.NoError(t, os.WriteFile(man, []byte(`{"format":1,"embedd`), 0o644))
			}
			r := runBin(t, bin, ".", "--store", st, "repair")
			require.Equal(t, 0, r.code, "%s %s: %s", kind, damage, r.stderr)
			s := statsOf(t, bin, st)
			assert.Equal(t, kind, s.Memory, "%s manifest %s", kind, damage)
			assert.Equal(t, 70, s.Memories, "%s manifest %s", kind, damage)
			assert.Equal(t, "hash:512", s.Embedder)
		}
	}

	// One short record and no snapshot: nothing tells the kind.
	st := filepath.Join(t.TempDir(), "one")
	r := runBin(t, bin, ".", "--store", st, "--memory", "long", "add", "hello world")
	require.Equal(t, 0, r.code, r.stderr)
	for _, f := range []string{"manifest.json", "snapshot.json"} {
		require.NoError(t, os.Remove(filepath.Join(st, f)))
	}
	r = runBin(t, bin, ".", "--store", st, "repair")
	assert.Equal(t, exitUsage, r.code, r.stderr)
	assert.Contains(t, r.stderr, "--memory short|long")
	assert.Empty(t, backups(t, st), "a refused repair makes no backup")
	r = runBin(t, bin, ".", "--store", st, "--memory", "long", "repair")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "long", statsOf(t, bin, st).Memory)
}

// TestCLI_RepairWrongManifest: a manifest that names an embedder the log's
// vectors contradict (hash:513 over vectors of dim 512) is refused with a
// message that says so and what to do, changing nothing and making no
// backup however often it is tried; --embedder states the truth, and that
// repair makes one backup.
func TestCLI_RepairWrongManifest(t *testing.T) {
	t.Parallel()
	bin := buildCLI(t)
	st := importedStore(t, bin, "--memory", "long")
	require.NoError(t, os.WriteFile(filepath.Join(st, "manifest.json"),
		[]byte(`{"format":1,"embedder":"hash:513","dim":513,"backend":"inmem","kind":"long"}`), 0o644))
	before := hashStore(t, st)
	for range 2 {
		r := runBin(t, bin, ".", "--store", st, "repair")
		assert.Equal(t, exitFailure, r.code)
		assert.Contains(t, r.stderr, "have vectors of dim 512, but hash:513 makes vectors of dim 513")
		assert.Contains(t, r.stderr, "--embedder NAME")
	}
	assert.Equal(t, before, hashStore(t, st), "a refused repair changes nothing")
	assert.Empty(t, backups(t, st))

	r := runBin(t, bin, ".", "--store", st, "--embedder", "hash:256", "repair")
	assert.Equal(t, exitUsage, r.code, "an --embedder that contradicts the vectors is a usage error: %s", r.stderr)
	assert.Empty(t, backups(t, st))

	r = runBin(t, bin, ".", "--store", st, "--embedder", "hash:512", "--json", "repair")
	require.Equal(t, 0, r.code, r.stderr)
	var rep repairReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	assert.Contains(t, rep.Rebuilt, "manifest")
	assert.Empty(t, rep.Lost)
	assert.Len(t, backups(t, st), 1)
	s := statsOf(t, bin, st)
	assert.Equal(t, 70, s.Memories)
	assert.Equal(t, "hash:512", s.Embedder)
	assert.Equal(t, 0, runBin(t, bin, ".", "--store", st, "verify").code)
}

// TestCLI_RepairAfterLogDeleted: with the log gone, repair keeps the 70
// memories the snapshot holds (it kept none), and they are found again.
func TestCLI_RepairAfterLogDeleted(t *testing.T) {
	t.Parallel()
	bin := buildCLI(t)
	st := importedStore(t, bin, "--memory", "long")
	require.NoError(t, os.Remove(filepath.Join(st, "memories.log")))
	r := runBin(t, bin, ".", "--store", st, "--json", "repair")
	require.Equal(t, 0, r.code, r.stderr)
	var rep repairReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	assert.Equal(t, 70, rep.RecordsBefore)
	assert.Equal(t, 70, rep.RecordsAfter)
	assert.Len(t, rep.Restored, 70)
	assert.Empty(t, rep.Lost)
	r = runBin(t, bin, ".", "--store", st, "search", "-k", "1", "when is my flight to Berlin?")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "LH 2043")
	assert.Equal(t, 0, runBin(t, bin, ".", "--store", st, "verify").code)
}

// TestCLI_VerifyReportsEveryProblem: verify of a store that does not open
// says what is intact and lists every problem (it printed "memories 0 /
// log 0 records" and the first problem only); a sound store's report names
// each part.
func TestCLI_VerifyReportsEveryProblem(t *testing.T) {
	t.Parallel()
	bin := buildCLI(t)
	st := importedStore(t, bin, "--memory", "long")
	r := runBin(t, bin, ".", "--store", st, "verify")
	require.Equal(t, 0, r.code, r.stderr)
	for _, want := range []string{"memories   70\n", "manifest   hash:512 (dim 512), long-term, backend inmem\n", "log        70 records, ", "snapshot   generation 1, 70 memories", "\nok\n"} {
		assert.Contains(t, r.stdout, want)
	}

	flip := func(name string, at int64) {
		f, err := os.OpenFile(filepath.Join(st, name), os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.WriteAt([]byte("XXXX"), at)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	flip("memories.log", 3000)
	r = runBin(t, bin, ".", "--store", st, "verify")
	assert.Equal(t, exitFailure, r.code)
	assert.NotContains(t, r.stdout, "memories   0")
	assert.Contains(t, r.stdout, "manifest   hash:512 (dim 512)")
	assert.Contains(t, r.stdout, "snapshot   70 memories, 187 chunks with their vectors")
	assert.Contains(t, r.stdout, "log        69 intact records")
	assert.Regexp(t, `DAMAGE     \S+memories.log: bytes \d+-\d+ \(\d+ bytes\) hold no intact record`, r.stdout)
	assert.Contains(t, r.stderr, "1 problem found")

	require.NoError(t, os.Remove(filepath.Join(st, "manifest.json")))
	matches, err := filepath.Glob(filepath.Join(st, "snap-*.parents"))
	require.NoError(t, err)
	require.Len(t, matches, 1)
	flip(filepath.Base(matches[0]), 300)
	r = runBin(t, bin, ".", "--store", st, "--json", "verify")
	assert.Equal(t, exitFailure, r.code)
	var rep struct {
		Opened   bool     `json:"opened"`
		Problems []string `json:"problems"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	assert.False(t, rep.Opened)
	require.Len(t, rep.Problems, 3, "%q", rep.Problems)
	assert.Contains(t, rep.Problems[0], "manifest.json: missing")
	assert.Contains(t, rep.Problems[1], "hold no intact record")
	assert.Contains(t, rep.Problems[2], "checksum mismatch")
	assert.Contains(t, r.stderr, "3 problems found")
}
