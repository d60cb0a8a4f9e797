package eval_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/eval"
	"github.com/agentmem/agentmem/memory/longterm"
)

var update = flag.Bool("update", false, "write testdata/facts/stories*.jsonl again from eval.GenerateStories and GenerateChineseStories")

// storiesDir holds the fact-change scenario suites (eval.StorySuites; go
// test ./eval -run TestStoriesFile -update writes them again).
const storiesDir = "../testdata/facts"

// TestStoriesFile checks that the suites in testdata are the generators'.
func TestStoriesFile(t *testing.T) {
	for _, suite := range eval.StorySuites {
		file := filepath.Join(storiesDir, suite.File)
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		for _, s := range suite.Generate(1, 240) {
			require.NoError(t, enc.Encode(s))
		}
		if *update {
			require.NoError(t, os.MkdirAll(storiesDir, 0o755))
			require.NoError(t, os.WriteFile(file, buf.Bytes(), 0o644))
		}
		got, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.Equal(t, buf.String(), string(got), "%s is %s(1, 240): run go test ./eval -run TestStoriesFile -update", file, suite.Name)
	}
}

// TestStories_FileStore runs the suites on a long-term memory: with
// supersede no stale version is among the top 5 of a question asked now,
// and a question asked as of a past moment finds the version valid then
// and none later. Without supersede (every version added) the same figures
// are logged for comparison.
func TestStories_FileStore(t *testing.T) {
	emb, err := hash.New(512)
	require.NoError(t, err)
	for _, suite := range eval.StorySuites {
		stories, err := eval.ReadJSONL[eval.Story](filepath.Join(storiesDir, suite.File))
		require.NoError(t, err)
		for _, o := range eval.StoryRuns {
			m, err := longterm.Open(t.Context(), t.TempDir(), emb)
			require.NoError(t, err)
			rep, err := eval.RunStories(t.Context(), m, stories, o)
			require.NoError(t, err)
			require.NoError(t, m.Close())
			t.Log(suite.File, rep)
			CheckStories(t, rep)
		}
	}
}

// CheckStories checks a run of the suite (FactReport.Problems).
func CheckStories(t *testing.T, rep eval.FactReport) {
	t.Helper()
	assert.GreaterOrEqual(t, rep.Stories, 200)
	assert.Empty(t, rep.Problems(), rep.String())
}
