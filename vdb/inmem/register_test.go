package inmem_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/internal/errs"
	"github.com/agentmem/agentmem/vdb"
	_ "github.com/agentmem/agentmem/vdb/inmem"
)

func TestOpenSpecs(t *testing.T) {
	t.Parallel()

	ctx := t.Context()
	vecs := [][]float32{{1, 0, 0, 0}, {0.6, 0.8, 0, 0}, {0, 0, 1, 0}}
	var want []vdb.Result
	for i, spec := range []string{"inmem", "inmem:none", "inmem:int8", "inmem:int8,cols", "inmem:int8,cols,ivf=1000"} {
		db, err := vdb.Open(ctx, spec, vdb.Config{Dim: 4})
		require.NoError(t, err, spec)
		require.NoError(t, db.Add(ctx, []int64{1, 2, 3}, vecs), spec)
		got, err := db.Search(ctx, []float32{1, 0.1, 0, 0}, 2)
		require.NoError(t, err, spec)
		if i == 0 {
			want = got
		}
		assert.Equal(t, want, got, "%s: the codes change no result", spec)
		require.NoError(t, db.Close())
	}
	_, err := vdb.Open(ctx, "inmem:int4", vdb.Config{Dim: 4})
	assert.ErrorIs(t, err, errs.InvalidArgument)
	assert.ErrorContains(t, err, `"int4"`)
	for _, bad := range []string{"inmem:none,cols", "inmem:int8,cols=2"} {
		_, err = vdb.Open(ctx, bad, vdb.Config{Dim: 4})
		assert.ErrorIs(t, err, errs.InvalidArgument, bad)
	}
}
