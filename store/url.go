package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/postgres"
)

// Memory is what [OpenURL] returns: a long-term memory in a store directory
// (*Store) or in PostgreSQL (*postgres.Memory). It is what a server needs
// (server.Store) and Close.
type Memory interface {
	memory.Records
	memory.Querier
	memory.Lister
	Len() int
	Close() error
}

var (
	_ Memory = (*Store)(nil)
	_ Memory = (*postgres.Memory)(nil)
)

// IsURL reports whether target is a PostgreSQL store URL (postgres:// or
// postgresql://) rather than a store directory.
func IsURL(target string) bool { return postgres.IsURL(target) }

// OpenURL opens the store target names: a PostgreSQL store for a
// postgres:// URL (package memory/postgres; schema=NAME in the URL picks the
// store inside the database), otherwise the store directory, as [Open].
// A PostgreSQL store is long-term (a Kind of short is an error wrapping
// memory.ErrInvalidArgument) and keeps no backend spec (cfg.Backend and
// cfg.Long are ignored); its embedder is the one its manifest records
// unless cfg.Embedder names another, which is an error wrapping
// memory.ErrEmbedderMismatch for an existing store.
func OpenURL(ctx context.Context, target string, cfg Config) (Memory, error) {
	if !IsURL(target) {
		return Open(ctx, target, cfg)
	}
	if cfg.Kind != "" && cfg.Kind != Long {
		return nil, fmt.Errorf("store: %w: a PostgreSQL store is long-term, not %s-term", memory.ErrInvalidArgument, cfg.Kind)
	}
	spec := cfg.Embedder
	man, err := postgres.ReadManifest(ctx, target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if !cfg.Create {
			return nil, err
		}
		if spec == "" {
			spec = DefaultEmbedder
		}
	case err != nil:
		return nil, fmt.Errorf("store: %w", err)
	case spec == "":
		spec = man.Embedder
	}
	emb, err := embed.Open(spec)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	opts := []postgres.Option{postgres.WithLogger(cfg.Logger)}
	if cfg.Create {
		opts = append(opts, postgres.WithCreate())
	}
	if cfg.TopK != 0 {
		opts = append(opts, postgres.WithTopK(cfg.TopK))
	}
	if cfg.MinScore != 0 {
		opts = append(opts, postgres.WithMinScore(cfg.MinScore))
	}
	return postgres.Open(ctx, target, emb, opts...)
}
