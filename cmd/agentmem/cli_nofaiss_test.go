//go:build !faiss

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// buildTags are the tags of this test build, for the binary the tests run.
const buildTags = ""

func TestCLI_FaissBackendWithoutTag(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "store")
	r := runCLI(t, "", "add", "--store", store, "--backend", "faiss", "--index", "HNSW32,Flat", "hello")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, "make build-faiss (go build -tags faiss")
	assert.Equal(t, 1, strings.Count(r.stderr, "-tags faiss"), "said once: %s", r.stderr)
	r = runCLI(t, "", "--json", "add", "--store", store, "--backend", "faiss", "hello")
	assert.Contains(t, r.stderr, `"code":"unsupported"`)
	_, err := os.Stat(store)
	assert.ErrorIs(t, err, os.ErrNotExist, "refused before the store is touched")
}
