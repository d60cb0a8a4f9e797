// Package faissreg registers the Faiss backend with vdb under the name
// "faiss" ("faiss:FACTORY" chooses the index type) unless vdb/faiss has
// already done so itself. Import it for its side effect. It is a bridge
// until vdb/faiss registers itself (as vdb/inmem does); then it does
// nothing and can go.
package faissreg

import (
	"context"
	"slices"

	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/faiss"
)

func init() {
	// vdb/faiss is initialised before this package, so if it registers
	// itself the name is taken by now.
	if slices.Contains(vdb.Backends(), "faiss") {
		return
	}
	vdb.Register("faiss", func(_ context.Context, cfg vdb.Config) (vdb.VectorDatabase, error) {
		var opts []faiss.Option
		if cfg.Arg != "" {
			opts = append(opts, faiss.WithFactory(cfg.Arg))
		}
		ix, err := faiss.New(cfg.Dim, opts...)
		if err != nil {
			return nil, err // not a typed nil inside the interface
		}
		return ix, nil
	})
}
