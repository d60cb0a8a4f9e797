package hash

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/agentmem/agentmem/embed"
)

// The scheme "hash[:DIM]" of embed.Open: the offline feature-hashing
// embedder, DIM defaulting to DefaultDim.
func init() { embed.Register("hash", open) }

var _ embed.Embedder = (*Embedder)(nil)

func open(arg string) (embed.Embedder, error) {
	dim := DefaultDim
	if arg = strings.TrimSpace(arg); arg != "" {
		n, err := strconv.Atoi(arg)
		if err != nil {
			return nil, fmt.Errorf("%w: hash dimension %q is not a number (e.g. hash:%d)", embed.ErrBadSpec, arg, DefaultDim)
		}
		dim = n
	}
	e, err := New(dim)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", embed.ErrBadSpec, err)
	}
	return e, nil
}
