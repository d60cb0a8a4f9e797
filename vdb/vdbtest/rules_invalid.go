package vdbtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/vdb"
)

func (s *suite) testDimensionMismatch(t *testing.T) {
	const dim = 8
	ctx, db, r := s.start(t, dim)
	require.NoError(t, db.Add(ctx, []int64{1}, randVecs(r, 1, dim)))
	for _, d := range []int{0, 1, dim - 1, dim + 1, 2 * dim} {
		t.Run(fmt.Sprintf("len=%d", d), func(t *testing.T) {
			v := make([]float32, d)
			for i := range v {
				v[i] = 1
			}
			err := db.Add(ctx, []int64{2}, [][]float32{v})
			assert.ErrorIs(t, err, vdb.ErrDimension, "rule: Add of a vector of the wrong length fails with ErrDimension")
			err = db.Add(ctx, []int64{2, 3}, [][]float32{randVecs(r, 1, dim)[0], v})
			assert.ErrorIs(t, err, vdb.ErrDimension, "rule: Add of a batch holding a vector of the wrong length fails with ErrDimension")
			assert.Equal(t, 1, db.Len(), "rule: a failed Add changes nothing")
			_, err = db.Search(ctx, v, 1)
			assert.ErrorIs(t, err, vdb.ErrDimension, "rule: Search with a query of the wrong length fails with ErrDimension")
		})
	}
	_, err := db.Search(ctx, nil, 1)
	assert.ErrorIs(t, err, vdb.ErrDimension, "rule: Search with a nil query fails with ErrDimension")
}

func (s *suite) testInvalidVector(t *testing.T) {
	const dim = 8
	ctx, db, r := s.start(t, dim)
	good := randVecs(r, 1, dim)[0]
	require.NoError(t, db.Add(ctx, []int64{1}, [][]float32{good}))
	bad := func(x float32, at int) []float32 {
		v := slices.Clone(good)
		v[at] = x
		return v
	}
	for _, tc := range []struct {
		name string
		v    []float32
	}{
		{"NaN", bad(float32(math.NaN()), 3)},
		{"PosInf", bad(float32(math.Inf(1)), 0)},
		{"NegInf", bad(float32(math.Inf(-1)), dim-1)},
		{"Zero", make([]float32, dim)},
		{"NegZero", []float32{float32(math.Copysign(0, -1)), 0, 0, 0, 0, 0, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := db.Add(ctx, []int64{2}, [][]float32{tc.v})
			assert.ErrorIs(t, err, vdb.ErrInvalidVector, "rule: Add of a NaN, ±Inf or zero vector fails with ErrInvalidVector")
			assert.Equal(t, 1, db.Len(), "rule: a failed Add changes nothing")
			_, err = db.Search(ctx, tc.v, 1)
			assert.ErrorIs(t, err, vdb.ErrInvalidVector, "rule: Search with a NaN, ±Inf or zero query fails with ErrInvalidVector")
			_, err = vdb.SearchMinScore(ctx, db, tc.v, 1, 0)
			assert.ErrorIs(t, err, vdb.ErrInvalidVector, "rule: SearchMinScore with a NaN, ±Inf or zero query fails with ErrInvalidVector")
		})
	}
}

func (s *suite) testInvalidK(t *testing.T) {
	const dim = 8
	ctx, db, r := s.start(t, dim)
	q := randVecs(r, 1, dim)[0]
	for _, filled := range []bool{false, true} {
		if filled {
			require.NoError(t, db.Add(ctx, []int64{1}, [][]float32{q}))
		}
		for _, k := range []int{0, -1, math.MinInt} {
			_, err := db.Search(ctx, q, k)
			assert.ErrorIs(t, err, vdb.ErrInvalidK, "rule: Search with k ≤ 0 fails with ErrInvalidK (k=%d, Len=%d)", k, db.Len())
			_, err = vdb.SearchMinScore(ctx, db, q, k, 0)
			assert.ErrorIs(t, err, vdb.ErrInvalidK, "rule: SearchMinScore with k ≤ 0 fails with ErrInvalidK (k=%d, Len=%d)", k, db.Len())
			_, err = vdb.SearchBatch(ctx, db, [][]float32{q}, k)
			assert.ErrorIs(t, err, vdb.ErrInvalidK, "rule: SearchBatch with k ≤ 0 fails with ErrInvalidK (k=%d, Len=%d)", k, db.Len())
		}
	}
}

func (s *suite) testInvalidID(t *testing.T) {
	const dim = 8
	ctx, db, r := s.start(t, dim)
	vs := randVecs(r, 3, dim)
	for _, tc := range []struct {
		name string
		ids  []int64
		vecs [][]float32
	}{
		{"Negative", []int64{-1}, vs[:1]},
		{"MinInt64", []int64{math.MinInt64}, vs[:1]},
		{"NegativeLastInBatch", []int64{1, 2, -5}, vs},
		{"FewerIDs", []int64{1, 2}, vs},
		{"MoreIDs", []int64{1, 2, 3}, vs[:2]},
		{"NoVectors", []int64{1}, nil},
		{"NoIDs", nil, vs[:1]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := db.Add(ctx, tc.ids, tc.vecs)
			assert.ErrorIs(t, err, vdb.ErrInvalidID, "rule: Add with a negative ID or len(ids) != len(vecs) fails with ErrInvalidID")
			assert.Equal(t, 0, db.Len(), "rule: a failed Add changes nothing")
		})
	}
}

func (s *suite) testAddBatchIsAtomic(t *testing.T) {
	ctx := t.Context()
	const dim = 8
	r := rand.New(rand.NewPCG(1, 2))
	vs := randVecs(r, 6, dim)
	nan := slices.Clone(vs[0])
	nan[2] = float32(math.NaN())
	for _, tc := range []struct {
		name string
		ids  []int64
		vecs [][]float32
		err  error
	}{
		{"InvalidVectorLast", []int64{1, 2, 3, 4}, [][]float32{vs[2], vs[3], vs[4], nan}, vdb.ErrInvalidVector},
		{"InvalidVectorFirst", []int64{4, 2, 3}, [][]float32{make([]float32, dim), vs[3], vs[4]}, vdb.ErrInvalidVector},
		{"WrongDimMiddle", []int64{1, 5, 3}, [][]float32{vs[2], vs[5][:dim-1], vs[4]}, vdb.ErrDimension},
		{"NegativeIDLast", []int64{1, 3, -2}, [][]float32{vs[2], vs[3], vs[4]}, vdb.ErrInvalidID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := s.newDB(t, dim)
			require.NoError(t, db.Add(ctx, []int64{1, 100}, vs[:2]))
			err := db.Add(ctx, tc.ids, tc.vecs)
			require.ErrorIs(t, err, tc.err)
			assert.Equal(t, 2, db.Len(), "rule: an Add batch is validated before anything is stored: on error nothing was added")
			requireNearest(t, ctx, db, vs[0], 1, "rule: on error nothing was replaced either", "")
		})
	}
}
