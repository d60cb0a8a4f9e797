package vdb

import "errors"

// Errors shared by every backend. Backends wrap them with facts
// (fmt.Errorf("%w: got %d, want %d", vdb.ErrDimension, got, want)); callers
// test them with errors.Is.
var (
	// ErrDimension: a vector's length differs from the database's Dim, or a
	// saved stream was written with another dimension.
	ErrDimension = errors.New("vdb: dimension mismatch")
	// ErrInvalidVector: a vector holds NaN or ±Inf, or is all zeros (it has
	// no direction, so no cosine).
	ErrInvalidVector = errors.New("vdb: invalid vector (NaN, Inf or zero)")
	// ErrInvalidK: Search was asked for k ≤ 0 results.
	ErrInvalidK = errors.New("vdb: k must be positive")
	// ErrInvalidID: an ID is negative, or an Add batch has len(ids) != len(vecs).
	ErrInvalidID = errors.New("vdb: invalid id")
	// ErrClosed: the database was used after Close.
	ErrClosed = errors.New("vdb: database is closed")
	// ErrCorrupt: a saved stream is truncated or fails its checksum.
	ErrCorrupt = errors.New("vdb: corrupt data")
	// ErrVersion: a saved stream has an unknown magic or a newer format
	// version than this build reads.
	ErrVersion = errors.New("vdb: unsupported format version")
)
