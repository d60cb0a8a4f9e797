//go:build !faiss || !cgo

package faiss_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/faiss"
)

func TestNewWithoutTag(t *testing.T) {
	ix, err := faiss.New(8, faiss.WithFactory("HNSW32,Flat"))
	require.Nil(t, ix, "New must not return an index in a build without the faiss tag")
	require.ErrorIs(t, err, faiss.ErrNotBuilt)
	require.ErrorIs(t, err, vdb.ErrUnsupported)
	require.ErrorContains(t, err, "rebuild with -tags faiss (and libfaiss-dev")

	var zero *faiss.Index
	_, err = zero.Search(t.Context(), []float32{1}, 1)
	require.ErrorIs(t, err, vdb.ErrClosed)
	require.NoError(t, zero.Close())
	require.Zero(t, zero.Len())
	require.Zero(t, zero.Dim())
}

func TestOpenWithoutTag(t *testing.T) {
	for _, spec := range []string{"faiss", "faiss:HNSW32,Flat?efSearch=64"} {
		db, err := vdb.Open(t.Context(), spec, vdb.Config{Dim: 8})
		require.Nil(t, db, spec)
		require.ErrorIs(t, err, vdb.ErrUnsupported, spec)
		require.ErrorContains(t, err, "rebuild with -tags faiss", spec)
	}
}
