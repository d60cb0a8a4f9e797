//go:build !faiss

package faiss_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/faiss"
)

func TestNewWithoutTag(t *testing.T) {
	ix, err := faiss.New(8, faiss.WithFactory("HNSW32,Flat"))
	require.Nil(t, ix, "New must not return an index in a build without the faiss tag")
	require.ErrorIs(t, err, faiss.ErrNotBuilt)
	require.ErrorContains(t, err, "rebuild with -tags faiss")

	var zero *faiss.Index
	_, err = zero.Search(t.Context(), []float32{1}, 1)
	require.ErrorIs(t, err, vdb.ErrClosed)
	require.NoError(t, zero.Close())
}

func TestReadHeaderWithoutTag(t *testing.T) {
	_, err := faiss.ReadHeader(strings.NewReader("not a faiss stream at all"))
	require.ErrorIs(t, err, vdb.ErrVersion)
	_, err = faiss.ReadHeader(strings.NewReader("AMF"))
	require.ErrorIs(t, err, vdb.ErrCorrupt)
}
