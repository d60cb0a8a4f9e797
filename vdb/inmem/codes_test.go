package inmem_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/internal/testvec"
	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/inmem"
)

// pair is the same data in a plain database and one with int8 codes.
type pair struct{ plain, codes *inmem.DB }

func newPair(t *testing.T, dim int, opts ...inmem.Option) pair {
	t.Helper()
	plain, err := inmem.New(dim, opts...)
	require.NoError(t, err)
	codes, err := inmem.New(dim, append([]inmem.Option{inmem.WithCodes(inmem.Int8), inmem.WithCodesAlways()}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { plain.Close(); codes.Close() })
	return pair{plain, codes}
}

func (p pair) add(t *testing.T, ids []int64, vs [][]float32) {
	t.Helper()
	require.NoError(t, p.plain.Add(t.Context(), ids, vs))
	require.NoError(t, p.codes.Add(t.Context(), ids, vs))
}

func (p pair) del(t *testing.T, ids ...int64) {
	t.Helper()
	a, err := p.plain.Delete(t.Context(), ids...)
	require.NoError(t, err)
	b, err := p.codes.Delete(t.Context(), ids...)
	require.NoError(t, err)
	require.Equal(t, a, b)
}

// check asserts that both databases answer every kind of search identically:
// same IDs, bit-identical scores, same order.
func (p pair) check(t *testing.T, r *rand.Rand, qs [][]float32, what string) {
	t.Helper()
	ctx := t.Context()
	n := p.plain.Len()
	for _, k := range []int{1, 3, 10, n + 5} {
		for i, q := range qs {
			a, err := p.plain.Search(ctx, q, k)
			require.NoError(t, err)
			b, err := p.codes.Search(ctx, q, k)
			require.NoError(t, err)
			require.Equal(t, a, b, "%s: Search k=%d query %d", what, k, i)
			if len(a) > 0 {
				// A cut-off at, just above and just below a result's score.
				s := a[r.IntN(len(a))].Score
				for _, min := range []float32{s, math.Nextafter32(s, 2), math.Nextafter32(s, -2), -1, 0.2} {
					a, err := p.plain.SearchMinScore(ctx, q, k, min)
					require.NoError(t, err)
					b, err := p.codes.SearchMinScore(ctx, q, k, min)
					require.NoError(t, err)
					require.Equal(t, a, b, "%s: SearchMinScore k=%d min=%v query %d", what, k, min, i)
				}
			}
		}
		a, err := p.plain.SearchBatch(ctx, qs, k)
		require.NoError(t, err)
		b, err := p.codes.SearchBatch(ctx, qs, k)
		require.NoError(t, err)
		require.Equal(t, a, b, "%s: SearchBatch k=%d", what, k)
		// A batch answers each query as Search does.
		for i, q := range qs {
			s, err := p.plain.Search(ctx, q, k)
			require.NoError(t, err)
			require.Equal(t, s, a[i], "%s: SearchBatch vs Search k=%d query %d", what, k, i)
		}
	}
}

// clusteredVecs returns n vectors of which many are exact duplicates or
// tiny perturbations of a few bases, so that many scores tie or nearly tie
// with the k-th: the cases where a loose bound would change the result.
func clusteredVecs(r *rand.Rand, n, dim int) [][]float32 {
	bases := vecs(r, 1+r.IntN(4), dim)
	out := make([][]float32, n)
	for i := range out {
		switch r.IntN(4) {
		case 0: // fresh
			out[i] = vecs(r, 1, dim)[0]
		case 1: // exact duplicate of a base (up to scale: same after normalising)
			b := bases[r.IntN(len(bases))]
			v := make([]float32, dim)
			for j := range v {
				v[j] = 2 * b[j]
			}
			out[i] = v
		default: // a base plus noise of relative size 1e-7 to 1e-2
			b := bases[r.IntN(len(bases))]
			eps := math.Pow(10, -2-5*r.Float64())
			v := make([]float32, dim)
			for j := range v {
				v[j] = b[j] + float32(eps*r.NormFloat64())
			}
			out[i] = v
		}
	}
	return out
}

// TestCodes_MatchPlainScan is the randomised proof-by-test that codes change
// nothing: over many seeds, dimensions (multiples of 16, which take the
// assembly kernels on amd64, and others, which take the generic code),
// duplicates and near-duplicates, replacements, deletes, k > N, cut-offs,
// batches, serial and parallel scans, and a round trip through
// Export/Import.
func TestCodes_MatchPlainScan(t *testing.T) {
	t.Parallel()

	seeds := 40
	if testing.Short() {
		seeds = 8
	}
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 11))
		dim := []int{3, 8, 16, 32, 48, 50, 384}[seed%7]
		n := 1 + r.IntN(700)
		var opts []inmem.Option
		if seed%3 == 1 {
			opts = append(opts, inmem.WithParallelMin(1), inmem.WithWorkers(1+r.IntN(4)))
		}
		t.Run(fmt.Sprintf("seed=%d/dim=%d/n=%d", seed, dim, n), func(t *testing.T) {
			p := newPair(t, dim, opts...)
			vs := clusteredVecs(r, n, dim)
			p.add(t, testvec.IDs(0, n), vs)
			qs := append(clusteredVecs(r, 5, dim), vs[r.IntN(n)])
			p.check(t, r, qs, "fresh")

			// Replace some, delete some (the last row moves into the holes).
			m := r.IntN(n/2 + 1)
			ids := make([]int64, m)
			for i := range ids {
				ids[i] = int64(r.IntN(n + 20))
			}
			p.add(t, ids, clusteredVecs(r, m, dim))
			p.del(t, ids[:m/2]...)
			var more []int64
			for range r.IntN(n/2 + 1) {
				more = append(more, int64(r.IntN(n)))
			}
			p.del(t, more...)
			p.check(t, r, qs, "after replace and delete")

			// Import into a codes database recomputes its codes.
			var buf bytes.Buffer
			require.NoError(t, p.plain.Export(t.Context(), &buf))
			fresh, err := inmem.New(dim, append([]inmem.Option{inmem.WithCodes(inmem.Int8), inmem.WithCodesAlways()}, opts...)...)
			require.NoError(t, err)
			t.Cleanup(func() { fresh.Close() })
			require.NoError(t, fresh.Import(t.Context(), bytes.NewReader(buf.Bytes())))
			pair{p.plain, fresh}.check(t, r, qs, "after import")
		})
	}
}

// TestCodes_Generic runs the same comparison on the portable kernels.
func TestCodes_Generic(t *testing.T) {
	t.Cleanup(inmem.SetGeneric())
	r := rand.New(rand.NewPCG(5, 5))
	for _, dim := range []int{16, 384} {
		p := newPair(t, dim)
		vs := clusteredVecs(r, 500, dim)
		p.add(t, testvec.IDs(0, 500), vs)
		p.check(t, r, clusteredVecs(r, 4, dim), fmt.Sprintf("generic dim=%d", dim))
	}
}

// TestCodes_LargeBatches adds batches large enough that Add codes their rows
// across workers, with IDs repeated within a batch (one row, coded once) and
// replaced by a later batch.
func TestCodes_LargeBatches(t *testing.T) {
	t.Parallel()

	r := rand.New(rand.NewPCG(8, 8))
	const dim, n = 64, 1500
	p := newPair(t, dim, inmem.WithWorkers(3))
	ids := append(testvec.IDs(0, n), testvec.IDs(0, n/2)...)
	p.add(t, ids, clusteredVecs(r, len(ids), dim))
	p.add(t, testvec.IDs(n/4, n-n/4), clusteredVecs(r, n-n/4, dim))
	p.check(t, r, clusteredVecs(r, 7, dim), "large batches")
}

// TestCodes_NoVNNI runs the comparison with the AVX-512 VNNI kernels off:
// single queries and batches take the AVX2 int16 kernels (on amd64).
func TestCodes_NoVNNI(t *testing.T) {
	t.Cleanup(inmem.SetNoVNNI())
	r := rand.New(rand.NewPCG(6, 6))
	for _, dim := range []int{64, 384} {
		p := newPair(t, dim)
		vs := clusteredVecs(r, 500, dim)
		p.add(t, testvec.IDs(0, 500), vs)
		p.check(t, r, clusteredVecs(r, 7, dim), fmt.Sprintf("no VNNI dim=%d", dim))
	}
}

// TestCodes_RescoresFew checks that the bound is tight enough to be useful:
// on random unit vectors most rows are never rescored.
func TestCodes_RescoresFew(t *testing.T) {
	t.Parallel()

	const dim, n = 384, 20_000
	r := rand.New(rand.NewPCG(1, 2))
	db, err := inmem.New(dim, inmem.WithCodes(inmem.Int8), inmem.WithWorkers(1))
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.Add(t.Context(), testvec.IDs(0, n), vecs(r, n, dim)))
	qs := vecs(r, 10, dim)
	db.ResetRescored()
	for _, q := range qs {
		_, err := db.Search(t.Context(), q, 10)
		require.NoError(t, err)
	}
	per := float64(db.Rescored()) / float64(len(qs))
	t.Logf("rescored %.0f of %d rows per query", per, n)
	assert.Less(t, per, 0.05*n, "the bound lets most rows be skipped")
}

// TestCodes_OldStream loads a version-1 stream (written by a database
// without codes; the format has not changed since) into a database with
// codes.
func TestCodes_OldStream(t *testing.T) {
	t.Parallel()

	const dim, n = 8, 10
	stream := exported(t, dim, n)
	require.Equal(t, uint8(1), stream[8], "version 1 stream")
	db, err := inmem.New(dim, inmem.WithCodes(inmem.Int8))
	require.NoError(t, err)
	require.NoError(t, db.Import(t.Context(), bytes.NewReader(stream)))
	assert.Equal(t, n, db.Len())
	plain, err := inmem.New(dim)
	require.NoError(t, err)
	require.NoError(t, plain.Import(t.Context(), bytes.NewReader(stream)))
	r := rand.New(rand.NewPCG(3, 4))
	pair{plain, db}.check(t, r, vecs(r, 3, dim), "v1 stream")
	var again bytes.Buffer
	require.NoError(t, db.Export(t.Context(), &again))
	assert.Equal(t, stream, again.Bytes(), "codes do not change the exported stream")
}

func TestWithCodes_Error(t *testing.T) {
	t.Parallel()

	_, err := inmem.New(4, inmem.WithCodes(inmem.Codes(9)))
	assert.Error(t, err)
	assert.Equal(t, "int8", inmem.Int8.String())
	assert.Equal(t, "none", inmem.NoCodes.String())
}

var _ vdb.VectorDatabase = (*inmem.DB)(nil)
