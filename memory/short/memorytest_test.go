package short_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/memorytest"
	"github.com/agentmem/agentmem/memory/short"
)

// TestConformance runs memory/memorytest on a short-term memory in memory
// (New) and on a store directory (Open) that the suite reopens.
func TestConformance(t *testing.T) {
	emb := newHash(t, 64)
	t.Run("New", func(t *testing.T) {
		memorytest.Run(t, func(t *testing.T) memorytest.Subject {
			m, err := short.New(t.Context(), emb)
			require.NoError(t, err)
			t.Cleanup(func() { m.Close() })
			return memorytest.Subject{Memory: m}
		})
	})
	t.Run("Open", func(t *testing.T) {
		memorytest.Run(t, memorytest.OpenDir(func(ctx context.Context, dir string) (memory.Memory, error) {
			return short.Open(ctx, dir, emb)
		}))
	})
}
