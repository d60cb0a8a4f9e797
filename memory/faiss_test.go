//go:build faiss

package memory_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/faiss"
)

// TestOpenShort_Faiss runs a store over the Faiss backend: the snapshot is
// Faiss's own index file, and reopening loads it instead of re-embedding.
func TestOpenShort_Faiss(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	backend := memory.WithBackend("faiss", func(dim int) (vdb.VectorDatabase, error) {
		ix, err := faiss.New(dim)
		if err != nil {
			return nil, err
		}
		return ix, nil
	})
	mem, err := memory.OpenShort(ctx, dir, newHash(t, 128), backend, memory.WithLogger(quiet()))
	require.NoError(t, err)
	_, err = mem.UpdateBatch(ctx, rounds)
	require.NoError(t, err)
	before, err := mem.Search(ctx, "aisle seats")
	require.NoError(t, err)
	require.NotEmpty(t, before)
	require.NoError(t, mem.Close())

	emb := newHash(t, 128)
	mem, err = memory.OpenShort(ctx, dir, emb, backend, memory.WithLogger(quiet()))
	require.NoError(t, err)
	defer mem.Close()
	assert.Equal(t, int64(0), emb.Texts(), "the Faiss snapshot is loaded, nothing re-embedded")
	after, err := mem.Search(ctx, "aisle seats")
	require.NoError(t, err)
	require.Len(t, after, len(before))
	assert.Equal(t, before[0].Text, after[0].Text)
	assert.InDelta(t, before[0].Score, after[0].Score, 1e-5)
}
