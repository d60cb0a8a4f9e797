package vdbtest

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/internal/testvec"
)

func (s *suite) testDeleteUnknownIsNoop(t *testing.T) {
	if s.cfg.noDelete {
		s.checkNoDelete(t)
		return
	}
	ctx := t.Context()
	db := s.newDB(t, 8)
	r := rand.New(rand.NewPCG(1, 2))
	n, err := db.Delete(ctx, 1, 2, 3)
	require.NoError(t, err, "rule: deleting unknown IDs is not an error")
	assert.Equal(t, 0, n, "rule: Delete reports how many IDs were present")
	require.NoError(t, db.Add(ctx, []int64{1}, randVecs(r, 1, 8)))
	n, err = db.Delete(ctx, 5, -1)
	require.NoError(t, err, "rule: deleting unknown IDs is not an error")
	assert.Equal(t, 0, n, "rule: Delete reports how many IDs were present")
	n, err = db.Delete(ctx)
	require.NoError(t, err, "rule: Delete with no IDs is a no-op")
	assert.Equal(t, 0, n)
	assert.Equal(t, 1, db.Len(), "rule: deleting unknown IDs changes nothing")
}

func (s *suite) checkNoDelete(t *testing.T) {
	db := s.newDB(t, 8)
	_, err := db.Delete(t.Context(), 1)
	assert.ErrorIs(t, err, errors.ErrUnsupported, "rule: a backend declared NoDelete returns errors.ErrUnsupported from Delete")
}

func (s *suite) testDelete(t *testing.T) {
	if s.cfg.noDelete {
		s.checkNoDelete(t)
		return
	}
	const dim = 16
	ctx, db, r := s.start(t, dim)
	vs := randVecs(r, 10, dim)
	o := addWithOracle(t, ctx, db, testvec.IDs(0, 10), vs)

	n, err := db.Delete(ctx, 0, 9, 4, 4, 42)
	require.NoError(t, err)
	assert.Equal(t, 3, n, "rule: Delete reports how many distinct IDs were present")
	o.del(0, 9, 4)
	assert.Equal(t, 7, db.Len(), "rule: Delete removes the vectors")
	for _, id := range []int64{0, 9, 4} {
		res, err := db.Search(ctx, vs[id], 10)
		require.NoError(t, err)
		assert.NotContains(t, ids(res), id, "rule: a deleted ID is never returned by Search")
		s.checkMatches(t, o, vs[id], 10, res)
	}
	// The rest are intact: each still finds itself.
	for id := range o.vecs {
		res, err := db.Search(ctx, vs[id], 1)
		require.NoError(t, err)
		require.Len(t, res, 1)
		assert.Equal(t, id, res[0].ID, "rule: Delete leaves other vectors intact")
	}
	// A deleted ID can be added again.
	require.NoError(t, db.Add(ctx, []int64{9}, vs[2:3]))
	assert.Equal(t, 8, db.Len())
	res, err := db.Search(ctx, vs[2], 2)
	require.NoError(t, err)
	assert.ElementsMatch(t, []int64{2, 9}, ids(res), "rule: a deleted ID can be added again")

	// Delete everything.
	n, err = db.Delete(ctx, testvec.IDs(0, 10)...)
	require.NoError(t, err)
	assert.Equal(t, 8, n)
	assert.Equal(t, 0, db.Len(), "rule: deleting every ID empties the database")
	res, err = db.Search(ctx, vs[1], 3)
	require.NoError(t, err)
	assert.Empty(t, res, "rule: an emptied database returns no results")
}
