//go:build faiss

package short_test

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory/longterm"
	"github.com/agentmem/agentmem/memory/short"
	_ "github.com/agentmem/agentmem/vdb/faiss" // registers "faiss"
)

// TestOpen_Faiss runs a store over the Faiss backend, opened by spec: the
// snapshot is Faiss's own index file, and reopening loads it.
func TestOpen_Faiss(t *testing.T) {
	for _, spec := range []string{"faiss", "faiss:HNSW32,Flat"} {
		t.Run(spec, func(t *testing.T) { testOpenFaiss(t, spec) })
	}
}

func testOpenFaiss(t *testing.T, spec string) {
	ctx := t.Context()
	backend := short.WithBackend(spec)
	dir, before := seededStore(t, 128, backend)

	emb := newHash(t, 128)
	man, err := longterm.ReadManifest(dir)
	require.NoError(t, err)
	assert.Equal(t, spec, man.Backend, "the manifest records the full spec")
	var logs bytes.Buffer
	mem, err := short.Open(ctx, dir, emb, backend, short.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	require.NoError(t, err)
	defer mem.Close()
	assert.Equal(t, int64(0), emb.Texts(), "nothing re-embedded")
	assert.NotContains(t, logs.String(), "snapshot not used", "the Faiss snapshot is loaded")
	after, err := mem.Search(ctx, "aisle seats")
	require.NoError(t, err)
	require.Len(t, after, len(before))
	assert.Equal(t, before[0].Text, after[0].Text)
	assert.InDelta(t, before[0].Score, after[0].Score, 1e-5)
}
