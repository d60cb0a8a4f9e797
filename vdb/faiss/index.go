package faiss

import (
	"context"
	"io"

	"github.com/agentmem/agentmem/vdb"
)

// Index is a vdb.VectorDatabase backed by a Faiss index. It is safe for
// concurrent use by multiple goroutines: searches run concurrently under a
// read lock (Faiss CPU indexes allow concurrent searches); Add, Delete,
// Train, Import and Close take the write lock.
//
// The zero Index is not usable; make one with [New]. An Index holds C++
// memory until [Index.Close]; a cleanup frees it if an unreachable Index was
// never closed, but that is a safety net, not the way to release it. In a
// binary built without the faiss tag no Index can be made, and the methods
// of a nil or zero one fail with [vdb.ErrClosed].
//
// Deletion. Flat, IVF and the quantizer-only indexes (PQ, SQ…) remove
// vectors physically. HNSW cannot (Faiss 1.7.3 has no remove_ids for it), so
// there an Index keeps deletion true for callers with tombstones: each Add
// gets a fresh internal label, and a replaced or deleted vector stays in the
// graph, marked dead, and is filtered out of results. The cost: the dead
// vectors keep their memory and their place in the graph, Len counts only
// the live ones, and every Search asks Faiss for k + (number of dead
// vectors) neighbours, so search time grows with deletions. When dead
// vectors are a large share, add the live ones to a new Index. (When a
// search's graph walk finds fewer than k live vectors, it falls back to a
// scan of the stored vectors, so k > Len() still returns Len() results.)
type Index struct {
	dim       int
	factory   string // as given to WithFactory
	canonical string // without a leading IDMap: what saved streams record
	cfg       config
	index     // this build's state: the Faiss handle (faiss.go) or nothing (stub.go)
}

var (
	_ vdb.VectorDatabase = (*Index)(nil)
	_ vdb.Persister      = (*Index)(nil)
	_ vdb.BatchSearcher  = (*Index)(nil)
)

// Dim returns the dimension of the stored vectors.
func (ix *Index) Dim() int {
	if ix == nil {
		return 0
	}
	return ix.dim
}

// Factory returns the index-factory string the Index was made with.
func (ix *Index) Factory() string {
	if ix == nil {
		return ""
	}
	return ix.factory
}

// Len returns the number of stored (live) vectors, 0 after Close.
func (ix *Index) Len() int { return ix.liveLen() }

// Trained reports whether the index is trained (always true for Flat and
// HNSW over Flat).
func (ix *Index) Trained() bool { return ix.trained() }

// Close frees the Faiss index. It is idempotent; other methods return
// [vdb.ErrClosed] afterwards.
func (ix *Index) Close() error { return ix.close() }

// SetNProbe changes how many inverted lists an IVF index's searches visit
// (see [WithNProbe]), without rebuilding. It fails with an error wrapping
// [ErrFactory] on an index that is not IVF.
func (ix *Index) SetNProbe(n int) error { return ix.setParam("nprobe", n) }

// SetEfSearch changes an HNSW index's search-time candidate list size (see
// [WithEfSearch]), without rebuilding. It fails with an error wrapping
// [ErrFactory] on an index that is not HNSW.
func (ix *Index) SetEfSearch(n int) error { return ix.setParam("efSearch", n) }

// Train trains an index that needs it (IVF, PQ…) on vecs, a sample of the
// data to come (normalised like everything else). For IVF it needs at least
// as many vectors as lists, and 39 per list to keep Faiss from warning.
// Training an index that is already trained does nothing.
func (ix *Index) Train(ctx context.Context, vecs [][]float32) error { return ix.train(ctx, vecs) }

// Add stores vecs[i] under ids[i]; an ID already present is replaced, and
// within one batch the last vector for an ID wins. The batch is validated
// before anything is stored. An untrained index trains on the batch first if
// it holds at least the train size ([WithTrainSize]); otherwise Add fails
// with [ErrNotTrained].
//
// On an index that is not empty, Add first removes the batch's IDs (Faiss
// would otherwise keep both vectors), which scans the whole id list: add in
// batches rather than one vector at a time when loading much data. Once the
// batch is validated, Add can fail only if Faiss does (out of memory); the
// replaced vectors are gone by then.
func (ix *Index) Add(ctx context.Context, ids []int64, vecs [][]float32) error {
	return ix.add(ctx, ids, vecs)
}

// Delete removes the given IDs and reports how many were present. Unknown
// and negative IDs are ignored.
func (ix *Index) Delete(ctx context.Context, ids ...int64) (int, error) { return ix.del(ctx, ids) }

// Search returns the k stored vectors most similar to query, best first,
// ties by ascending ID. For an approximate index these are the best the
// index finds, with their true cosine scores.
func (ix *Index) Search(ctx context.Context, query []float32, k int) ([]vdb.Result, error) {
	return ix.search(ctx, query, k)
}

// SearchBatch answers many queries in one Faiss call. For the flat index this
// is the fast path: from 20 queries on, Faiss scores them all with one
// matrix multiplication (BLAS) instead of a scan per query.
func (ix *Index) SearchBatch(ctx context.Context, queries [][]float32, k int) ([][]vdb.Result, error) {
	return ix.searchBatch(ctx, queries, k)
}

// Export writes the index to w: our header, then Faiss' own serialization.
// The index is serialized into C memory under the read lock (searches go on;
// writers wait), then written to w without holding the lock.
func (ix *Index) Export(ctx context.Context, w io.Writer) error { return ix.exportTo(ctx, w) }

// Import replaces the index's contents with a stream [Index.Export] wrote.
// The stream must come from an Index of the same dimension (else the error
// wraps [vdb.ErrDimension]) and factory string ([ErrFactory]); a truncated or
// damaged stream, or one that is not an exported Faiss index, fails with
// [vdb.ErrCorrupt], one from a newer format version with [vdb.ErrVersion].
// On error the index is unchanged. The stream is read and parsed without
// holding the lock; only the swap takes the write lock. Search options
// (nprobe, efSearch) of this Index apply to the loaded index.
func (ix *Index) Import(ctx context.Context, r io.Reader) error { return ix.importFrom(ctx, r) }
