//go:build !faiss || !cgo

package faiss

import (
	"context"
	"fmt"
	"io"

	"github.com/agentmem/agentmem/vdb"
)

// index is what an Index keeps in a build without Faiss: nothing, since
// none can be made.
type index struct{}

// newIndex fails: this binary was built without the faiss tag or without cgo.
func newIndex(int, config) (*Index, error) { return nil, errNotBuilt() }

// errNotBuilt says how to get a binary with the backend.
func errNotBuilt() error {
	return fmt.Errorf("%w: rebuild with -tags faiss (and libfaiss-dev, with cgo enabled; see scripts/install-faiss.sh): %w",
		ErrNotBuilt, vdb.ErrUnsupported)
}

// errStub is what the methods of an Index return in this build: there is no
// Index to use, as after Close.
func errStub() error { return fmt.Errorf("faiss: %w (%w)", vdb.ErrClosed, errNotBuilt()) }

func (*Index) liveLen() int                                    { return 0 }
func (*Index) trained() bool                                   { return false }
func (*Index) close() error                                    { return nil }
func (*Index) setParam(string, int) error                      { return errStub() }
func (*Index) train(context.Context, [][]float32) error        { return errStub() }
func (*Index) add(context.Context, []int64, [][]float32) error { return errStub() }
func (*Index) del(context.Context, []int64) (int, error)       { return 0, errStub() }
func (*Index) search(context.Context, []float32, int) ([]vdb.Result, error) {
	return nil, errStub()
}
func (*Index) searchBatch(context.Context, [][]float32, int) ([][]vdb.Result, error) {
	return nil, errStub()
}
func (*Index) exportTo(context.Context, io.Writer) error   { return errStub() }
func (*Index) importFrom(context.Context, io.Reader) error { return errStub() }
