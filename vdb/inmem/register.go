package inmem

import (
	"context"
	"fmt"

	"github.com/agentmem/agentmem/vdb"
)

// The backend "inmem" of vdb.Open: exact search in this process. It takes no
// argument and ignores the namespace.
func init() {
	vdb.Register("inmem", func(ctx context.Context, cfg vdb.Config) (vdb.VectorDatabase, error) {
		if cfg.Arg != "" {
			return nil, fmt.Errorf("inmem: the backend takes no argument, got %q", cfg.Arg)
		}
		return New(cfg.Dim)
	})
}
