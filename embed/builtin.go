package embed

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/embed/ollama"
)

// The built-in schemes:
//
//	hash[:DIM]      the offline feature-hashing embedder (package embed/hash);
//	                DIM defaults to hash.DefaultDim (512)
//	ollama:MODEL    a model served by Ollama at OLLAMA_HOST (package embed/ollama),
//	                e.g. ollama:nomic-embed-text or ollama:nomic-embed-text:v1.5
func init() {
	Register("hash", openHash)
	Register("ollama", openOllama)
}

// Compile-time checks that the built-in embedders implement the interfaces.
var (
	_ Embedder      = (*hash.Embedder)(nil)
	_ Embedder      = (*ollama.Embedder)(nil)
	_ QueryEmbedder = (*ollama.Embedder)(nil)
)

func openHash(arg string) (Embedder, error) {
	dim := hash.DefaultDim
	if arg = strings.TrimSpace(arg); arg != "" {
		n, err := strconv.Atoi(arg)
		if err != nil {
			return nil, fmt.Errorf("%w: hash dimension %q is not a number (e.g. hash:%d)", ErrBadSpec, arg, hash.DefaultDim)
		}
		dim = n
	}
	e, err := hash.New(dim)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSpec, err)
	}
	return e, nil
}

func openOllama(arg string) (Embedder, error) {
	if strings.TrimSpace(arg) == "" {
		return nil, fmt.Errorf("%w: ollama needs a model name (e.g. ollama:nomic-embed-text)", ErrBadSpec)
	}
	e, err := ollama.New(arg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSpec, err)
	}
	return e, nil
}
