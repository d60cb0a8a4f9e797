package semantic_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/semantic"
	"github.com/agentmem/agentmem/vdb"
)

// bruteDB is a minimal exact VectorDatabase for these tests, with fault
// injection. The real backends have their own conformance suite.
type bruteDB struct {
	mu      sync.Mutex
	dim     int
	vecs    map[int64][]float32
	closed  bool
	failAdd error // returned by Add when set
}

var _ vdb.VectorDatabase = (*bruteDB)(nil)

func newBrute(dim int) *bruteDB { return &bruteDB{dim: dim, vecs: map[int64][]float32{}} }

func (d *bruteDB) Dim() int { return d.dim }

func (d *bruteDB) Len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.vecs)
}

func (d *bruteDB) Add(_ context.Context, ids []int64, vecs [][]float32) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return vdb.ErrClosed
	}
	if d.failAdd != nil {
		return d.failAdd
	}
	if len(ids) != len(vecs) {
		return vdb.ErrInvalidID
	}
	norm := make([][]float32, len(vecs))
	for i, v := range vecs {
		if len(v) != d.dim {
			return vdb.ErrDimension
		}
		norm[i] = make([]float32, d.dim)
		if err := vdb.Normalize(norm[i], v); err != nil {
			return err
		}
	}
	for i, id := range ids {
		d.vecs[id] = norm[i]
	}
	return nil
}

func (d *bruteDB) Search(_ context.Context, q []float32, k int) ([]vdb.Result, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, vdb.ErrClosed
	}
	if k <= 0 {
		return nil, vdb.ErrInvalidK
	}
	qn := make([]float32, len(q))
	if err := vdb.Normalize(qn, q); err != nil {
		return nil, err
	}
	res := []vdb.Result{}
	for id, v := range d.vecs {
		var s float32
		for i := range v {
			s += v[i] * qn[i]
		}
		res = append(res, vdb.Result{ID: id, Score: s})
	}
	slices.SortFunc(res, func(a, b vdb.Result) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return res[:min(k, len(res))], nil
}

func (d *bruteDB) Delete(_ context.Context, ids ...int64) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return 0, vdb.ErrClosed
	}
	n := 0
	for _, id := range ids {
		if _, ok := d.vecs[id]; ok {
			delete(d.vecs, id)
			n++
		}
	}
	return n, nil
}

func (d *bruteDB) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	return nil
}

func (d *bruteDB) has(id int64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.vecs[id]
	return ok
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
