// Package vdb defines the VectorDatabase contract that every agentmem vector
// backend implements, the errors they share, and helpers that work with any
// backend.
//
// A backend must implement [VectorDatabase]. It may also implement the
// optional interfaces [Persister] (stream export/import, used by [Save] and
// [Load]), [MinScoreSearcher] (a similarity cut-off applied inside the scan) and
// [BatchSearcher] (many queries in one call). Helpers such as [SearchMinScore]
// and [SearchBatch] use the optional interface when present and fall back to
// the required methods otherwise, as io/fs does for ReadFileFS.
//
// Backends live in sub-packages: vdb/inmem (pure Go, the default) and
// vdb/faiss (cgo, build tag faiss). vdb/vdbtest is the conformance suite they
// all pass.
//
// Scores are cosine similarities in [-1, 1]: vectors are L2-normalised once,
// on the way in, by [Normalize], and scored by inner product.
package vdb

import (
	"context"
	"io"
)

// A VectorDatabase stores vectors under caller-chosen IDs and returns the
// nearest ones to a query by cosine similarity. Implementations are safe for
// concurrent use by multiple goroutines.
//
// IDs must be ≥ 0 (Faiss reserves -1). Adding a vector under an ID that is
// already present replaces the stored vector. Vectors are normalised on the
// way in; the caller's slices are never retained, and returned slices never
// alias internal memory.
type VectorDatabase interface {
	// Dim returns the dimension every stored and query vector must have.
	Dim() int
	// Len returns the number of stored vectors.
	Len() int
	// Add stores vecs[i] under ids[i]. The same ID replaces. The batch is
	// validated before anything is stored: on error nothing was added.
	// Errors wrap ErrDimension, ErrInvalidVector, ErrInvalidID or ErrClosed.
	Add(ctx context.Context, ids []int64, vecs [][]float32) error
	// Search returns at most k results in order of descending score, ties
	// broken by ascending ID. An empty database returns an empty slice and a
	// nil error; k > Len() returns Len() results. k ≤ 0 is ErrInvalidK.
	Search(ctx context.Context, query []float32, k int) ([]Result, error)
	// Delete removes the given IDs and reports how many were present.
	// Unknown IDs are not an error.
	Delete(ctx context.Context, ids ...int64) (int, error)
	// Close releases the database's resources. It is idempotent; every other
	// method returns ErrClosed afterwards.
	Close() error
}

// Result is one search hit.
type Result struct {
	ID    int64
	Score float32 // cosine similarity in [-1, 1]
}

// Persister is an optional interface for backends that can write their
// contents to a stream and read them back. Import replaces the database's
// contents. Implementations write a versioned header first and check it before
// anything else on the way in; a stream that is truncated or corrupted yields
// an error wrapping ErrCorrupt, one from a newer format ErrVersion, one of
// another dimension ErrDimension.
type Persister interface {
	Export(ctx context.Context, w io.Writer) error
	Import(ctx context.Context, r io.Reader) error
}

// MinScoreSearcher is an optional interface for backends that can apply a
// minimum score during the scan rather than after it.
type MinScoreSearcher interface {
	// SearchMinScore is Search restricted to results with Score ≥ minScore.
	SearchMinScore(ctx context.Context, query []float32, k int, minScore float32) ([]Result, error)
}

// BatchSearcher is an optional interface for backends that answer many
// queries in one call faster than one at a time (Faiss' BLAS path).
type BatchSearcher interface {
	// SearchBatch returns, for each query, what Search would.
	SearchBatch(ctx context.Context, queries [][]float32, k int) ([][]Result, error)
}
