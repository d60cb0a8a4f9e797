package vdb

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/agentmem/agentmem/internal/atomicfile"
)

// SearchMinScore returns at most k results with Score ≥ minScore. It uses the
// backend's [MinScoreSearcher] when it has one, and otherwise filters the
// results of Search.
func SearchMinScore(ctx context.Context, db VectorDatabase, query []float32, k int, minScore float32) ([]Result, error) {
	if s, ok := db.(MinScoreSearcher); ok {
		return s.SearchMinScore(ctx, query, k, minScore)
	}
	res, err := db.Search(ctx, query, k)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, r := range res {
		if r.Score >= minScore {
			res[n] = r
			n++
		}
	}
	return res[:n], nil
}

// SearchBatch answers many queries. It uses the backend's [BatchSearcher] when
// it has one, and otherwise calls Search once per query, stopping at the first
// error.
func SearchBatch(ctx context.Context, db VectorDatabase, queries [][]float32, k int) ([][]Result, error) {
	if s, ok := db.(BatchSearcher); ok {
		return s.SearchBatch(ctx, queries, k)
	}
	// Check what Search would, so that an empty batch fails as a full one does.
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("vdb: search batch: %w", err)
	}
	if k <= 0 {
		return nil, fmt.Errorf("%w: got %d", ErrInvalidK, k)
	}
	out := make([][]Result, len(queries))
	for i, q := range queries {
		res, err := db.Search(ctx, q, k)
		if err != nil {
			return nil, fmt.Errorf("query %d: %w", i, err)
		}
		out[i] = res
	}
	return out, nil
}

// Save writes db to path atomically: to a temporary file in the same
// directory, fsynced, renamed over path, and the directory fsynced, so that
// after a crash path holds either the old or the new contents, never a torn
// file. db must implement [Persister]; otherwise the error wraps
// errors.ErrUnsupported.
func Save(ctx context.Context, db VectorDatabase, path string) error {
	p, ok := db.(Persister)
	if !ok {
		return fmt.Errorf("vdb: %T cannot save: %w", db, errors.ErrUnsupported)
	}
	return atomicfile.Write(path, func(w *bufio.Writer) error {
		return p.Export(ctx, w)
	})
}

// Load replaces db's contents with what [Save] wrote to path. db must
// implement [Persister]; otherwise the error wraps errors.ErrUnsupported.
// Errors name the file.
func Load(ctx context.Context, db VectorDatabase, path string) error {
	p, ok := db.(Persister)
	if !ok {
		return fmt.Errorf("vdb: %T cannot load: %w", db, errors.ErrUnsupported)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("vdb: load: %w", err)
	}
	defer f.Close()
	if err := p.Import(ctx, bufio.NewReaderSize(f, 1<<20)); err != nil {
		return fmt.Errorf("vdb: load %s: %w", path, err)
	}
	return nil
}
