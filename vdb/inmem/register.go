package inmem

import (
	"context"
	"fmt"

	"github.com/agentmem/agentmem/internal/errs"
	"github.com/agentmem/agentmem/vdb"
)

// The backend "inmem" of vdb.Open: exact search in this process. It ignores
// the namespace. "inmem" and "inmem:none" scan float32 rows; "inmem:int8"
// keeps int8 codes beside them (WithCodes(Int8)): the same results, fewer
// bytes scanned.
func init() {
	vdb.Register("inmem", func(ctx context.Context, cfg vdb.Config) (vdb.VectorDatabase, error) {
		switch cfg.Arg {
		case "", NoCodes.String():
			return New(cfg.Dim)
		case Int8.String():
			return New(cfg.Dim, WithCodes(Int8))
		}
		return nil, fmt.Errorf("inmem: unknown argument %q (want no argument, %q or %q): %w", cfg.Arg, NoCodes.String(), Int8.String(), errs.InvalidArgument)
	})
}
