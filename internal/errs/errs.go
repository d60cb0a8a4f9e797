// Package errs holds the one set of sentinel errors that every agentmem
// package wraps. Callers never import it: the contract packages re-export
// each value under its public name (vdb.ErrCorrupt, embed.ErrEmptyText,
// memory.ErrClosed, …), and because they are the same values, an error
// returned by any layer matches the sentinel of every other layer under
// errors.Is — as os.ErrNotExist is fs.ErrNotExist.
//
// The texts carry no prefix: a package wraps them with its own name and
// the facts (file, offset, id, got/want), so that a message names one
// package once ("longterm: invalid argument: …"), and the CLI puts
// "agentmem: " before it.
package errs

import "errors"

var (
	// Corrupt: stored data (a file, a stream, a record) fails its checks.
	Corrupt = errors.New("corrupt data")
	// Version: stored data has a format version or magic this build cannot read.
	Version = errors.New("unsupported format version")
	// Closed: a value was used after Close.
	Closed = errors.New("closed")
	// Locked: a store is held by another process (or another open handle).
	Locked = errors.New("store is locked by another process")
	// EmptyInput: a text, a round, a query or a batch holds nothing to work on.
	EmptyInput = errors.New("empty input")
	// Dimension: a vector's length differs from the one expected.
	Dimension = errors.New("dimension mismatch")
	// EmbedderMismatch: a store was opened with another embedder than the
	// one that built it.
	EmbedderMismatch = errors.New("store was built by another embedder")
	// InvalidArgument: an option, a parameter or a query field is out of range.
	InvalidArgument = errors.New("invalid argument")
	// NotFound: no item has the given id.
	NotFound = errors.New("not found")
	// Unsupported: the operation or backend is not available in this build
	// or for this kind of store.
	Unsupported = errors.New("unsupported")
	// TooLarge: an input exceeds a documented size limit.
	TooLarge = errors.New("input too large")
	// Superseded: a record to supersede or update is no longer current (a
	// newer version replaced it meanwhile).
	Superseded = errors.New("superseded")
	// Duplicate: a write was refused because a stored record says the
	// same (a near-duplicate, when the store refuses them).
	Duplicate = errors.New("near-duplicate of a stored record")
	// Unavailable: a store's server (PostgreSQL) cannot be reached or the
	// connection was lost; the data is not known to be gone, and the call
	// may succeed when retried.
	Unavailable = errors.New("unavailable")
)
