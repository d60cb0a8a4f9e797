package ollama

import (
	"fmt"
	"strings"

	"github.com/agentmem/agentmem/embed"
)

// The scheme "ollama:MODEL" of embed.Open: a model served by Ollama at
// OLLAMA_HOST, e.g. ollama:nomic-embed-text or ollama:nomic-embed-text:v1.5.
func init() { embed.Register("ollama", open) }

var (
	_ embed.Embedder      = (*Embedder)(nil)
	_ embed.QueryEmbedder = (*Embedder)(nil)
)

func open(arg string) (embed.Embedder, error) {
	if strings.TrimSpace(arg) == "" {
		return nil, fmt.Errorf("%w: ollama needs a model name (e.g. ollama:nomic-embed-text)", embed.ErrBadSpec)
	}
	e, err := New(arg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", embed.ErrBadSpec, err)
	}
	return e, nil
}
