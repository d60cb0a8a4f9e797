// Package embedtest has embedders for tests of the packages that sit on
// embed.Embedder.
package embedtest

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/embed/hash"
)

// Counting wraps an embedder and counts the texts it embeds, so that a test
// can prove that reopening a store re-embeds nothing. It is safe for
// concurrent use.
type Counting struct {
	embed.Embedder
	texts atomic.Int64
}

// Embed counts texts and passes them on.
func (c *Counting) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.texts.Add(int64(len(texts)))
	return c.Embedder.Embed(ctx, texts)
}

// Texts returns how many texts Embed has been given so far.
func (c *Counting) Texts() int64 { return c.texts.Load() }

// CountingHash returns a Counting over the offline hash embedder of
// dimension dim.
func CountingHash(t testing.TB, dim int) *Counting {
	t.Helper()
	e, err := hash.New(dim)
	if err != nil {
		t.Fatalf("embedtest: %v", err)
	}
	return &Counting{Embedder: e}
}
