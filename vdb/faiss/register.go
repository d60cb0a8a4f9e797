package faiss

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentmem/agentmem/internal/errs"
	"github.com/agentmem/agentmem/vdb"
)

// The backend "faiss" of vdb.Open. Its argument is an index-factory string
// with optional search options after a "?" (see [ParseArg]); it ignores the
// namespace. In a build without the faiss tag the backend is registered
// all the same, and opening it fails with an error wrapping
// [vdb.ErrUnsupported] that says how to rebuild.
func init() {
	vdb.Register("faiss", func(ctx context.Context, cfg vdb.Config) (vdb.VectorDatabase, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		opts, err := ParseArg(cfg.Arg)
		if err != nil {
			return nil, err
		}
		ix, err := New(cfg.Dim, opts...)
		if err != nil {
			return nil, err // not a typed nil inside the interface
		}
		return ix, nil
	})
}

// ParseArg turns the argument of a "faiss:…" spec of [vdb.Open] into
// options for [New]. The argument is an index-factory string ([WithFactory];
// empty means [DefaultFactory]), optionally followed by "?" and
// "name=value" search options joined by "&":
//
//	faiss                                  IDMap,Flat: exact search
//	faiss:HNSW32,Flat?efSearch=64          HNSW, 64 candidates per search
//	faiss:IVF1024,Flat?nprobe=16&threads=1 IVF, 16 of 1024 lists per search
//	faiss:?threads=1                       the default index on one thread
//
// The names are nprobe ([WithNProbe]), efSearch ([WithEfSearch]), threads
// ([WithThreads]) and trainSize ([WithTrainSize]), in any case; each value is
// a non-negative integer. Anything else is an error wrapping agentmem's
// shared invalid-argument sentinel (window.ErrInvalidOption is the same
// value).
func ParseArg(arg string) ([]Option, error) {
	factory, query, _ := strings.Cut(arg, "?")
	var opts []Option
	if factory = strings.TrimSpace(factory); factory != "" {
		opts = append(opts, WithFactory(factory))
	}
	if query == "" {
		return opts, nil
	}
	for kv := range strings.SplitSeq(query, "&") {
		name, value, ok := strings.Cut(kv, "=")
		n, err := strconv.Atoi(value)
		if !ok || err != nil || n < 0 {
			return nil, fmt.Errorf("faiss: option %q in %q: want name=N with N ≥ 0: %w", kv, arg, errs.InvalidArgument)
		}
		switch strings.ToLower(name) {
		case "nprobe":
			opts = append(opts, WithNProbe(n))
		case "efsearch":
			opts = append(opts, WithEfSearch(n))
		case "threads":
			opts = append(opts, WithThreads(n))
		case "trainsize":
			opts = append(opts, WithTrainSize(n))
		default:
			return nil, fmt.Errorf("faiss: unknown option %q in %q (known: nprobe, efSearch, threads, trainSize): %w",
				name, arg, errs.InvalidArgument)
		}
	}
	return opts, nil
}
