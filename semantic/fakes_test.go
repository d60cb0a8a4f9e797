package semantic_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/semantic"
	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/inmem"
)

// faultyDB is the default backend, inmem, with fault injection for Add.
// The backends themselves are tested by their conformance suite.
type faultyDB struct {
	*inmem.DB
	failAdd error // returned by Add when set
}

var _ vdb.VectorDatabase = (*faultyDB)(nil)

func newTestDB(t testing.TB, dim int) *faultyDB {
	t.Helper()
	db, err := inmem.New(dim)
	require.NoError(t, err)
	return &faultyDB{DB: db}
}

func (d *faultyDB) Add(ctx context.Context, ids []int64, vecs [][]float32) error {
	if d.failAdd != nil {
		return d.failAdd
	}
	return d.DB.Add(ctx, ids, vecs)
}

// has reports whether a vector is stored under id: a search for all of
// them must return it.
func (d *faultyDB) has(id int64) bool {
	n := d.Len()
	if n == 0 {
		return false
	}
	q := make([]float32, d.Dim())
	q[0] = 1
	res, err := d.Search(context.Background(), q, n)
	return err == nil && slices.ContainsFunc(res, func(r vdb.Result) bool { return r.ID == id })
}

// failingEmbedder wraps an embedder and fails every call with err.
type failingEmbedder struct {
	embed.Embedder
	err error
}

func (f failingEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, f.err
}

var errInjected = errors.New("injected failure")

// failingIndex is an index map whose Put always fails.
type failingIndex[V any] struct{ *semantic.MemIndexMap[V] }

func (f failingIndex[V]) Put(...semantic.Item[V]) error { return fmt.Errorf("put: %w", errInjected) }
