package server

import (
	"context"

	"github.com/agentmem/agentmem/memory"
)

// Store is what the server needs of a memory: records with ids and
// namespaces (memory.Records), structured queries (memory.Querier), listing
// (memory.Lister) and a count. store.Store and *longterm.Memory implement
// it. It is declared here, by its consumer, so that any memory with these
// methods can be served.
//
// Implementations must be safe for concurrent use; errors should wrap the
// library's sentinels (memory.ErrNotFound, ErrInvalidArgument, ErrClosed,
// …), which the server maps to stable codes (see [Error]).
type Store interface {
	memory.Records
	memory.Querier
	memory.Lister
	// Len returns the number of stored records.
	Len() int
}

// ListOptions selects the records Store.List returns.
type ListOptions = memory.ListOptions

// failer is implemented by stores that can fail for good (longterm.Memory:
// a write panicked, so writes are refused until the store is reopened);
// /healthz reports the error.
type failer interface{ Err() error }

// chunker is implemented by stores that can count their indexed children
// (longterm.Memory); /v1/stats reports it when available.
type chunker interface{ Chunks() int }

// The interfaces below are implemented by stores kept on a database server
// (memory/postgres), whose error-free Get and Len cannot tell "not there"
// from "cannot tell": with them the server answers 503 unavailable, not
// 404 or a count of 0, while the database cannot be reached.

// pinger is implemented by stores that can check that their database
// answers; /readyz reports it.
type pinger interface {
	Ping(ctx context.Context) error
}

// getter is implemented by stores whose lookups can fail.
type getter interface {
	GetContext(ctx context.Context, id string) (memory.Record, bool, error)
}

// counter is implemented by stores whose counts can fail; /v1/stats and
// the store gauges use it.
type counter interface {
	Counts(ctx context.Context) (records, chunks int, err error)
}
