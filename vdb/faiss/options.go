package faiss

import (
	"fmt"

	"github.com/agentmem/agentmem/internal/errs"
	"github.com/agentmem/agentmem/internal/faissfmt"
	"github.com/agentmem/agentmem/vdb"
)

// DefaultFactory is the index-factory string [New] uses without
// [WithFactory]: exact inner-product search over every stored vector.
const DefaultFactory = faissfmt.DefaultFactory

// Option configures an Index.
type Option func(*config)

type config struct {
	factory   string
	efSearch  int
	nprobe    int
	threads   int
	trainSize int
}

// WithFactory selects the index by a Faiss index-factory string, such as
// "IVF1024,Flat" or "HNSW32,Flat" (default [DefaultFactory]). A leading
// "IDMap," is accepted and ignored: the Index maps IDs itself. Every index
// uses the inner-product metric on unit vectors, so scores are cosine
// similarities whatever the factory string. A string Faiss rejects makes
// [New] fail with an error wrapping [ErrFactory].
func WithFactory(description string) Option {
	return func(c *config) { c.factory = description }
}

// WithEfSearch sets an HNSW index's search-time candidate list size
// (Faiss' default is 16; larger is slower and finds more of the true
// neighbours). A search for k results explores at least k candidates
// whatever this value. New fails on an index that is not HNSW (nor IVF with
// an HNSW quantizer).
func WithEfSearch(n int) Option {
	return func(c *config) { c.efSearch = n }
}

// WithNProbe sets how many inverted lists of an IVF index a search visits
// (Faiss' default is 1; larger is slower and finds more of the true
// neighbours). New fails on an index that is not IVF.
func WithNProbe(n int) Option {
	return func(c *config) { c.nprobe = n }
}

// WithThreads sets the OpenMP threads Faiss uses inside this Index's calls.
// The default (0) is OMP_NUM_THREADS or the number of cores, except for
// calls whose work is BLAS matrix products (flat search of 20 or more
// queries at once, IVF training and adding), which get one OpenMP thread:
// OpenBLAS has its own thread pool, and OpenMP threads spin-waiting beside it
// made batched flat search 5-10× slower on a busy 2-core machine. On a
// machine that also serves many goroutines, 1 avoids oversubscribing the
// cores. The count is set on each call, so Indexes with different settings
// do not disturb each other. It does not limit OpenBLAS, whose pool is
// process-wide: set OPENBLAS_NUM_THREADS for that.
func WithThreads(n int) Option {
	return func(c *config) { c.threads = n }
}

// WithTrainSize sets how many vectors the first Add to an untrained index
// must bring for the Index to train on them automatically. The default is
// 39 × nlist for IVF (the number of points per centroid below which Faiss
// warns) and 1,000 for other trainable indexes (PQ, SQ, PCA…). A smaller
// first Add fails with [ErrNotTrained]; [Index.Train] trains explicitly on any
// sample.
func WithTrainSize(n int) Option {
	return func(c *config) { c.trainSize = n }
}

// New returns an empty Index of dimension dim. Without options it is an
// exact flat index ([DefaultFactory]). In a binary built without the faiss
// build tag (or with CGO_ENABLED=0) it fails with an error wrapping
// [ErrNotBuilt] and [vdb.ErrUnsupported].
func New(dim int, opts ...Option) (*Index, error) {
	c := config{factory: DefaultFactory}
	for _, o := range opts {
		o(&c)
	}
	if dim <= 0 {
		return nil, fmt.Errorf("faiss: dimension %d must be positive: %w", dim, vdb.ErrDimension)
	}
	if c.efSearch < 0 || c.nprobe < 0 || c.threads < 0 || c.trainSize < 0 {
		return nil, fmt.Errorf("faiss: negative option (efSearch %d, nprobe %d, threads %d, train size %d): %w",
			c.efSearch, c.nprobe, c.threads, c.trainSize, errs.InvalidArgument)
	}
	return newIndex(dim, c)
}
