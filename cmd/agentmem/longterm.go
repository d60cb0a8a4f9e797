package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/longterm"
)

// Memory kinds, the values of --memory.
const (
	kindShort = "short" // memory.ShortMemory: segments, vector search
	kindLong  = "long"  // memory/longterm: records, hybrid search, namespaces
)

// memoryKind is the --memory flag.
var memoryKind string

func init() {
	rootCmd.PersistentFlags().StringVar(&memoryKind, "memory", kindShort,
		`memory kind: "short" (segments, vector search) or "long" (records with namespaces, hybrid vector+keyword search, small-to-big); default: the store's, else short`)
}

// storeKind returns the kind of memory the command works on: the kind of
// the store in the --store directory if there is one (an explicit --memory
// that disagrees is a usage error), else --memory.
func storeKind(cmd *cobra.Command) (string, error) {
	if memoryKind != kindShort && memoryKind != kindLong {
		return "", usageError{fmt.Errorf(`unknown --memory %q (known: short, long)`, memoryKind)}
	}
	kind, err := detectKind(global.store)
	switch {
	case err != nil:
		return "", err
	case kind == "":
		return memoryKind, nil
	case flagChanged(cmd, "memory") && kind != memoryKind:
		return "", usageError{fmt.Errorf("--memory %s, but %s holds a %s-term memory store (drop --memory, or pass another --store)",
			memoryKind, global.store, kind)}
	}
	return kind, nil
}

// detectKind returns the kind of the store in dir from its manifest, or ""
// if dir holds no store.
func detectKind(dir string) (string, error) {
	_, serr := memory.ReadManifest(dir)
	if serr == nil {
		return kindShort, nil
	}
	if errors.Is(serr, os.ErrNotExist) {
		return "", nil
	}
	_, lerr := longterm.ReadManifest(dir)
	switch {
	case lerr == nil:
		return kindLong, nil
	case errors.Is(serr, memory.ErrFormatVersion):
		return "", serr
	case errors.Is(lerr, longterm.ErrVersion):
		return "", lerr
	}
	return "", fmt.Errorf("%s holds neither a short- nor a long-term memory store: %w", dir, errors.Join(serr, lerr))
}

// longStore is an open long-term memory with what stats prints about it.
type longStore struct {
	*longterm.Memory
	embedder string
	dim      int
	backend  string
}

// openLongStore opens the longterm memory in the --store directory, like
// openStore does the short-term one: with create false a missing store is
// an error; the embedder and backend (and Faiss index type) are the store's
// unless --embedder or --backend (--index) say otherwise (another embedder is an error wrapping
// longterm.ErrEmbedderMismatch; another backend rebuilds the vector index
// from the log, without re-embedding).
func openLongStore(ctx context.Context, cmd *cobra.Command, create bool, opts ...longterm.Option) (*longStore, error) {
	dir := global.store
	man, err := longterm.ReadManifest(dir)
	embSpec, backendName, err := storeSpecs(cmd, create, man.Embedder, man.Backend, err)
	if err != nil {
		return nil, err
	}
	if man.Backend != "" && !flagChanged(cmd, "backend") {
		// The backend of the latest snapshot: the manifest keeps the one
		// the store was created with.
		if b, _, err := longterm.SnapshotVectorFiles(dir); err == nil && b != "" {
			backendName = b
		}
	}
	emb, err := openEmbedder(embSpec)
	if err != nil {
		return nil, err
	}
	open, err := backendOpener(backendName, storedLongFaissIndex(dir))
	if err != nil {
		return nil, err
	}
	logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	base := []longterm.Option{longterm.WithBackend(backendName, open), longterm.WithLogger(logger)}
	mem, err := longterm.Open(ctx, dir, emb, append(base, opts...)...)
	if err != nil {
		return nil, err
	}
	man, err = longterm.ReadManifest(dir)
	if err != nil {
		return nil, errors.Join(err, mem.Close())
	}
	return &longStore{Memory: mem, embedder: man.Embedder, dim: man.Dim, backend: backendName}, nil
}

// storedLongFaissIndex returns the index-factory string of the Faiss
// snapshot of the long-term store in dir, or "" if there is none: like
// storedFaissIndex for a short-term store, so that a store built with
// --index "HNSW32,Flat" reopens with that index (the snapshot would not load
// into another index type, and the store would rebuild it from the log as
// the default type).
func storedLongFaissIndex(dir string) string {
	backend, files, err := longterm.SnapshotVectorFiles(dir)
	if err != nil || backend != "faiss" {
		return ""
	}
	for _, path := range files { // every namespace has the same index type
		return faissFileIndex(path)
	}
	return ""
}

// chatMemory is what chat needs of either kind of store.
type chatMemory interface {
	memory.Memory
	io.Closer
}

// openAnyStore opens the store in --store, of the kind storeKind says.
func openAnyStore(ctx context.Context, cmd *cobra.Command, create bool) (chatMemory, error) {
	kind, err := storeKind(cmd)
	if err != nil {
		return nil, err
	}
	// No typed nil pointer inside the interface on error.
	if kind == kindLong {
		ls, err := openLongStore(ctx, cmd, create)
		if err != nil {
			return nil, err
		}
		return ls, nil
	}
	mem, err := openStore(ctx, cmd, create)
	if err != nil {
		return nil, err
	}
	return mem, nil
}

// longOnly returns a usage error if one of the named flags, which only a
// long-term store understands, was given for a short-term one.
func longOnly(cmd *cobra.Command, kind string, names ...string) error {
	if kind == kindLong {
		return nil
	}
	for _, n := range names {
		if flagChanged(cmd, n) {
			return usageError{fmt.Errorf("--%s needs a long-term memory store (--memory long)", n)}
		}
	}
	return nil
}

// recordError makes a record the long-term store refuses (no letter or
// digit, invalid UTF-8) a usage error.
func recordError(err error) error {
	if errors.Is(err, longterm.ErrEmptyText) || errors.Is(err, longterm.ErrInvalidUTF8) {
		return usageError{err}
	}
	return err
}
