package vdb

import (
	"errors"

	"github.com/agentmem/agentmem/internal/errs"
)

// Errors shared by every backend. Backends wrap them with facts
// (fmt.Errorf("%w: got %d, want %d", vdb.ErrDimension, got, want)); callers
// test them with errors.Is.
//
// ErrDimension, ErrClosed, ErrCorrupt and ErrVersion are agentmem's shared
// sentinels: the same values as embed's and memory's of the same names, so an
// error from any layer matches any of them.
var (
	// ErrDimension: a vector's length differs from the database's Dim, or a
	// saved stream was written with another dimension.
	ErrDimension = errs.Dimension
	// ErrInvalidVector: a vector holds NaN or ±Inf, or is all zeros (it has
	// no direction, so no cosine).
	ErrInvalidVector = errors.New("vdb: invalid vector (NaN, Inf or zero)")
	// ErrInvalidK: Search was asked for k ≤ 0 results.
	ErrInvalidK = errors.New("vdb: k must be positive")
	// ErrInvalidID: an ID is negative, or an Add batch has len(ids) != len(vecs).
	ErrInvalidID = errors.New("vdb: invalid id")
	// ErrClosed: the database was used after Close.
	ErrClosed = errs.Closed
	// ErrCorrupt: a saved stream is truncated, fails its checksum, or does
	// not start with the backend's magic.
	ErrCorrupt = errs.Corrupt
	// ErrVersion: a saved stream has a newer format version than this build
	// reads.
	ErrVersion = errs.Version
	// ErrUnknownBackend: Open was given a spec whose backend is not
	// registered (the error lists the registered ones).
	ErrUnknownBackend = errors.New("vdb: unknown backend")
	// ErrUnsupported: a backend is registered but cannot work in this build
	// (for example Faiss in a binary built without -tags faiss).
	ErrUnsupported = errs.Unsupported
)
