package main

import (
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
