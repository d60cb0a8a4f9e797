package vdbtest

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/internal/testvec"
	"github.com/agentmem/agentmem/vdb"
)

func (s *suite) testResultsDoNotAlias(t *testing.T) {
	const dim = 16
	ctx, db, r := s.start(t, dim)
	vs := randVecs(r, 4, dim)
	keep := make([][]float32, len(vs))
	for i, v := range vs {
		keep[i] = slices.Clone(v)
	}
	idList := []int64{10, 11, 12, 13}
	require.NoError(t, db.Add(ctx, idList, vs))
	// Mutate the caller's input after Add.
	for _, v := range vs {
		for j := range v {
			v[j] = float32(j + 1)
		}
	}
	idList[0] = 99
	vs[1] = keep[3]
	for i, v := range keep {
		requireNearest(t, ctx, db, v, int64(10+i),
			"rule: Add must not retain the caller's ids or vectors",
			"rule: Add must not retain the caller's vectors")
	}
	// Mutate results and the query after Search.
	q := slices.Clone(keep[2])
	first, err := db.Search(ctx, q, 4)
	require.NoError(t, err)
	want := slices.Clone(first)
	for i := range first {
		first[i] = vdb.Result{ID: -7, Score: 42}
	}
	for i := range q {
		q[i] = 5
	}
	second, err := db.Search(ctx, keep[2], 4)
	require.NoError(t, err)
	assert.Equal(t, want, second, "rule: returned results must not alias internal memory")
	_ = append(second[:1], vdb.Result{ID: -8, Score: 43})
	third, err := db.Search(ctx, keep[2], 4)
	require.NoError(t, err)
	assert.Equal(t, want, third, "rule: returned results must not alias internal memory (append)")
	if len(want) > 0 {
		assert.Equal(t, int64(12), want[0].ID, "rule: a stored vector is its own nearest neighbour")
	}
}

func (s *suite) testTiesByID(t *testing.T) {
	const dim = 8
	ctx, db, r := s.start(t, dim)
	v := randVecs(r, 1, dim)[0]
	scaled := func(f float32) []float32 {
		out := slices.Clone(v)
		for i := range out {
			out[i] *= f
		}
		return out
	}
	// The same direction (at different lengths) under scrambled IDs, added
	// one by one, plus unrelated vectors.
	// Power-of-two scales keep the normalised vectors bit-identical, so the
	// scores tie exactly.
	for i, id := range []int64{50, 3, 17, 1, 8} {
		require.NoError(t, db.Add(ctx, []int64{id}, [][]float32{scaled(float32(math.Ldexp(1, i-2)))}))
	}
	other := randVecs(r, 5, dim)
	require.NoError(t, db.Add(ctx, testvec.IDs(1000, 5), other))
	res, err := db.Search(ctx, v, 10)
	require.NoError(t, err)
	checkOrdered(t, res)
	require.GreaterOrEqual(t, len(res), 5)
	if s.exact() {
		assert.Equal(t, []int64{1, 3, 8, 17, 50}, ids(res[:5]), "rule: equal scores are ordered by ascending ID")
		res, err = db.Search(ctx, v, 3)
		require.NoError(t, err)
		assert.Equal(t, []int64{1, 3, 8}, ids(res), "rule: when ties straddle the k-th place, the lowest IDs are kept")
		res, err = vdb.SearchMinScore(ctx, db, v, 2, 0.5)
		require.NoError(t, err)
		assert.Equal(t, []int64{1, 3}, ids(res), "rule: when ties straddle the k-th place, the lowest IDs are kept (SearchMinScore)")
	}
}

func (s *suite) testMinScore(t *testing.T) {
	const dim, n = 24, 200
	ctx, db, r := s.start(t, dim)
	vs := randVecs(r, n, dim)
	o := addWithOracle(t, ctx, db, testvec.IDs(0, n), vs)
	for qi, q := range [][]float32{vs[7], randVecs(r, 1, dim)[0]} {
		all := o.all(q)
		for _, minScore := range []float32{-2, -0.5, 0, 0.1, 0.25, 0.5, 0.999, 1.5} {
			for _, k := range []int{1, 5, n} {
				got, err := vdb.SearchMinScore(ctx, db, q, k, minScore)
				require.NoError(t, err)
				for _, r := range got {
					assert.GreaterOrEqual(t, r.Score, minScore, "rule: SearchMinScore returns only results with Score ≥ minScore (query %d)", qi)
				}
				checkOrdered(t, got)
				checkScores(t, o, q, got)
				if s.exact() {
					want := 0
					for _, w := range all {
						// Results within float rounding of the threshold may go either way.
						if w.Score >= minScore+scoreTol {
							want++
						}
					}
					want = min(want, k)
					assert.GreaterOrEqual(t, len(got), want, "rule: SearchMinScore returns every result (up to k) with Score ≥ minScore (query %d, min %v, k %d)", qi, minScore, k)
					assert.LessOrEqual(t, len(got), k, "rule: SearchMinScore returns at most k results")
				}
			}
		}
	}
}

func (s *suite) testSearchBatch(t *testing.T) {
	const dim, n, k = 32, 300, 7
	ctx, db, r := s.start(t, dim)
	vs := randVecs(r, n, dim)
	o := addWithOracle(t, ctx, db, testvec.IDs(0, n), vs)
	queries := append(randVecs(r, 17, dim), vs[3], vs[250])
	got, err := vdb.SearchBatch(ctx, db, queries, k)
	require.NoError(t, err)
	require.Len(t, got, len(queries), "rule: SearchBatch returns one result list per query")
	for i, q := range queries {
		one, err := db.Search(ctx, q, k)
		require.NoError(t, err)
		checkOrdered(t, got[i])
		checkScores(t, o, q, got[i])
		if s.exact() {
			require.Len(t, got[i], len(one), "rule: SearchBatch returns for each query what Search would (query %d)", i)
			assert.Equal(t, ids(one), ids(got[i]), "rule: SearchBatch returns for each query what Search would (query %d)", i)
			for j := range one {
				assert.InDelta(t, one[j].Score, got[i][j].Score, scoreTol, "rule: SearchBatch returns for each query what Search would (query %d)", i)
			}
		}
	}
	empty, err := vdb.SearchBatch(ctx, db, nil, k)
	require.NoError(t, err, "rule: SearchBatch of no queries is not an error")
	assert.Empty(t, empty, "rule: SearchBatch of no queries returns no result lists")

	bad := [][]float32{vs[0], vs[1][:dim-2]}
	_, err = vdb.SearchBatch(ctx, db, bad, k)
	assert.ErrorIs(t, err, vdb.ErrDimension, "rule: SearchBatch with a query of the wrong length fails with ErrDimension")
	nan := slices.Clone(vs[0])
	nan[0] = float32(math.NaN())
	_, err = vdb.SearchBatch(ctx, db, [][]float32{vs[0], nan}, k)
	assert.ErrorIs(t, err, vdb.ErrInvalidVector, "rule: SearchBatch with a NaN query fails with ErrInvalidVector")
	// Many large queries against a small database.
	res, err := vdb.SearchBatch(ctx, db, queries[:3], 2*n)
	require.NoError(t, err)
	for _, rs := range res {
		if s.exact() {
			assert.Len(t, rs, n, "rule: k > Len() returns Len() results (SearchBatch)")
		}
	}
}
