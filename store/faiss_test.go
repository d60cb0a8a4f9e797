//go:build faiss

package store_test

import (
	"testing"

	_ "github.com/agentmem/agentmem/vdb/faiss" // registers "faiss"
)

// TestOpen_OldLongFaissStore opens a long-term store the previous release
// built with --backend faiss --index HNSW32,Flat: its manifest names only
// "faiss", so the index type is read from the snapshot once, and recorded.
func TestOpen_OldLongFaissStore(t *testing.T) {
	st := openOldLongStore(t, fixture(t, "v1-long-faiss"), "faiss:HNSW32,Flat")
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}
