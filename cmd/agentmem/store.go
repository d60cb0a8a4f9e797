package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/memory"
)

// errNoStore: search and stats were pointed at a directory with no store.
var errNoStore = errors.New("no memory store")

// openStore opens the ShortMemory in the --store directory. With create
// false a missing store is an error (search and stats have nothing to read).
//
// The embedder and backend default to the ones the store was built with,
// so that `agentmem search` works on a store built with --embedder
// ollama:MODEL without repeating the flag; given explicitly, they must match
// the store's embedder (memory.ErrEmbedderMismatch) and may switch its
// backend (the store re-embeds into the new one).
func openStore(ctx context.Context, cmd *cobra.Command, create bool, opts ...memory.Option) (*memory.ShortMemory, error) {
	dir := global.store
	embSpec, backendName := global.embedder, backend.name
	man, err := memory.ReadManifest(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if !create {
			return nil, fmt.Errorf("%w in %s (add or import something first, or pass --store DIR)", errNoStore, dir)
		}
	case err != nil:
		return nil, err
	default:
		if !flagChanged(cmd, "embedder") {
			embSpec = man.Embedder
		}
		if !flagChanged(cmd, "backend") {
			backendName = man.Backend
		}
	}
	emb, err := openEmbedder(embSpec)
	if err != nil {
		return nil, err
	}
	bopt, err := backendOption(backendName)
	if err != nil {
		return nil, err
	}
	return memory.OpenShort(ctx, dir, emb, append([]memory.Option{bopt}, opts...)...)
}

// openEmbedder opens the embedder spec; a bad spec is a usage error.
func openEmbedder(spec string) (embed.Embedder, error) {
	emb, err := embed.Open(spec)
	if err != nil {
		if errors.Is(err, embed.ErrUnknownScheme) || errors.Is(err, embed.ErrBadSpec) {
			return nil, usageError{fmt.Errorf("--embedder: %w", err)}
		}
		return nil, err
	}
	return emb, nil
}

// flagChanged reports whether the user set the named (local or inherited)
// flag on the command line.
func flagChanged(cmd *cobra.Command, name string) bool {
	f := cmd.Flags().Lookup(name)
	if f == nil {
		f = cmd.InheritedFlags().Lookup(name)
	}
	return f != nil && f.Changed
}

// closeStore closes mem (a short- or long-term memory) and joins its error
// into *err, so that a failed snapshot is not lost.
func closeStore(mem io.Closer, err *error) {
	if cerr := mem.Close(); cerr != nil {
		*err = errors.Join(*err, cerr)
	}
}

// usageArgs wraps a cobra argument validator so that its errors exit with
// the usage code 2.
func usageArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := v(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}
