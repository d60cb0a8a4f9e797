package main

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/faiss"
	"github.com/agentmem/agentmem/vdb/inmem"
)

// backendFlags choose the vector database under a store.
type backendFlags struct {
	name  string // "inmem" or "faiss"
	index string // Faiss index-factory string
}

var backend backendFlags

func init() {
	pf := rootCmd.PersistentFlags()
	pf.StringVar(&backend.name, "backend", memory.DefaultBackend,
		`vector backend: "inmem" (pure Go, exact) or "faiss" (needs a build with -tags faiss); default: the store's, else inmem`)
	pf.StringVar(&backend.index, "index", "",
		`Faiss index-factory string for --backend faiss, e.g. "HNSW32,Flat" (default `+faiss.DefaultFactory+`)`)
}

// backendOption returns the memory option for the backend named name (the
// --backend flag, or the store's backend when the flag was not given).
func backendOption(name string) (memory.Option, error) {
	open, err := backendOpener(name, storedFaissIndex(global.store))
	if err != nil {
		return nil, err
	}
	return memory.WithBackend(name, open), nil
}

// backendOpener returns the constructor of the backend named name, for
// memory.WithBackend and longterm.WithBackend. storedIndex is the Faiss
// index-factory string the store was built with ("" if unknown), used when
// --index is not given.
func backendOpener(name, storedIndex string) (func(dim int) (vdb.VectorDatabase, error), error) {
	switch name {
	case "inmem":
		if backend.index != "" {
			return nil, usageError{fmt.Errorf("--index %q needs --backend faiss", backend.index)}
		}
		return func(dim int) (vdb.VectorDatabase, error) {
			return inmem.New(dim)
		}, nil
	case "faiss":
		var opts []faiss.Option
		if index := cmp.Or(backend.index, storedIndex); index != "" {
			opts = append(opts, faiss.WithFactory(index))
		}
		return func(dim int) (vdb.VectorDatabase, error) {
			ix, err := faiss.New(dim, opts...)
			if err != nil {
				return nil, err // not a typed nil inside the interface
			}
			return ix, nil
		}, nil
	default:
		return nil, usageError{fmt.Errorf("unknown --backend %q (known: inmem, faiss)", name)}
	}
}

// storedFaissIndex returns the index-factory string of the Faiss snapshot in
// the store directory dir, or "" if there is none, so that a store built with
// --index "HNSW32,Flat" reopens with the same index without repeating the
// flag (the snapshot would not load into another index type, and the store
// would re-embed everything).
func storedFaissIndex(dir string) string {
	man, err := memory.ReadManifest(dir)
	if err != nil || man.Backend != "faiss" || man.Snapshot == nil {
		return ""
	}
	return faissFileIndex(filepath.Join(dir, man.Snapshot.File))
}

// faissFileIndex returns the index-factory string in the header of the
// Faiss snapshot file at path, or "" if it cannot be read (the store reports
// an unusable snapshot itself).
func faissFileIndex(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h, err := faiss.ReadHeader(f)
	if err != nil {
		return ""
	}
	return h.Factory
}
