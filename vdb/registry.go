package vdb

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentmem/agentmem/internal/registry"
)

// Config is what an [Opener] gets to build a database.
type Config struct {
	// Dim is the dimension of the vectors the database will hold (> 0).
	Dim int
	// Namespace is the memory scope the database will serve (a user, an
	// agent, a conversation). An in-process backend may ignore it; a remote
	// one maps it to a collection, a table or a partition.
	Namespace string
	// Arg is the part of the spec after "name:", e.g. "IVF1024,Flat" for
	// "faiss:IVF1024,Flat" or a DSN for "pgvector:postgres://…"; empty
	// means the backend's default.
	Arg string
}

// An Opener builds a database from a [Config]. It may do I/O (connect to a
// server), so it takes a context.
type Opener func(ctx context.Context, cfg Config) (VectorDatabase, error)

var openers = registry.New[Opener]("vdb", "backend")

// Register makes a backend available to [Open] under name. Backends call it
// from an init function, so that importing the backend's package (for its
// side effect, `import _ "github.com/agentmem/agentmem/vdb/inmem"`) is all a
// program does to offer it. Register panics if open is nil, the name is empty
// or holds a colon, or the name is already registered: all are programming
// errors made at init time.
func Register(name string, open Opener) {
	if open == nil {
		panic("vdb: Register opener is nil")
	}
	if name == "" || strings.Contains(name, ":") {
		panic(fmt.Sprintf("vdb: Register name %q is empty or holds a colon", name))
	}
	openers.Register(name, open)
}

// Backends returns the names of the registered backends, sorted.
func Backends() []string { return openers.Names() }

// ParseSpec splits a backend spec "name[:arg]" into its name and argument.
func ParseSpec(spec string) (name, arg string) {
	name, arg, _ = strings.Cut(strings.TrimSpace(spec), ":")
	return name, arg
}

// Open builds a database from a spec "name[:arg]" — "inmem",
// "faiss:IVF1024,Flat", "pgvector:postgres://…" — for vectors of cfg.Dim
// dimensions serving cfg.Namespace. cfg.Arg is set from the spec. An
// unregistered name is an error wrapping [ErrUnknownBackend] that lists the
// registered ones.
func Open(ctx context.Context, spec string, cfg Config) (VectorDatabase, error) {
	name, arg := ParseSpec(spec)
	open, ok := openers.Get(name)
	if !ok {
		return nil, fmt.Errorf("%w %q (registered: %s; forgotten import?)", ErrUnknownBackend, name, strings.Join(Backends(), ", "))
	}
	if cfg.Dim <= 0 {
		return nil, fmt.Errorf("%w: vdb: open %q with dimension %d", ErrDimension, spec, cfg.Dim)
	}
	cfg.Arg = arg
	db, err := open(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("vdb: open %s: %w", name, err)
	}
	return db, nil
}
