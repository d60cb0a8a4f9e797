package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/eval"
)

// runEvalCLI runs `agentmem eval ARGS` through run() and returns the exit
// code and what the command printed.
func runEvalCLI(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(t.Context(), append([]string{"eval"}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String()
}

func TestEvalCommand(t *testing.T) {
	t.Parallel()
	code, out := runEvalCLI(t, "--mode", "all", "--k", "1,5,10", "--json=false", "../../testdata/eval")
	require.Equal(t, exitOK, code)
	for _, want := range []string{"hybrid", "vector", "keyword", "R@10", "H@5", "p95 ms", "turns/s", "best recall@10: hybrid"} {
		assert.Contains(t, out, want)
	}

	code, out = runEvalCLI(t, "--mode", "keyword", "--k", "3", "--json", "--with-speaker", "../../testdata/eval")
	require.Equal(t, exitOK, code)
	var rep eval.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, 81, rep.Questions)
	assert.Equal(t, 4, rep.Conversations)
	assert.True(t, rep.WithSpeaker)
	require.Len(t, rep.Modes, 2) // keyword and the reference bm25
	assert.Equal(t, "keyword", rep.Modes[0].Mode)
	assert.Contains(t, rep.Modes[0].Overall.Recall, 3)
	assert.NotEmpty(t, rep.Modes[0].Categories)

	for _, args := range [][]string{
		{"--mode", "bogus", "--k", "5", "../../testdata/eval"},
		{"--mode", "all", "--k", "0", "../../testdata/eval"},
		{"--mode", "all", "--k", "5"}, // no data
	} {
		code, _ := runEvalCLI(t, append([]string{"--json=false"}, args...)...)
		assert.Equal(t, exitUsage, code, "%v", args)
	}
	code, _ = runEvalCLI(t, "--json=false", "--mode", "all", "--k", "5", t.TempDir())
	assert.Equal(t, exitFailure, code, "missing files")
}

func TestEvalCommand_RetrievalOptionsAndGlove(t *testing.T) {
	t.Parallel()
	// A tiny GloVe file: enough words of the bundled set to give vectors.
	vecs := filepath.Join(t.TempDir(), "tiny.txt")
	require.NoError(t, os.WriteFile(vecs, []byte(
		"the 0.5 0.5 0.5\nerror 1 0.1 0\nfailure 0.9 0.2 0\nflight 0 1 0.1\nplane 0.1 0.9 0.1\n"), 0o600))
	code, out := runEvalCLI(t, "--embedder", "glove:"+vecs, "--mode", "keyword", "--k", "10", "--json",
		"--expand", vecs, "--feedback", "5", "--time-boost", "1", "--query-tf", "8", "../../testdata/eval")
	require.Equal(t, exitOK, code, out)
	var rep eval.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, 81, rep.Questions)
	assert.Contains(t, rep.Embedder, "glove:tiny.txt")
	require.Len(t, rep.Modes, 2)
	assert.Greater(t, rep.Modes[0].Overall.Recall[10], 0.0)

	code, _ = runEvalCLI(t, "--mode", "keyword", "--expand", filepath.Join(t.TempDir(), "missing.txt"), "../../testdata/eval")
	assert.NotEqual(t, exitOK, code)
}

// --small-stores asks each question in a store of its evidence among N
// notes and again as a probe in one of N+1 others; it makes its own
// probes, so --cross-probes beside it is a usage error.
func TestEvalCommand_SmallStores(t *testing.T) {
	t.Parallel()
	code, out := runEvalCLI(t, "--small-stores", "3", "--mode", "hybrid", "--json", "../../testdata/eval")
	require.Equal(t, exitOK, code, out)
	var rep eval.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, 81, rep.Questions)
	assert.Equal(t, 81, rep.Probes)
	assert.Equal(t, 162, rep.Conversations, "a store per question and per probe")

	for _, args := range [][]string{
		{"--small-stores", "-1", "../../testdata/eval"},
		{"--small-stores", "3", "--cross-probes", "../../testdata/eval"},
	} {
		code, _ := runEvalCLI(t, args...)
		assert.Equal(t, exitUsage, code, "%v", args)
	}
}

// --calibrate prints the fitted models as package engine's calibrations
// table is written: a mode's weights on one line, named by their fields.
func TestEvalCommand_Calibrate(t *testing.T) {
	t.Parallel()
	code, out := runEvalCLI(t, "--calibrate", "--cross-probes", "--mode", "hybrid", "--json=false", "../../testdata/eval")
	require.Equal(t, exitOK, code, out)
	assert.Regexp(t, `(?m)^hybrid +\{Bias: -?\d+\.\d{4}, KWBest: .*, LogDocs: -?\d+\.\d{4}, KWBestL: .*\},$`, out)
	assert.Contains(t, out, "81 answerable; log loss")
}
