//go:build faiss

package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	memstore "github.com/agentmem/agentmem/store"
)

// buildTags are the tags of this test build, for the binary the tests run.
const buildTags = "faiss"

func TestCLI_FaissBackend(t *testing.T) {
	t.Parallel()
	for _, index := range []string{"", "HNSW32,Flat"} {
		t.Run("index="+index, func(t *testing.T) {
			store := filepath.Join(t.TempDir(), "store")
			args := []string{"add", "--store", store, "--backend", "faiss"}
			if index != "" {
				args = append(args, "--index", index)
			}
			r := runCLI(t, "", append(args, "user: the wifi password is tulip-42", "user: book a table for two at 7pm")...)
			require.Equal(t, exitOK, r.code, r.stderr)

			// A later command without --backend reopens the store's Faiss index from disk.
			r = runCLI(t, "", "search", "--store", store, "wifi password")
			require.Equal(t, exitOK, r.code, r.stderr)
			assert.Contains(t, r.stdout, "tulip-42")

			assert.NotContains(t, r.stderr, "unusable", "the store reopens its own index type")

			r = runCLI(t, "", "stats", "--store", store)
			require.Equal(t, exitOK, r.code, r.stderr)
			assert.Contains(t, r.stdout, "faiss")
		})
	}
}

func TestCLI_FaissBadIndex(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "store")
	r := runCLI(t, "", "add", "--store", store, "--backend", "faiss", "--index", "NoSuchIndex", "hello")
	assert.NotEqual(t, exitOK, r.code)
	assert.Contains(t, r.stderr, "NoSuchIndex")

	// IVF needs training on many vectors: a first add of one segment is a
	// clear error, not a crash.
	r = runCLI(t, "", "add", "--store", store, "--backend", "faiss", "--index", "IVF64,Flat", "hello")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, "Train")
}

func TestCLI_LongTerm_FaissBackend(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "store")
	r := runCLI(t, "", "import", "--memory", "long", "--store", store, "--backend", "faiss", "--index", "HNSW32,Flat", conversation)
	require.Equal(t, exitOK, r.code, r.stderr)

	// Later commands reopen the store's own backend and index type: the
	// snapshot loads (no warning, no rebuild as another index type).
	for range 2 {
		r = runCLI(t, "", "search", "--store", store, "-k", "1", "LH 2043")
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.Contains(t, r.stdout, "Flight LH 2043")
		assert.Empty(t, r.stderr, "the snapshot was used")
	}
	_, _, backend, err := memstore.Info(store)
	require.NoError(t, err)
	assert.Equal(t, "faiss:HNSW32,Flat", backend, "the manifest records the index type")

	r = runCLI(t, "", "stats", "--store", store)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Regexp(t, `backend\s+faiss:HNSW32,Flat\n`, r.stdout)
}

func TestCLI_LongTerm_SwitchBackend(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "store")
	r := runCLI(t, "", "add", "--memory", "long", "--store", store, "user: the wifi password is tulip-42")
	require.Equal(t, exitOK, r.code, r.stderr)
	r = runCLI(t, "", "add", "--store", store, "--backend", "faiss", "user: book a table for two at 7pm")
	require.Equal(t, exitOK, r.code, r.stderr)
	// The inmem snapshot does not load into faiss: the indexes are rebuilt
	// from the log (an info-level log line: an asked-for switch is not a
	// warning). The search below finds the memory added before the switch.
	assert.NotContains(t, r.stderr, "WARN")

	// Without --backend the store opens with the backend it switched to:
	// the manifest records it.
	r = runCLI(t, "", "search", "--store", store, "--mode", "vector", "wifi password")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "tulip-42")
	assert.Empty(t, r.stderr)
	r = runCLI(t, "", "stats", "--store", store)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Regexp(t, `memories\s+2\n`, r.stdout)
	assert.Regexp(t, `backend\s+faiss\n`, r.stdout)
}
