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
	man, err := memory.ReadManifest(dir)
	embSpec, backendName, err := storeSpecs(cmd, create, man.Embedder, man.Backend, err)
	if err != nil {
		return nil, err
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

// storeSpecs picks the embedder spec and backend name for the store in
// --store, given what reading its manifest returned: the store's own unless
// --embedder or --backend were given, the flags' for a new store. A missing
// store is an error unless create is set.
func storeSpecs(cmd *cobra.Command, create bool, manEmbedder, manBackend string, manErr error) (embSpec, backendName string, err error) {
	embSpec, backendName = global.embedder, backend.name
	switch {
	case errors.Is(manErr, os.ErrNotExist):
		if !create {
			return "", "", fmt.Errorf("%w in %s (add or import something first, or pass --store DIR)", errNoStore, global.store)
		}
	case manErr != nil:
		return "", "", manErr
	default:
		if !flagChanged(cmd, "embedder") {
			embSpec = manEmbedder
		}
		if !flagChanged(cmd, "backend") {
			backendName = manBackend
		}
	}
	return embSpec, backendName, nil
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
