//go:build !faiss

package faiss

import (
	"context"
	"fmt"
	"io"

	"github.com/agentmem/agentmem/vdb"
)

// Index is a Faiss index. In this build (without the faiss tag) it cannot be
// constructed: [New] always fails. Its methods exist so that code referring
// to *Index compiles in every build; on a nil or zero Index they return
// [vdb.ErrClosed].
type Index struct{}

var (
	_ vdb.VectorDatabase = (*Index)(nil)
	_ vdb.Persister      = (*Index)(nil)
	_ vdb.BatchSearcher  = (*Index)(nil)
)

// Option configures an Index. In this build options are accepted and ignored.
type Option func(*config)

type config struct{}

// WithFactory selects the Faiss index-factory string (default "IDMap,Flat").
func WithFactory(string) Option { return func(*config) {} }

// WithEfSearch sets HNSW's search-time candidate list size.
func WithEfSearch(int) Option { return func(*config) {} }

// WithNProbe sets how many IVF lists a search visits.
func WithNProbe(int) Option { return func(*config) {} }

// WithThreads sets the number of OpenMP threads Faiss uses.
func WithThreads(int) Option { return func(*config) {} }

// WithTrainSize sets how many vectors the first Add of an untrained index
// must bring before it trains automatically.
func WithTrainSize(int) Option { return func(*config) {} }

// New returns an error wrapping [ErrNotBuilt]: this binary was built without
// the faiss build tag.
func New(dim int, opts ...Option) (*Index, error) {
	return nil, fmt.Errorf("%w: rebuild with -tags faiss (needs cgo and libfaiss-dev; see scripts/install-faiss.sh)", ErrNotBuilt)
}

// Dim returns 0.
func (*Index) Dim() int { return 0 }

// Len returns 0.
func (*Index) Len() int { return 0 }

// Add returns an error wrapping [vdb.ErrClosed].
func (*Index) Add(context.Context, []int64, [][]float32) error { return errStub() }

// Search returns an error wrapping [vdb.ErrClosed].
func (*Index) Search(context.Context, []float32, int) ([]vdb.Result, error) { return nil, errStub() }

// SearchBatch returns an error wrapping [vdb.ErrClosed].
func (*Index) SearchBatch(context.Context, [][]float32, int) ([][]vdb.Result, error) {
	return nil, errStub()
}

// Delete returns an error wrapping [vdb.ErrClosed].
func (*Index) Delete(context.Context, ...int64) (int, error) { return 0, errStub() }

// Export returns an error wrapping [vdb.ErrClosed].
func (*Index) Export(context.Context, io.Writer) error { return errStub() }

// Import returns an error wrapping [vdb.ErrClosed].
func (*Index) Import(context.Context, io.Reader) error { return errStub() }

// Train returns an error wrapping [vdb.ErrClosed].
func (*Index) Train(context.Context, [][]float32) error { return errStub() }

// SetNProbe returns an error wrapping [vdb.ErrClosed].
func (*Index) SetNProbe(int) error { return errStub() }

// SetEfSearch returns an error wrapping [vdb.ErrClosed].
func (*Index) SetEfSearch(int) error { return errStub() }

// Factory returns "".
func (*Index) Factory() string { return "" }

// Trained returns false.
func (*Index) Trained() bool { return false }

// DefaultFactory is the index-factory string New uses without WithFactory.
const DefaultFactory = "IDMap,Flat"

// Close does nothing.
func (*Index) Close() error { return nil }

func errStub() error {
	return fmt.Errorf("%w (%w: rebuild with -tags faiss)", vdb.ErrClosed, ErrNotBuilt)
}
