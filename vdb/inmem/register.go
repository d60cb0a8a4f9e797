package inmem

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentmem/agentmem/internal/errs"
	"github.com/agentmem/agentmem/vdb"
)

// The backend "inmem" of vdb.Open: exact search in this process. It ignores
// the namespace. "inmem" and "inmem:none" scan float32 rows; "inmem:int8"
// keeps int8 codes beside them (WithCodes(Int8)): the same results, fewer
// bytes scanned. Options after a comma add an approximate candidate stage
// (an [IVF]) for large databases: "ivf" with the defaults, or
// "ivf=MINROWS", with "lists=ROWS" and "nprobe=N" to set
// [IVFConfig.ListRows] and [IVFConfig.Probes]; e.g.
// "inmem:int8,ivf=200000,nprobe=16"; "sync" trains the index in the call
// that triggers it ([IVFConfig.Sync]) rather than in the background. The
// option "cols" (with int8) keeps
// the codes by columns too ([WithColumns]), for queries with few nonzero
// dimensions: "inmem:int8,cols".
func init() {
	vdb.Register("inmem", func(ctx context.Context, cfg vdb.Config) (vdb.VectorDatabase, error) {
		return open(cfg)
	})
}

func open(cfg vdb.Config) (vdb.VectorDatabase, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("inmem: argument %q: %s: %w", cfg.Arg, fmt.Sprintf(format, args...), errs.InvalidArgument)
	}
	parts := strings.Split(cfg.Arg, ",")
	var opts []Option
	switch parts[0] {
	case "", NoCodes.String():
	case Int8.String():
		opts = append(opts, WithCodes(Int8))
	default:
		return nil, bad("unknown codes %q (want no argument, %q or %q)", parts[0], NoCodes.String(), Int8.String())
	}
	if len(parts) == 1 {
		return New(cfg.Dim, opts...)
	}
	var ic IVFConfig
	ivf, tuned := false, false
	for _, p := range parts[1:] {
		key, val, hasVal := strings.Cut(p, "=")
		n := 0
		if hasVal {
			var err error
			if n, err = strconv.Atoi(val); err != nil || n <= 0 {
				return nil, bad("%s wants a positive integer, got %q", key, val)
			}
		}
		switch {
		case key == "ivf":
			ivf, ic.MinRows = true, n
		case key == "lists" && hasVal:
			ic.ListRows, tuned = n, true
		case key == "nprobe" && hasVal:
			ic.Probes, tuned = n, true
		case key == "sync" && !hasVal:
			ic.Sync, tuned = true, true
		case key == "cols" && !hasVal:
			if parts[0] != Int8.String() {
				return nil, bad("cols needs int8")
			}
			opts = append(opts, WithColumns())
		default:
			return nil, bad("unknown option %q (want ivf[=MINROWS], lists=ROWS, nprobe=N, sync, cols)", p)
		}
	}
	if !ivf {
		if tuned {
			return nil, bad("lists, nprobe and sync need ivf")
		}
		return New(cfg.Dim, opts...)
	}
	return NewIVF(cfg.Dim, ic, opts...)
}
