package longterm

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/embed/hash"
)

// countingEmbedder wraps the hash embedder and counts the texts it embeds,
// so tests can prove that reopening a store re-embeds nothing.
type countingEmbedder struct {
	embed.Embedder
	texts atomic.Int64
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.texts.Add(int64(len(texts)))
	return c.Embedder.Embed(ctx, texts)
}

func newCounting(t testing.TB, dim int) *countingEmbedder {
	t.Helper()
	e, err := hash.New(dim)
	require.NoError(t, err)
	return &countingEmbedder{Embedder: e}
}

var discardLogger = slog.New(slog.DiscardHandler)

// crash abandons m as a killed process would: no snapshot, log and lock
// released by the "kernel".
func crash(m *Memory) {
	m.log.close()
	m.lock.Close()
}
