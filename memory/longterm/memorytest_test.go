package longterm_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed"
	_ "github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/longterm"
	"github.com/agentmem/agentmem/memory/memorytest"
)

// TestConformance runs memory/memorytest on a long-term memory in memory
// (New) and on a store directory (Open) that the suite reopens.
func TestConformance(t *testing.T) {
	emb, err := embed.Open("hash:256")
	require.NoError(t, err)
	t.Run("New", func(t *testing.T) {
		memorytest.Run(t, func(t *testing.T) memorytest.Subject {
			m, err := longterm.New(t.Context(), emb)
			require.NoError(t, err)
			t.Cleanup(func() { m.Close() })
			return memorytest.Subject{Memory: m}
		})
	})
	t.Run("Open", func(t *testing.T) {
		memorytest.Run(t, memorytest.OpenDir(func(ctx context.Context, dir string) (memory.Memory, error) {
			return longterm.Open(ctx, dir, emb)
		}))
	})
}
