// Package vdbtest is the conformance suite for [vdb.VectorDatabase]
// backends, in the style of nettest.TestConn and slogtest.Run: a backend's
// test calls [Run] with a constructor, and the suite runs named subtests,
// each against a fresh, empty database. Failure messages name the rule of the
// vdb contract that was broken.
//
//	func TestConformance(t *testing.T) {
//		vdbtest.Run(t, func(t *testing.T, dim int) vdb.VectorDatabase {
//			db, err := inmem.New(dim)
//			require.NoError(t, err)
//			t.Cleanup(func() { db.Close() })
//			return db
//		})
//	}
//
// Persistence is checked through [vdb.Save] and [vdb.Load] when the backend
// implements [vdb.Persister]. The suite assumes the stream starts with an
// 8-byte magic followed by a little-endian uint32 format version (see
// [VersionOffset] for other layouts), so that it can forge a stream from a
// newer version; a stream whose magic is damaged must fail with
// [vdb.ErrCorrupt], and only one from a newer version with [vdb.ErrVersion].
//
// [RunSpec] runs the suite on a backend opened through the registry
// ([vdb.Open]) by its spec.
package vdbtest

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/internal/testvec"
	"github.com/agentmem/agentmem/vdb"
)

// Open returns a new, empty database of dimension dim for one subtest. It
// should fail the test (t.Fatal) if the database cannot be made, register the
// database's Close with t.Cleanup, and put any files under t.TempDir(). The
// suite may call Open several times in one subtest (for example to load a
// saved database into a fresh one).
type Open func(t *testing.T, dim int) vdb.VectorDatabase

// An Option adapts the suite to a backend's documented limits.
type Option func(*config)

type config struct {
	minRecall     float64 // 0: exact backend
	noDelete      bool
	versionOffset int
}

// Approximate declares an approximate (ANN) backend: results are compared
// with the brute-force oracle by recall@k, which must be at least minRecall
// (for example 0.9), instead of by exact equality. Scores of the results that
// are returned must still be the true cosine similarities.
func Approximate(minRecall float64) Option {
	return func(c *config) { c.minRecall = minRecall }
}

// NoDelete declares a backend that documents that it cannot delete (such as
// a Faiss HNSW index). The Delete subtests are skipped; Delete must instead
// return an error wrapping errors.ErrUnsupported, and adding an ID that is
// already present may fail the same way (with nothing changed) rather than
// replace.
func NoDelete() Option {
	return func(c *config) { c.noDelete = true }
}

// VersionOffset tells the suite where the little-endian uint32 format version
// sits in an exported stream. The default is 8, just after an 8-byte magic.
func VersionOffset(n int) Option {
	return func(c *config) { c.versionOffset = n }
}

// OpenSpec returns an [Open] that makes each database with [vdb.Open] from
// spec (such as "inmem" or "faiss:HNSW32,Flat"), in the namespace
// "vdbtest", and closes it when the subtest ends. The backend's package must
// be imported (for its registration) by the test.
func OpenSpec(spec string) Open {
	return func(t *testing.T, dim int) vdb.VectorDatabase {
		t.Helper()
		db, err := vdb.Open(t.Context(), spec, vdb.Config{Dim: dim, Namespace: "vdbtest"})
		require.NoError(t, err, "vdb.Open(%q)", spec)
		t.Cleanup(func() { db.Close() })
		return db
	}
}

// RunSpec runs the conformance suite against the backend registered under
// spec's name, opened through the registry as a program opens it:
//
//	import _ "github.com/agentmem/agentmem/vdb/inmem"
//
//	func TestConformance(t *testing.T) { vdbtest.RunSpec(t, "inmem") }
func RunSpec(t *testing.T, spec string, opts ...Option) {
	t.Helper()
	Run(t, OpenSpec(spec), opts...)
}

// Run runs the conformance suite against the databases open returns, as
// subtests named after the rule they check: SearchEmpty, AddEmpty,
// AddSameIDReplaces, AddDuplicateInBatch, AddSearchExact, MatchesBruteForce
// (against a seeded float64 oracle), KLargerThanLen, DeleteUnknownIsNoop,
// Delete, DimensionMismatch, InvalidVector, InvalidK, InvalidID,
// AddBatchIsAtomic, ResultsDoNotAlias, TiesByID, UseAfterClose,
// ConcurrentAddSearch (meaningful under -race), ContextCancelled, MinScore
// (through [vdb.SearchMinScore]), SearchBatch (through [vdb.SearchBatch]) and
// SaveLoadRoundTrip (through [vdb.Save] and [vdb.Load]). Run a single rule
// with -run 'TestConformance/TiesByID'.
func Run(t *testing.T, open Open, opts ...Option) {
	t.Helper()
	c := &config{versionOffset: 8}
	for _, o := range opts {
		o(c)
	}
	s := &suite{open: open, cfg: c}
	tests := []struct {
		name string
		fn   func(*testing.T)
	}{
		{"SearchEmpty", s.testSearchEmpty},
		{"AddEmpty", s.testAddEmpty},
		{"AddSameIDReplaces", s.testAddSameIDReplaces},
		{"AddDuplicateInBatch", s.testAddDuplicateInBatch},
		{"AddSearchExact", s.testAddSearchExact},
		{"MatchesBruteForce", s.testMatchesBruteForce},
		{"KLargerThanLen", s.testKLargerThanLen},
		{"DeleteUnknownIsNoop", s.testDeleteUnknownIsNoop},
		{"Delete", s.testDelete},
		{"DimensionMismatch", s.testDimensionMismatch},
		{"InvalidVector", s.testInvalidVector},
		{"InvalidK", s.testInvalidK},
		{"InvalidID", s.testInvalidID},
		{"AddBatchIsAtomic", s.testAddBatchIsAtomic},
		{"ResultsDoNotAlias", s.testResultsDoNotAlias},
		{"TiesByID", s.testTiesByID},
		{"UseAfterClose", s.testUseAfterClose},
		{"ConcurrentAddSearch", s.testConcurrentAddSearch},
		{"ContextCancelled", s.testContextCancelled},
		{"MinScore", s.testMinScore},
		{"SearchBatch", s.testSearchBatch},
		{"SaveLoadRoundTrip", s.testSaveLoadRoundTrip},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.fn)
	}
}

// scoreTol is how far a backend's float32 score may drift from the oracle's
// float64 cosine.
const scoreTol = 1e-4

type suite struct {
	open Open
	cfg  *config
}

func (s *suite) exact() bool { return s.cfg.minRecall == 0 }

// newDB opens a database and checks the rules for a fresh one.
func (s *suite) newDB(t *testing.T, dim int) vdb.VectorDatabase {
	t.Helper()
	db := s.open(t, dim)
	require.NotNil(t, db, "Open must return a database")
	require.Equal(t, dim, db.Dim(), "rule: Dim() must return the dimension the database was opened with")
	require.Equal(t, 0, db.Len(), "rule: Open must return an empty database")
	return db
}

// start is the common beginning of a test: its context, a fresh database
// of dimension dim and a random source with a fixed seed.
func (s *suite) start(t *testing.T, dim int) (context.Context, vdb.VectorDatabase, *rand.Rand) {
	t.Helper()
	return t.Context(), s.newDB(t, dim), rand.New(rand.NewPCG(1, 2))
}

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

func (s *suite) testUseAfterClose(t *testing.T) {
	const dim = 8
	ctx, db, r := s.start(t, dim)
	vs := randVecs(r, 2, dim)
	require.NoError(t, db.Add(ctx, []int64{1}, vs[:1]))
	require.NoError(t, db.Close(), "rule: Close succeeds")
	require.NoError(t, db.Close(), "rule: Close is idempotent")
	msg := "rule: every method returns ErrClosed after Close"
	assert.ErrorIs(t, db.Add(ctx, []int64{2}, vs[1:]), vdb.ErrClosed, msg+" (Add)")
	_, err := db.Search(ctx, vs[0], 1)
	assert.ErrorIs(t, err, vdb.ErrClosed, msg+" (Search)")
	_, err = db.Delete(ctx, 1)
	assert.ErrorIs(t, err, vdb.ErrClosed, msg+" (Delete)")
	_, err = vdb.SearchMinScore(ctx, db, vs[0], 1, 0)
	assert.ErrorIs(t, err, vdb.ErrClosed, msg+" (SearchMinScore)")
	_, err = vdb.SearchBatch(ctx, db, vs, 1)
	assert.ErrorIs(t, err, vdb.ErrClosed, msg+" (SearchBatch)")
	if p, ok := db.(vdb.Persister); ok {
		assert.ErrorIs(t, p.Export(ctx, new(discard)), vdb.ErrClosed, msg+" (Export)")
		assert.ErrorIs(t, p.Import(ctx, new(emptyReader)), vdb.ErrClosed, msg+" (Import)")
	}
	// Len and Dim must not panic.
	_ = db.Len()
	_ = db.Dim()
}

type discard struct{}

func (*discard) Write(p []byte) (int, error) { return len(p), nil }

type emptyReader struct{}

func (*emptyReader) Read([]byte) (int, error) {
	return 0, errors.New("vdbtest: Import read from a closed database")
}

func (s *suite) testConcurrentAddSearch(t *testing.T) {
	ctx := t.Context()
	const dim, writers, readers, per = 16, 3, 3, 60
	db := s.newDB(t, dim)
	errs := make(chan error, writers+readers+1)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 9))
			for i := range per {
				id := int64(w*per + i)
				if err := db.Add(ctx, []int64{id}, randVecs(r, 1, dim)); err != nil {
					errs <- fmt.Errorf("Add %d: %w", id, err)
					return
				}
			}
		})
	}
	for rd := range readers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(rd), 7))
			for range per {
				res, err := db.Search(ctx, randVecs(r, 1, dim)[0], 5)
				if err != nil {
					errs <- fmt.Errorf("Search: %w", err)
					return
				}
				if len(res) > 5 {
					errs <- fmt.Errorf("Search returned %d > k results", len(res))
					return
				}
				_ = db.Len()
			}
		})
	}
	if !s.cfg.noDelete {
		wg.Go(func() {
			for i := range per {
				if _, err := db.Delete(ctx, int64(i)); err != nil {
					errs <- fmt.Errorf("Delete: %w", err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("rule: a VectorDatabase is safe for concurrent use: %v", err)
	}
	// Writer 0's IDs may have been added after their delete; all others are present.
	assert.GreaterOrEqual(t, db.Len(), (writers-1)*per, "rule: concurrent Adds are all stored")
	assert.LessOrEqual(t, db.Len(), writers*per)
	r := rand.New(rand.NewPCG(1, 9))
	res, err := db.Search(ctx, randVecs(r, 1, dim)[0], writers*per)
	require.NoError(t, err)
	assert.Len(t, res, db.Len(), "rule: after concurrent use, Search sees every stored vector")
	checkOrdered(t, res)
}

func (s *suite) testContextCancelled(t *testing.T) {
	const dim = 8
	db := s.newDB(t, dim)
	r := rand.New(rand.NewPCG(1, 2))
	vs := randVecs(r, 2, dim)
	require.NoError(t, db.Add(t.Context(), []int64{1}, vs[:1]))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	msg := "rule: a cancelled context fails the call with an error wrapping context.Canceled, before any work"
	assert.ErrorIs(t, db.Add(ctx, []int64{2}, vs[1:]), context.Canceled, msg+" (Add)")
	assert.Equal(t, 1, db.Len(), msg+" (Add stored a vector)")
	_, err := db.Search(ctx, vs[0], 1)
	assert.ErrorIs(t, err, context.Canceled, msg+" (Search)")
	_, err = vdb.SearchMinScore(ctx, db, vs[0], 1, 0)
	assert.ErrorIs(t, err, context.Canceled, msg+" (SearchMinScore)")
	_, err = vdb.SearchBatch(ctx, db, vs, 1)
	assert.ErrorIs(t, err, context.Canceled, msg+" (SearchBatch)")
	_, err = db.Delete(ctx, 1)
	if !(s.cfg.noDelete && errors.Is(err, errors.ErrUnsupported)) {
		assert.ErrorIs(t, err, context.Canceled, msg+" (Delete)")
	}
	assert.Equal(t, 1, db.Len(), msg+" (Delete removed a vector)")
	if p, ok := db.(vdb.Persister); ok {
		assert.ErrorIs(t, p.Export(ctx, new(discard)), context.Canceled, msg+" (Export)")
		assert.ErrorIs(t, p.Import(ctx, new(emptyReader)), context.Canceled, msg+" (Import)")
		assert.Equal(t, 1, db.Len(), msg+" (Import changed the database)")
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

func (s *suite) testSaveLoadRoundTrip(t *testing.T) {
	ctx := t.Context()
	const dim, n = 24, 300
	db := s.newDB(t, dim)
	path := filepath.Join(t.TempDir(), "db.vdb")
	if _, ok := db.(vdb.Persister); !ok {
		err := vdb.Save(ctx, db, path)
		assert.ErrorIs(t, err, errors.ErrUnsupported, "rule: vdb.Save of a backend without Persister fails with errors.ErrUnsupported")
		err = vdb.Load(ctx, db, path)
		assert.ErrorIs(t, err, errors.ErrUnsupported, "rule: vdb.Load into a backend without Persister fails with errors.ErrUnsupported")
		return
	}
	r := rand.New(rand.NewPCG(1, 2))
	vs := randVecs(r, n, dim)
	require.NoError(t, db.Add(ctx, testvec.IDs(5, n), vs))
	if !s.cfg.noDelete {
		_, err := db.Delete(ctx, 5, 100, 304)
		require.NoError(t, err)
	}
	require.NoError(t, vdb.Save(ctx, db, path))
	queries := append(randVecs(r, 10, dim), vs[10], vs[200])
	want := make([][]vdb.Result, len(queries))
	for i, q := range queries {
		var err error
		want[i], err = db.Search(ctx, q, 12)
		require.NoError(t, err)
	}

	// Load into a fresh database that already holds something: Load replaces.
	fresh := s.newDB(t, dim)
	require.NoError(t, fresh.Add(ctx, []int64{1_000_000}, randVecs(r, 1, dim)))
	require.NoError(t, vdb.Load(ctx, fresh, path), "rule: what vdb.Save wrote, vdb.Load reads")
	assert.Equal(t, db.Len(), fresh.Len(), "rule: a loaded database holds what was saved, and only that")
	for i, q := range queries {
		got, err := fresh.Search(ctx, q, 12)
		require.NoError(t, err)
		assert.Equal(t, want[i], got, "rule: a loaded database answers exactly as the saved one (query %d)", i)
	}
	if !s.cfg.noDelete {
		n, err := fresh.Delete(ctx, 1_000_000)
		require.NoError(t, err)
		assert.Equal(t, 0, n, "rule: Load replaces the database's contents")
	}
	// The loaded database is usable: adds and searches.
	require.NoError(t, fresh.Add(ctx, []int64{2_000_000}, vs[:1]))

	// An empty database round-trips too.
	emptyPath := filepath.Join(t.TempDir(), "empty.vdb")
	require.NoError(t, vdb.Save(ctx, s.newDB(t, dim), emptyPath))
	e := s.newDB(t, dim)
	require.NoError(t, vdb.Load(ctx, e, emptyPath))
	assert.Equal(t, 0, e.Len(), "rule: an empty database round-trips")

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	tryLoad := func(t *testing.T, b []byte, d int) error {
		t.Helper()
		p := filepath.Join(t.TempDir(), "bad.vdb")
		require.NoError(t, os.WriteFile(p, b, 0o600))
		target := s.newDB(t, d)
		require.NoError(t, target.Add(ctx, []int64{42}, randVecs(r, 1, d)))
		err := vdb.Load(ctx, target, p)
		if err != nil {
			assert.Equal(t, 1, target.Len(), "rule: a failed Load leaves the database unchanged")
		}
		return err
	}
	t.Run("Truncated", func(t *testing.T) {
		for _, cut := range []int{0, 3, 10, len(data) / 2, len(data) - 1} {
			err := tryLoad(t, data[:cut], dim)
			assert.ErrorIs(t, err, vdb.ErrCorrupt, "rule: loading a truncated stream (%d of %d bytes) fails with ErrCorrupt", cut, len(data))
		}
	})
	t.Run("FlippedByte", func(t *testing.T) {
		for _, at := range []int{len(data) / 3, len(data) / 2, len(data) - 1} {
			b := slices.Clone(data)
			b[at] ^= 0x10
			err := tryLoad(t, b, dim)
			assert.ErrorIs(t, err, vdb.ErrCorrupt, "rule: loading a stream with a flipped byte (at %d of %d) fails with ErrCorrupt", at, len(data))
		}
	})
	t.Run("OtherDim", func(t *testing.T) {
		err := tryLoad(t, data, dim+1)
		assert.ErrorIs(t, err, vdb.ErrDimension, "rule: loading a stream of another dimension fails with ErrDimension")
	})
	t.Run("NewerVersion", func(t *testing.T) {
		off := s.cfg.versionOffset
		require.Greater(t, len(data), off+4)
		b := slices.Clone(data)
		v := binary.LittleEndian.Uint32(b[off:])
		binary.LittleEndian.PutUint32(b[off:], v+1000)
		err := tryLoad(t, b, dim)
		assert.ErrorIs(t, err, vdb.ErrVersion, "rule: loading a stream from a newer format version fails with ErrVersion (checked before the checksum)")
	})
	t.Run("BadMagic", func(t *testing.T) {
		b := slices.Clone(data)
		b[0] ^= 0xff
		err := tryLoad(t, b, dim)
		assert.ErrorIs(t, err, vdb.ErrCorrupt, "rule: loading a stream with an unknown magic fails with ErrCorrupt (only a newer version is ErrVersion)")
		assert.NotErrorIs(t, err, vdb.ErrVersion, "rule: a stream with an unknown magic is damaged, not from a newer version")
	})
}
