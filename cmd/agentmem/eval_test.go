package main

import (
	"bytes"
	"encoding/json"
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
