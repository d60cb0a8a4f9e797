package inmem_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/internal/testvec"
	"github.com/agentmem/agentmem/vdb/inmem"
)

// sparseVecs returns n vectors with a few nonzero dimensions each (at most
// dim/16, as a lexical embedder's), some of them duplicates or
// near-duplicates of others, so that scores tie with the k-th.
func sparseVecs(r *rand.Rand, n, dim int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, dim)
		if i > 0 && r.IntN(4) == 0 {
			copy(v, out[r.IntN(i)])
			v[r.IntN(dim)] += float32(1e-4 * r.NormFloat64())
		} else {
			for range 1 + r.IntN(max(1, dim/16)) {
				v[r.IntN(dim)] = float32(r.NormFloat64())
			}
		}
		if r.IntN(8) == 0 {
			v[r.IntN(dim)] = 1 // never all zero
		}
		out[i] = v
	}
	return out
}

// newColumnsPair is newPair with the codes database keeping columns too.
func newColumnsPair(t *testing.T, dim int, opts ...inmem.Option) pair {
	t.Helper()
	plain, err := inmem.New(dim, opts...)
	require.NoError(t, err)
	cols, err := inmem.New(dim, append([]inmem.Option{inmem.WithCodes(inmem.Int8), inmem.WithColumns(), inmem.WithCodesAlways()}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { plain.Close(); cols.Close() })
	return pair{plain, cols}
}

// TestColumns_MatchPlainScan: searches that read the column codes
// (queries with few nonzero dimensions) and those that do not (dense ones)
// return exactly the plain scan's results, through adds, replacements,
// deletes and Import, serial and parallel, on every kernel path.
func TestColumns_MatchPlainScan(t *testing.T) {
	paths := []struct {
		name string
		set  func() func()
	}{
		{"default", func() func() { return func() {} }},
		{"noavx512", inmem.SetNoAVX512},
		{"generic", inmem.SetGeneric},
	}
	for pi, path := range paths {
		t.Run(path.name, func(t *testing.T) {
			t.Cleanup(path.set())
			for seed := range 6 {
				r := rand.New(rand.NewPCG(uint64(seed), uint64(17+pi)))
				dim := []int{16, 64, 512}[seed%3]
				n := 1 + r.IntN(900)
				var opts []inmem.Option
				if seed%2 == 1 {
					opts = append(opts, inmem.WithParallelMin(1), inmem.WithWorkers(1+r.IntN(3)))
				}
				t.Run(fmt.Sprintf("seed=%d/dim=%d/n=%d", seed, dim, n), func(t *testing.T) {
					p := newColumnsPair(t, dim, opts...)
					vs := append(sparseVecs(r, n-n/4, dim), clusteredVecs(r, n/4, dim)...)
					p.add(t, testvec.IDs(0, n), vs)
					qs := append(sparseVecs(r, 6, dim), vs[r.IntN(n)], clusteredVecs(r, 1, dim)[0])
					before := p.codes.ColumnBlocks()
					p.check(t, r, qs, "fresh")
					require.Greater(t, p.codes.ColumnBlocks(), before, "sparse queries read the columns")

					m := r.IntN(n/2 + 1)
					ids := make([]int64, m)
					for i := range ids {
						ids[i] = int64(r.IntN(n + 20))
					}
					p.add(t, ids, sparseVecs(r, m, dim))
					p.del(t, ids[:m/2]...)
					p.check(t, r, qs, "after replace and delete")

					var buf bytes.Buffer
					require.NoError(t, p.plain.Export(t.Context(), &buf))
					fresh, err := inmem.New(dim, append([]inmem.Option{inmem.WithCodes(inmem.Int8), inmem.WithColumns(), inmem.WithCodesAlways()}, opts...)...)
					require.NoError(t, err)
					t.Cleanup(func() { fresh.Close() })
					require.NoError(t, fresh.Import(t.Context(), bytes.NewReader(buf.Bytes())))
					pair{p.plain, fresh}.check(t, r, qs, "after import")
				})
			}
		})
	}
}

// TestColumns_SmallDatabase: a database below the codes' size
// (codesMinRows) scans its columns for a sparse query from colsMinRows
// rows, and still answers exactly as the plain scan.
func TestColumns_SmallDatabase(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	const dim, n = 512, 1000
	plain, err := inmem.New(dim)
	require.NoError(t, err)
	defer plain.Close()
	cols, err := inmem.New(dim, inmem.WithCodes(inmem.Int8), inmem.WithColumns())
	require.NoError(t, err)
	defer cols.Close()
	p := pair{plain, cols}
	p.add(t, testvec.IDs(0, n), sparseVecs(r, n, dim))
	p.check(t, r, sparseVecs(r, 5, dim), "small, sparse")
	require.Positive(t, cols.ColumnBlocks(), "the sparse queries read the columns")
	before := cols.ColumnBlocks()
	p.check(t, r, clusteredVecs(r, 3, dim), "small, dense")
	require.Equal(t, before, cols.ColumnBlocks(), "dense queries scan the float32 rows")
}
