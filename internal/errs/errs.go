// Package errs holds the one set of sentinel errors that every agentmem
// package wraps. Callers never import it: the contract packages re-export
// each value under its public name (vdb.ErrCorrupt, embed.ErrEmptyText,
// memory.ErrClosed, …), and because they are the same values, an error
// returned by any layer matches the sentinel of every other layer under
// errors.Is — as os.ErrNotExist is fs.ErrNotExist.
//
// The texts carry the "agentmem:" prefix; packages wrap them with their own
// prefix and the facts (file, offset, id, got/want).
package errs

import "errors"

var (
	// Corrupt: stored data (a file, a stream, a record) fails its checks.
	Corrupt = errors.New("agentmem: corrupt data")
	// Version: stored data has a format version or magic this build cannot read.
	Version = errors.New("agentmem: unsupported format version")
	// Closed: a value was used after Close.
	Closed = errors.New("agentmem: closed")
	// Locked: a store is held by another process (or another open handle).
	Locked = errors.New("agentmem: store is locked by another process")
	// EmptyInput: a text, a round, a query or a batch holds nothing to work on.
	EmptyInput = errors.New("agentmem: empty input")
	// Dimension: a vector's length differs from the one expected.
	Dimension = errors.New("agentmem: dimension mismatch")
	// EmbedderMismatch: a store was opened with another embedder than the
	// one that built it.
	EmbedderMismatch = errors.New("agentmem: store was built by another embedder")
	// InvalidArgument: an option, a parameter or a query field is out of range.
	InvalidArgument = errors.New("agentmem: invalid argument")
	// NotFound: no item has the given id.
	NotFound = errors.New("agentmem: not found")
	// Unsupported: the operation or backend is not available in this build
	// or for this kind of store.
	Unsupported = errors.New("agentmem: unsupported")
	// TooLarge: an input exceeds a documented size limit.
	TooLarge = errors.New("agentmem: input too large")
)
