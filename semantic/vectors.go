package semantic

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentmem/agentmem/vdb"
)

// Vectors is the lowest rung of the chain, under [SemanticMap]: a vector
// database holding vectors the caller computed, under IDs the caller
// chose, searched by a query vector with a minimum score. A memory that
// embeds in batches before it logs, and replays vectors from its own log
// without re-embedding (memory/longterm keeps one Vectors per namespace),
// uses it where a SemanticMap would embed for it.
//
// It is safe for concurrent use if its database is (every vdb backend is).
type Vectors struct {
	db   vdb.VectorDatabase
	spec string
}

// OpenVectors opens a vector database for vectors of cfg.Dim dimensions
// serving cfg.Namespace through the backend registry (vdb.Open with spec,
// e.g. "inmem" or "faiss:HNSW32,Flat"). A backend that opens with another
// dimension than asked is an error wrapping vdb.ErrDimension.
func OpenVectors(ctx context.Context, spec string, cfg vdb.Config) (*Vectors, error) {
	db, err := vdb.Open(ctx, spec, cfg)
	if err != nil {
		return nil, fmt.Errorf("semantic: open %s vectors: %w", spec, err)
	}
	if db.Dim() != cfg.Dim {
		db.Close()
		return nil, fmt.Errorf("semantic: %s: %w: opened with %d, want %d", spec, vdb.ErrDimension, db.Dim(), cfg.Dim)
	}
	return &Vectors{db: db, spec: spec}, nil
}

// Add stores vecs under ids (replacing vectors already stored under them).
func (v *Vectors) Add(ctx context.Context, ids []int64, vecs [][]float32) error {
	return v.db.Add(ctx, ids, vecs)
}

// Delete removes the given ids and reports how many were present.
func (v *Vectors) Delete(ctx context.Context, ids ...int64) (int, error) {
	return v.db.Delete(ctx, ids...)
}

// Search returns at most k stored vectors most similar to query, each with
// a score of at least minScore, best first.
func (v *Vectors) Search(ctx context.Context, query []float32, k int, minScore float32) ([]vdb.Result, error) {
	return vdb.SearchMinScore(ctx, v.db, query, k, minScore)
}

// SearchBatch returns, for each of queries, the k stored vectors most
// similar to it, best first (vdb.SearchBatch: one call, which a backend
// with a batch kernel answers in one pass over its vectors).
func (v *Vectors) SearchBatch(ctx context.Context, queries [][]float32, k int) ([][]vdb.Result, error) {
	return vdb.SearchBatch(ctx, v.db, queries, k)
}

// Len returns the number of stored vectors.
func (v *Vectors) Len() int { return v.db.Len() }

// Spec returns the backend spec the vectors were opened with.
func (v *Vectors) Spec() string { return v.spec }

// CanSave reports whether the backend can write snapshots (vdb.Persister).
func (v *Vectors) CanSave() bool {
	_, ok := v.db.(vdb.Persister)
	return ok
}

// Save writes a snapshot of the vectors to the file at path, atomically. A
// backend that cannot is an error wrapping errors.ErrUnsupported.
func (v *Vectors) Save(ctx context.Context, path string) error {
	return vdb.Save(ctx, v.db, path)
}

// Load replaces the vectors with the snapshot in the file at path.
func (v *Vectors) Load(ctx context.Context, path string) error {
	return vdb.Load(ctx, v.db, path)
}

// Close closes the vector database.
func (v *Vectors) Close() error {
	if err := v.db.Close(); err != nil && !errors.Is(err, vdb.ErrClosed) {
		return err
	}
	return nil
}
