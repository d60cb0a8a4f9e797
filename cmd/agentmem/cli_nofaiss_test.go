//go:build !faiss

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCLI_FaissBackendWithoutTag(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	r := runCLI(t, "", "add", "--store", store, "--backend", "faiss", "--index", "HNSW32,Flat", "hello")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, "rebuild with -tags faiss")
	_, err := os.Stat(store)
	assert.ErrorIs(t, err, os.ErrNotExist, "refused before the store is touched")
}
