package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/memory/longterm"
)

func loadDevSet(t *testing.T) ([]evalTurn, []evalQuestion) {
	t.Helper()
	turns, err := readJSONL[evalTurn]("../../testdata/eval/turns.jsonl")
	require.NoError(t, err)
	qs, err := readJSONL[evalQuestion]("../../testdata/eval/questions.jsonl")
	require.NoError(t, err)
	return turns, qs
}

func TestEval_DevSetHybridBeatsSinglePaths(t *testing.T) {
	turns, qs := loadDevSet(t)
	emb, err := hash.New(512)
	require.NoError(t, err)
	rep, err := runEval(t.Context(), emb, turns, qs, evalConfig{
		ks:    []int{1, 5, 10},
		modes: []longterm.Mode{longterm.Hybrid, longterm.VectorOnly, longterm.KeywordOnly},
	})
	require.NoError(t, err)
	require.Len(t, rep.Modes, 3)
	var sb strings.Builder
	require.NoError(t, printEval(&sb, rep))
	t.Log("\n" + sb.String())
	h, v, k := rep.Modes[0].Overall.Recall[10], rep.Modes[1].Overall.Recall[10], rep.Modes[2].Overall.Recall[10]
	assert.Greater(t, h, v, "hybrid recall@10 must beat vector")
	assert.Greater(t, h, k, "hybrid recall@10 must beat keyword")
}

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
	var rep evalReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, 81, rep.Questions)
	assert.Equal(t, 4, rep.Conversations)
	assert.True(t, rep.WithSpeaker)
	require.Len(t, rep.Modes, 1)
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

func TestReadJSONL_ErrorNamesLine(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/q.jsonl"
	require.NoError(t, os.WriteFile(path, []byte("{\"qid\": \"a\"}\n\n{broken\n"), 0o644))
	_, err := readJSONL[evalQuestion](path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), path+":3")
}

func TestCategoryLabel(t *testing.T) {
	for raw, want := range map[string]string{`2`: "2", `"temporal"`: "temporal", ``: "-", `null`: "-", `""`: "-"} {
		assert.Equal(t, want, categoryLabel(json.RawMessage(raw)), raw)
	}
}

func TestNormalizeEvidence(t *testing.T) {
	assert.Equal(t, []string{"D1:3", "D8:6", "D9:17"}, normalizeEvidence([]string{" D1:3 ", "D8:6; D9:17", "D1:3", ""}))
	assert.Empty(t, normalizeEvidence([]string{" ", ";"}))
}
