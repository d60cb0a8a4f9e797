package vdbtest

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/internal/testvec"
)

func (s *suite) testSearchEmpty(t *testing.T) {
	ctx := t.Context()
	db := s.newDB(t, 8)
	r := rand.New(rand.NewPCG(1, 2))
	res, err := db.Search(ctx, randVecs(r, 1, 8)[0], 5)
	require.NoError(t, err, "rule: Search on an empty database must not fail")
	assert.NotNil(t, res, "rule: Search on an empty database returns an empty, non-nil slice")
	assert.Empty(t, res, "rule: Search on an empty database returns no results")
}

func (s *suite) testAddEmpty(t *testing.T) {
	ctx := t.Context()
	db := s.newDB(t, 8)
	require.NoError(t, db.Add(ctx, nil, nil), "rule: Add of an empty batch is a no-op, not an error")
	require.NoError(t, db.Add(ctx, []int64{}, [][]float32{}), "rule: Add of an empty batch is a no-op, not an error")
	assert.Equal(t, 0, db.Len(), "rule: Add of an empty batch stores nothing")
}

func (s *suite) testAddSameIDReplaces(t *testing.T) {
	const dim = 16
	ctx, db, r := s.start(t, dim)
	vs := randVecs(r, 3, dim)
	require.NoError(t, db.Add(ctx, []int64{1, 2}, vs[:2]))
	err := db.Add(ctx, []int64{1}, vs[2:3])
	if s.cfg.noDelete && errors.Is(err, errors.ErrUnsupported) {
		assert.Equal(t, 2, db.Len(), "rule: a failed Add changes nothing")
		return
	}
	require.NoError(t, err, "rule: Add under an existing ID must replace it")
	assert.Equal(t, 2, db.Len(), "rule: Add under an existing ID replaces it and does not grow Len()")
	o := newOracle(dim)
	o.add([]int64{1, 2}, vs[:2])
	o.add([]int64{1}, vs[2:3])
	res, err := db.Search(ctx, vs[2], 2)
	require.NoError(t, err)
	require.NotEmpty(t, res)
	assert.Equal(t, int64(1), res[0].ID, "rule: after replacing ID 1, a search for its new vector finds it first")
	assert.InDelta(t, 1, res[0].Score, scoreTol, "rule: after replacing ID 1, its score against its new vector is 1")
	checkScores(t, o, vs[2], res)
}

func (s *suite) testAddDuplicateInBatch(t *testing.T) {
	const dim = 16
	ctx, db, r := s.start(t, dim)
	vs := randVecs(r, 3, dim)
	err := db.Add(ctx, []int64{7, 8, 7}, vs)
	if s.cfg.noDelete && errors.Is(err, errors.ErrUnsupported) {
		assert.Equal(t, 0, db.Len(), "rule: a failed Add changes nothing")
		return
	}
	require.NoError(t, err)
	assert.Equal(t, 2, db.Len(), "rule: an ID repeated within one Add batch is stored once")
	requireNearest(t, ctx, db, vs[2], 7, "rule: within one batch, the later vector for an ID wins", "")
}

func (s *suite) testAddSearchExact(t *testing.T) {
	const dim, n = 32, 50
	ctx, db, r := s.start(t, dim)
	vs := randVecs(r, n, dim)
	require.NoError(t, db.Add(ctx, testvec.IDs(100, n), vs))
	require.Equal(t, n, db.Len(), "rule: Len() counts the stored vectors")
	for i, v := range vs {
		requireNearest(t, ctx, db, v, int64(100+i),
			"rule: a stored vector is its own nearest neighbour",
			"rule: a stored vector scores 1 (cosine) against itself")
	}
	// Scaling does not change cosine.
	scaled := slices.Clone(vs[3])
	for i := range scaled {
		scaled[i] *= 1000
	}
	requireNearest(t, ctx, db, scaled, 103, "rule: scores are cosine similarities, independent of vector length", "")
	// The opposite direction scores -1.
	neg := slices.Clone(vs[3])
	for i := range neg {
		neg[i] = -neg[i]
	}
	res, err := db.Search(ctx, neg, n)
	require.NoError(t, err)
	require.Len(t, res, n)
	assert.Equal(t, int64(103), res[n-1].ID, "rule: the opposite vector is the least similar")
	assert.InDelta(t, -1, res[n-1].Score, scoreTol, "rule: the opposite vector scores -1")
}

func (s *suite) testMatchesBruteForce(t *testing.T) {
	ctx := t.Context()
	const dim, n, k = 48, 600, 10
	db := s.newDB(t, dim)
	o := newOracle(dim)
	r := rand.New(rand.NewPCG(1, 2))
	// Several batches.
	for b := 0; b < n; b += 150 {
		vs := randVecs(r, 150, dim)
		require.NoError(t, db.Add(ctx, testvec.IDs(b*3, 150), vs))
		o.add(testvec.IDs(b*3, 150), vs)
	}
	// Replace some.
	repl := []int64{0, 3, 450, 451, 1500}
	if !s.cfg.noDelete {
		vs := randVecs(r, len(repl), dim)
		require.NoError(t, db.Add(ctx, repl, vs))
		o.add(repl, vs)
		// Delete some, including the first, the last and a block.
		del := []int64{0, 1, 2, 449, 1349, 1348}
		for i := 900; i < 960; i++ {
			del = append(del, int64(i))
		}
		_, err := db.Delete(ctx, del...)
		require.NoError(t, err)
		o.del(del...)
	}
	require.Equal(t, len(o.vecs), db.Len(), "rule: Len() counts stored vectors after adds, replacements and deletes")
	queries := randVecs(r, 30, dim)
	// Stored vectors as queries too.
	for _, id := range []int64{3, 5, 451, 1000, 1499} {
		v, ok := o.vecs[id]
		require.True(t, ok)
		q := make([]float32, dim)
		for i := range q {
			q[i] = float32(v[i])
		}
		queries = append(queries, q)
	}
	var recall float64
	for _, kk := range []int{1, k, 57} {
		for _, q := range queries {
			res, err := db.Search(ctx, q, kk)
			require.NoError(t, err)
			recall += s.checkMatches(t, o, q, kk, res)
			if t.Failed() {
				return
			}
		}
	}
	recall /= float64(3 * len(queries))
	if !s.exact() {
		assert.GreaterOrEqual(t, recall, s.cfg.minRecall, "rule: recall@k must reach the declared minimum")
	}
}

func (s *suite) testKLargerThanLen(t *testing.T) {
	const dim = 8
	ctx, db, r := s.start(t, dim)
	vs := randVecs(r, 5, dim)
	o := addWithOracle(t, ctx, db, testvec.IDs(1, 5), vs)
	for _, k := range []int{5, 6, 100, math.MaxInt32} {
		res, err := db.Search(ctx, vs[0], k)
		require.NoError(t, err, "rule: k > Len() is not an error")
		assert.Len(t, res, 5, "rule: k > Len() returns Len() results (k=%d)", k)
		checkOrdered(t, res)
		checkScores(t, o, vs[0], res)
	}
}
