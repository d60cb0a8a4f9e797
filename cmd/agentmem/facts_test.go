package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCLI_Facts: add stores a text once and says so, supersede keeps the
// old version as history, search reads what holds now (or --as-of,
// --history), history prints the chain.
func TestCLI_Facts(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "store")
	type added struct {
		IDs        []string `json:"ids"`
		Duplicate  bool     `json:"duplicate"`
		Duplicates []string `json:"duplicates"`
	}
	add := func(args ...string) added {
		t.Helper()
		r := runCLI(t, "", append([]string{"add", "--json", "--memory", "long", "--store", store, "--namespace", "dana"}, args...)...)
		require.Equal(t, exitOK, r.code, r.stderr)
		var a added
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &a), r.stdout)
		return a
	}
	first := add("--time", "2024-01-01", "Dana lives in Paris.")
	require.Len(t, first.IDs, 1)
	assert.False(t, first.Duplicate)
	again := add("dana lives in paris")
	assert.True(t, again.Duplicate, "the same text again is a duplicate")
	assert.Equal(t, first.IDs, again.IDs, "and returns the stored memory's id")
	r := runCLI(t, "", "add", "--store", store, "--namespace", "dana", "Dana lives in Paris!")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "already remembered: memory (id "+first.IDs[0]+")")

	r = runCLI(t, "", "supersede", "--json", "--store", store, "--time", "2025-06-01", first.IDs[0], "Dana moved to Berlin.")
	require.Equal(t, exitOK, r.code, r.stderr)
	var sup struct{ ID, Superseded string }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &sup))
	assert.Equal(t, first.IDs[0], sup.Superseded)

	now := searchJSON(t, "--store", store, "--min-relevance", "-1", "where does Dana live")
	require.Len(t, now.Hits, 1, "only the current version")
	assert.Equal(t, sup.ID, now.Hits[0].ID)
	then := searchJSON(t, "--store", store, "--min-relevance", "-1", "--as-of", "2025-01-01", "where does Dana live")
	require.Len(t, then.Hits, 1, "as of before the change: the old version")
	assert.Equal(t, first.IDs[0], then.Hits[0].ID)
	all := searchJSON(t, "--store", store, "--min-relevance", "-1", "--history", "where does Dana live")
	require.Len(t, all.Hits, 2, "history: both")
	for _, h := range all.Hits {
		if h.ID == first.IDs[0] {
			assert.Equal(t, sup.ID, h.SupersededBy, "the old version is marked")
			assert.False(t, h.ValidUntil.IsZero())
		}
	}

	r = runCLI(t, "", "history", "--store", store, sup.ID)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Regexp(t, `(?s)^1\. `+first.IDs[0]+`.*no longer holds.*Dana lives in Paris\..*2\. `+sup.ID+`.*current.*Dana moved to Berlin\.`, r.stdout)

	r = runCLI(t, "", "supersede", "--store", store, first.IDs[0], "Dana lives in Rome.")
	assert.Equal(t, exitFailure, r.code, "a superseded memory cannot be superseded again")
	assert.Contains(t, r.stderr, "superseded")
	r = runCLI(t, "", "history", "--store", store, "nothing")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, "no memory with id nothing")
}
