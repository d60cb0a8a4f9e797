package vdbtest

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/vdb"
)

// oracle is the brute-force reference: normalised float64 copies of what
// should be stored.
type oracle struct {
	dim  int
	vecs map[int64][]float64
}

func newOracle(dim int) *oracle { return &oracle{dim: dim, vecs: map[int64][]float64{}} }

func unit(v []float32) []float64 {
	out := make([]float64, len(v))
	var sum float64
	for i, x := range v {
		out[i] = float64(x)
		sum += out[i] * out[i]
	}
	inv := 1 / math.Sqrt(sum)
	for i := range out {
		out[i] *= inv
	}
	return out
}

func (o *oracle) add(ids []int64, vecs [][]float32) {
	for i, id := range ids {
		o.vecs[id] = unit(vecs[i])
	}
}

func (o *oracle) del(ids ...int64) {
	for _, id := range ids {
		delete(o.vecs, id)
	}
}

func (o *oracle) score(id int64, q []float32) float64 {
	v, ok := o.vecs[id]
	if !ok {
		return math.NaN()
	}
	return dot64(unit(q), v)
}

func dot64(u, v []float64) float64 {
	var dot float64
	for i := range u {
		dot += u[i] * v[i]
	}
	return dot
}

// all returns every stored vector's score against q, best first, ties by ID.
func (o *oracle) all(q []float32) []vdb.Result {
	u := unit(q)
	out := make([]vdb.Result, 0, len(o.vecs))
	for id, v := range o.vecs {
		out = append(out, vdb.Result{ID: id, Score: float32(dot64(u, v))})
	}
	sortResults(out)
	return out
}

func (o *oracle) search(q []float32, k int) []vdb.Result {
	all := o.all(q)
	return all[:min(k, len(all))]
}

func sortResults(rs []vdb.Result) {
	slices.SortFunc(rs, func(a, b vdb.Result) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}

// randVecs returns n random vectors of dimension dim with Gaussian
// components (random directions), deliberately not normalised.
func randVecs(r *rand.Rand, n, dim int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64() * 3)
		}
		out[i] = v
	}
	return out
}

func ids(rs []vdb.Result) []int64 {
	out := make([]int64, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// checkOrdered checks the ordering rule on any result list.
func checkOrdered(t *testing.T, rs []vdb.Result) {
	t.Helper()
	for i := 1; i < len(rs); i++ {
		a, b := rs[i-1], rs[i]
		if a.Score < b.Score || (a.Score == b.Score && a.ID >= b.ID) {
			t.Errorf("rule: Search results must be in descending score order, ties by ascending ID (and IDs unique): result %d %+v, result %d %+v", i-1, a, i, b)
			return
		}
	}
}

// requireNearest checks that q's single nearest neighbour in db is id, with
// score 1 (cosine); idMsg and scoreMsg name the rules the two checks test
// (an empty scoreMsg is idMsg).
func requireNearest(t *testing.T, ctx context.Context, db vdb.VectorDatabase, q []float32, id int64, idMsg, scoreMsg string) {
	t.Helper()
	res, err := db.Search(ctx, q, 1)
	require.NoError(t, err)
	require.Len(t, res, 1, "rule: Search with k=1 on a non-empty database returns one result")
	assert.Equal(t, id, res[0].ID, idMsg)
	if scoreMsg == "" {
		scoreMsg = idMsg
	}
	assert.InDelta(t, 1, res[0].Score, scoreTol, scoreMsg)
}

// addWithOracle adds vs under ids to db, requiring success, and returns an
// oracle holding the same vectors.
func addWithOracle(t *testing.T, ctx context.Context, db vdb.VectorDatabase, ids []int64, vs [][]float32) *oracle {
	t.Helper()
	require.NoError(t, db.Add(ctx, ids, vs))
	o := newOracle(db.Dim())
	o.add(ids, vs)
	return o
}

// checkScores checks that every result's score is its true cosine.

func checkScores(t *testing.T, o *oracle, q []float32, rs []vdb.Result) {
	t.Helper()
	for _, r := range rs {
		want := o.score(r.ID, q)
		if math.IsNaN(want) {
			t.Errorf("rule: Search must return only stored IDs: got ID %d", r.ID)
			continue
		}
		if math.Abs(float64(r.Score)-want) > scoreTol {
			t.Errorf("rule: Score must be the cosine similarity: ID %d got %v, want %v", r.ID, r.Score, want)
		}
	}
}

// checkMatches compares a backend's answer with the oracle's: exactly (up to
// float rounding near ties) for an exact backend, by recall otherwise. It
// returns the recall.
func (s *suite) checkMatches(t *testing.T, o *oracle, q []float32, k int, got []vdb.Result) float64 {
	t.Helper()
	checkOrdered(t, got)
	checkScores(t, o, q, got)
	all := o.all(q)
	want := all[:min(k, len(all))]
	if !s.exact() {
		require.LessOrEqual(t, len(got), len(want), "rule: Search must return at most min(k, Len()) results")
		hit := 0
		for _, r := range got {
			for _, w := range want {
				if w.ID == r.ID {
					hit++
					break
				}
			}
		}
		if len(want) == 0 {
			return 1
		}
		return float64(hit) / float64(len(want))
	}
	if !assert.Len(t, got, len(want), "rule: Search must return min(k, Len()) results") {
		return 0
	}
	for i := range want {
		if math.Abs(float64(got[i].Score-want[i].Score)) > scoreTol {
			t.Errorf("rule: Search must return the k most similar vectors: rank %d got %+v, want %+v (all got %v, want %v)",
				i, got[i], want[i], ids(got), ids(want))
			return 0
		}
		if got[i].ID != want[i].ID {
			// Allowed only when the two are tied within float rounding.
			s1, s2 := o.score(got[i].ID, q), o.score(want[i].ID, q)
			if math.Abs(s1-s2) > scoreTol {
				t.Errorf("rule: Search must return the k most similar vectors: rank %d got ID %d, want ID %d", i, got[i].ID, want[i].ID)
				return 0
			}
		}
	}
	return 1
}
