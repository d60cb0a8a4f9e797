//go:build faiss

package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCLI_FaissBackend(t *testing.T) {
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
