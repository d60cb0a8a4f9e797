package pgvector

import (
	"context"

	"github.com/agentmem/agentmem/vdb"
)

// The registry opener: vdb.Open(ctx, "pgvector:DSN", vdb.Config{Dim,
// Namespace}) opens the namespace's table with an owned pool (see [Open]).
func init() {
	vdb.Register("pgvector", func(ctx context.Context, cfg vdb.Config) (vdb.VectorDatabase, error) {
		return Open(ctx, cfg.Arg, cfg.Dim, WithNamespace(cfg.Namespace))
	})
}
