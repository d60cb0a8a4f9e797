// Package embedtest has embedders for tests of the packages that sit on
// embed.Embedder.
package embedtest

import (
	"context"
	"fmt"
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

// EmbedInto counts texts and passes them on: to the embedder's EmbedInto
// when it has one (embed.IntoEmbedder), else to Embed, copying the vectors
// into dst.
func (c *Counting) EmbedInto(ctx context.Context, dst []float32, texts []string) error {
	if ie, ok := c.Embedder.(embed.IntoEmbedder); ok {
		c.texts.Add(int64(len(texts)))
		return ie.EmbedInto(ctx, dst, texts)
	}
	vecs, err := c.Embed(ctx, texts)
	if err != nil {
		return err
	}
	d := c.Dim()
	if len(vecs) != len(texts) || len(dst) != len(texts)*d {
		return fmt.Errorf("embedtest: %w: %d vectors of dimension %d for %d texts into %d floats", embed.ErrDimension, len(vecs), d, len(texts), len(dst))
	}
	for i, v := range vecs {
		copy(dst[i*d:(i+1)*d], v)
	}
	return nil
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
