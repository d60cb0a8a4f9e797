package embed_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed"
)

// meaningModel stands for a model embedder that does not say its Kind.
type meaningModel struct{}

func (meaningModel) Embed(context.Context, []string) ([][]float32, error) { return nil, nil }
func (meaningModel) Dim() int                                             { return 3 }
func (meaningModel) Name() string                                         { return "model" }

func TestKindOf(t *testing.T) {
	t.Parallel()

	h, err := embed.Open("hash:64")
	require.NoError(t, err)
	assert.Equal(t, embed.Lexical, embed.KindOf(h))
	o, err := embed.Open("ollama:nomic-embed-text")
	require.NoError(t, err)
	assert.Equal(t, embed.Model, embed.KindOf(o), "Ollama's models embed meaning")
	assert.Equal(t, embed.Model, embed.KindOf(meaningModel{}), "an embedder that does not say is a model")

	assert.Equal(t, "model", embed.Model.String())
	assert.Equal(t, "lexical", embed.Lexical.String())
	assert.Equal(t, "word-vectors", embed.WordVectors.String())
	assert.Equal(t, "Kind(9)", embed.Kind(9).String())
}
