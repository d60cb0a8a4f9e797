//go:build faiss && cgo

package faiss_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/internal/testvec"
	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/faiss"
	"github.com/agentmem/agentmem/vdb/vdbtest"
)

// The conformance suite runs on indexes opened through the registry, as a
// program opens them: vdb.Open(ctx, "faiss:…", …).

func TestConformanceFlat(t *testing.T) {
	vdbtest.RunSpec(t, "faiss")
}

func TestConformanceHNSW(t *testing.T) {
	vdbtest.RunSpec(t, "faiss:HNSW32,Flat?efSearch=64", vdbtest.Approximate(0.9))
}

func TestConformanceIVF(t *testing.T) {
	// 8 lists, half of them probed: approximate on random vectors. The
	// suite starts with small Adds, so each index is trained first.
	open := vdbtest.OpenSpec("faiss:IVF8,Flat?nprobe=4")
	vdbtest.Run(t, func(t *testing.T, dim int) vdb.VectorDatabase {
		db := open(t, dim)
		ix, ok := db.(*faiss.Index)
		require.True(t, ok, "vdb.Open(faiss:…) returns a *faiss.Index, got %T", db)
		require.NoError(t, ix.Train(t.Context(), gaussian(rand.New(rand.NewPCG(7, 7)), 400, dim)))
		return ix
	}, vdbtest.Approximate(0.6))
}

func TestConformanceThreads(t *testing.T) {
	vdbtest.RunSpec(t, "faiss:?threads=1")
}

// gaussian returns n random (unnormalised) vectors.
func gaussian(r *rand.Rand, n, dim int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		out[i] = v
	}
	return out
}

func TestNewBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		dim  int
		opts []faiss.Option
		want error
	}{
		{"ZeroDim", 0, nil, vdb.ErrDimension},
		{"NegativeDim", -3, nil, vdb.ErrDimension},
		{"UnknownFactory", 8, []faiss.Option{faiss.WithFactory("NoSuchIndex")}, faiss.ErrFactory},
		{"EmptyFactory", 8, []faiss.Option{faiss.WithFactory("")}, faiss.ErrFactory},
		{"OnlyIDMap", 8, []faiss.Option{faiss.WithFactory("IDMap,")}, faiss.ErrFactory},
		{"Malformed", 8, []faiss.Option{faiss.WithFactory("IVF,,Flat")}, faiss.ErrFactory},
		{"ZeroLists", 8, []faiss.Option{faiss.WithFactory("IVF0,Flat")}, faiss.ErrFactory},
		{"ZeroHNSW", 8, []faiss.Option{faiss.WithFactory("HNSW0,Flat")}, faiss.ErrFactory},
		{"ZeroPQ", 8, []faiss.Option{faiss.WithFactory("PQ0")}, faiss.ErrFactory},
		{"PQ64Bits", 8, []faiss.Option{faiss.WithFactory("PQ4x64")}, faiss.ErrFactory},
		{"HNSWOneLink", 8, []faiss.Option{faiss.WithFactory("HNSW1,Flat")}, faiss.ErrFactory},
		{"HNSWHuge", 8, []faiss.Option{faiss.WithFactory("HNSW99999999,Flat")}, faiss.ErrFactory},
		{"HugeNumber", 8, []faiss.Option{faiss.WithFactory("IVF99999999999999999999,Flat")}, faiss.ErrFactory},
		{"IDMapInside", 8, []faiss.Option{faiss.WithFactory("Flat,IDMap")}, faiss.ErrFactory},
		{"PQDoesNotDivide", 10, []faiss.Option{faiss.WithFactory("PQ3")}, faiss.ErrFactory},
		{"NProbeOnFlat", 8, []faiss.Option{faiss.WithNProbe(4)}, faiss.ErrFactory},
		{"EfSearchOnIVF", 8, []faiss.Option{faiss.WithFactory("IVF4,Flat"), faiss.WithEfSearch(4)}, faiss.ErrFactory},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix, err := faiss.New(tc.dim, tc.opts...)
			require.ErrorIs(t, err, tc.want)
			require.Nil(t, ix)
		})
	}
	_, err := faiss.New(8, faiss.WithThreads(-1))
	require.Error(t, err, "a negative option is an error")
}

// TestFactoryErrorText: one sentence of ours, then Faiss' message, without
// its C++ signature and source position.
func TestFactoryErrorText(t *testing.T) {
	_, err := faiss.New(8, faiss.WithFactory("Flat,Flat"))
	require.EqualError(t, err, `faiss: unusable index factory "Flat,Flat": could not parse index string Flat,Flat`)
	_, err = faiss.New(8, faiss.WithFactory("Flat,IDMap"))
	require.EqualError(t, err, `faiss: unusable index factory "Flat,IDMap": IDMap may only come first in the description`)
	_, err = vdb.Open(t.Context(), "faiss:Flat,Flat", vdb.Config{Dim: 8})
	require.ErrorIs(t, err, faiss.ErrFactory)
	require.NotContains(t, err.Error(), ".cpp")
}

func TestFactories(t *testing.T) {
	// Every layout New accepts stores, finds and deletes.
	const dim, n = 16, 300
	r := rand.New(rand.NewPCG(1, 2))
	vs := gaussian(r, n, dim)
	for _, f := range []string{"Flat", "IDMap,Flat", "IDMap2,Flat", "HNSW16,Flat", "IVF4,Flat", "IVF4,SQ8", "PCA8,IVF4,Flat", "SQ8", "HNSW8,SQ8"} {
		t.Run(f, func(t *testing.T) {
			ctx := t.Context()
			ix, err := faiss.New(dim, faiss.WithFactory(f), faiss.WithTrainSize(n))
			require.NoError(t, err)
			defer ix.Close()
			require.NoError(t, ix.Add(ctx, testvec.IDs(0, n), vs))
			require.True(t, ix.Trained())
			require.Equal(t, n, ix.Len())
			res, err := ix.Search(ctx, vs[5], 3)
			require.NoError(t, err)
			require.NotEmpty(t, res)
			del, err := ix.Delete(ctx, 5)
			require.NoError(t, err)
			assert.Equal(t, 1, del)
			assert.Equal(t, n-1, ix.Len())
			res, err = ix.Search(ctx, vs[5], 10)
			require.NoError(t, err)
			for _, r := range res {
				assert.NotEqual(t, int64(5), r.ID, "a deleted ID is never returned")
			}
		})
	}
}

func TestIVFUntrained(t *testing.T) {
	ctx := t.Context()
	const dim = 8
	r := rand.New(rand.NewPCG(1, 2))
	ix, err := faiss.New(dim, faiss.WithFactory("IVF16,Flat"))
	require.NoError(t, err)
	defer ix.Close()
	require.False(t, ix.Trained())

	res, err := ix.Search(ctx, gaussian(r, 1, dim)[0], 3)
	require.NoError(t, err, "searching an empty untrained index is not an error")
	assert.Empty(t, res)

	err = ix.Add(ctx, testvec.IDs(0, 10), gaussian(r, 10, dim))
	require.ErrorIs(t, err, faiss.ErrNotTrained, "a small first Add to an untrained IVF index fails")
	assert.ErrorContains(t, err, "Train")
	assert.Equal(t, 0, ix.Len())

	err = ix.Train(ctx, gaussian(r, 5, dim))
	require.Error(t, err, "fewer training vectors than lists")
	assert.False(t, ix.Trained())

	// A first Add of 39 × nlist vectors trains automatically.
	require.NoError(t, ix.Add(ctx, testvec.IDs(0, 39*16), gaussian(r, 39*16, dim)))
	assert.True(t, ix.Trained())
	assert.Equal(t, 39*16, ix.Len())
	require.NoError(t, ix.Train(ctx, gaussian(r, 1, dim)), "Train on a trained index does nothing")
}

func TestIVFExplicitTrain(t *testing.T) {
	ctx := t.Context()
	const dim = 8
	r := rand.New(rand.NewPCG(3, 4))
	ix, err := faiss.New(dim, faiss.WithFactory("IVF4,Flat"), faiss.WithNProbe(1))
	require.NoError(t, err)
	defer ix.Close()
	require.NoError(t, ix.Train(ctx, gaussian(r, 200, dim)))
	vs := gaussian(r, 5, dim)
	require.NoError(t, ix.Add(ctx, testvec.IDs(0, 5), vs))
	// Five vectors spread over four lists, one list probed: the search
	// falls back to every list so that k > Len() returns Len() results.
	res, err := ix.Search(ctx, vs[0], 10)
	require.NoError(t, err)
	assert.Len(t, res, 5)
}

func TestHNSWDeleteAndReplace(t *testing.T) {
	// HNSW cannot remove; the Index keeps deletion true with tombstones.
	ctx := t.Context()
	const dim, n = 16, 200
	r := rand.New(rand.NewPCG(5, 6))
	vs := gaussian(r, n, dim)
	ix, err := faiss.New(dim, faiss.WithFactory("HNSW16,Flat"), faiss.WithEfSearch(64))
	require.NoError(t, err)
	defer ix.Close()
	require.NoError(t, ix.Add(ctx, testvec.IDs(0, n), vs))

	// Delete the 50 nearest neighbours of vs[0], itself included: a search
	// for 10 must still return 10 live results.
	near, err := ix.Search(ctx, vs[0], 50)
	require.NoError(t, err)
	del := make([]int64, len(near))
	for i, r := range near {
		del[i] = r.ID
	}
	got, err := ix.Delete(ctx, del...)
	require.NoError(t, err)
	assert.Equal(t, 50, got)
	got, err = ix.Delete(ctx, del...)
	require.NoError(t, err)
	assert.Equal(t, 0, got, "deleting again finds nothing")
	assert.Equal(t, n-50, ix.Len())
	res, err := ix.Search(ctx, vs[0], 10)
	require.NoError(t, err)
	require.Len(t, res, 10)
	for _, r := range res {
		assert.NotContains(t, del, r.ID)
	}

	// Replace ID 100: its old vector no longer answers for it.
	require.NoError(t, ix.Add(ctx, []int64{100}, vs[:1]))
	res, err = ix.Search(ctx, vs[100], 1)
	require.NoError(t, err)
	require.Len(t, res, 1)
	assert.NotEqual(t, int64(100), res[0].ID, "a replaced vector is not returned")
	res, err = ix.Search(ctx, vs[0], 1)
	require.NoError(t, err)
	assert.Equal(t, int64(100), res[0].ID)

	// The tombstones survive a save and load.
	var buf bytes.Buffer
	require.NoError(t, ix.Export(ctx, &buf))
	ix2, err := faiss.New(dim, faiss.WithFactory("HNSW16,Flat"), faiss.WithEfSearch(64))
	require.NoError(t, err)
	defer ix2.Close()
	require.NoError(t, ix2.Import(ctx, &buf))
	assert.Equal(t, ix.Len(), ix2.Len())
	want, err := ix.Search(ctx, vs[0], 10)
	require.NoError(t, err)
	got2, err := ix2.Search(ctx, vs[0], 10)
	require.NoError(t, err)
	assert.Equal(t, want, got2)
}

func exportOf(t *testing.T, dim int, opts ...faiss.Option) []byte {
	t.Helper()
	ctx := t.Context()
	ix, err := faiss.New(dim, opts...)
	require.NoError(t, err)
	defer ix.Close()
	r := rand.New(rand.NewPCG(9, 9))
	require.NoError(t, ix.Train(ctx, gaussian(r, 200, dim)))
	require.NoError(t, ix.Add(ctx, testvec.IDs(0, 100), gaussian(r, 100, dim)))
	var buf bytes.Buffer
	require.NoError(t, ix.Export(ctx, &buf))
	return buf.Bytes()
}

func TestImportMismatch(t *testing.T) {
	ctx := t.Context()
	flat8 := exportOf(t, 8)
	hnsw8 := exportOf(t, 8, faiss.WithFactory("HNSW8,Flat"))
	ivf8 := exportOf(t, 8, faiss.WithFactory("IVF4,Flat"))
	for _, tc := range []struct {
		name   string
		data   []byte
		dim    int
		opts   []faiss.Option
		want   error
		loaded int
	}{
		{"FlatIntoFlat", flat8, 8, nil, nil, 100},
		{"IDMapPrefixIsTheSame", flat8, 8, []faiss.Option{faiss.WithFactory("IDMap,Flat")}, nil, 100},
		{"IVFIntoIVF", ivf8, 8, []faiss.Option{faiss.WithFactory("IVF4,Flat"), faiss.WithNProbe(2)}, nil, 100},
		{"OtherDim", flat8, 9, nil, vdb.ErrDimension, 0},
		{"FlatIntoHNSW", flat8, 8, []faiss.Option{faiss.WithFactory("HNSW8,Flat")}, faiss.ErrFactory, 0},
		{"HNSWIntoFlat", hnsw8, 8, nil, faiss.ErrFactory, 0},
		{"IVFOtherLists", ivf8, 8, []faiss.Option{faiss.WithFactory("IVF8,Flat")}, faiss.ErrFactory, 0},
		{"Empty", nil, 8, nil, vdb.ErrCorrupt, 0},
		{"HeaderOnly", flat8[:40], 8, nil, vdb.ErrCorrupt, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix, err := faiss.New(tc.dim, tc.opts...)
			require.NoError(t, err)
			defer ix.Close()
			err = ix.Import(ctx, bytes.NewReader(tc.data))
			if tc.want == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tc.want)
			}
			assert.Equal(t, tc.loaded, ix.Len())
		})
	}
}

func TestImportCorruptFaissBytes(t *testing.T) {
	// Streams whose checksums are right but whose Faiss bytes are not, as
	// only a bug or a forger would make: Faiss' read_index must fail with a
	// Go error, never crash the process.
	ctx := t.Context()
	data := exportOf(t, 8)
	hdrLen, blobLen := faiss.HeaderLen(data)
	blob := data[hdrLen : hdrLen+blobLen]
	for _, tc := range []struct {
		name string
		blob []byte
	}{
		{"Truncated", blob[:len(blob)/2]},
		{"TruncatedHead", blob[:3]},
		{"Empty", nil},
		{"WrongFourCC", append([]byte("XXXX"), blob[4:]...)},
		{"Garbage", bytes.Repeat([]byte{0xAB}, len(blob))},
		{"TrailingBytes", append(append([]byte(nil), blob...), 1, 2, 3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forged := faiss.Forge(data, tc.blob)
			ix, err := faiss.New(8)
			require.NoError(t, err)
			defer ix.Close()
			require.NoError(t, ix.Add(ctx, []int64{1}, gaussian(rand.New(rand.NewPCG(1, 1)), 1, 8)))
			err = ix.Import(ctx, bytes.NewReader(forged))
			require.ErrorIs(t, err, vdb.ErrCorrupt)
			assert.Equal(t, 1, ix.Len(), "a failed Import leaves the index unchanged")
		})
	}
}

func TestSaveLoadFile(t *testing.T) {
	ctx := t.Context()
	const dim, n = 32, 500
	r := rand.New(rand.NewPCG(1, 2))
	vs := gaussian(r, n, dim)
	ix, err := faiss.New(dim)
	require.NoError(t, err)
	defer ix.Close()
	require.NoError(t, ix.Add(ctx, testvec.IDs(0, n), vs))
	path := filepath.Join(t.TempDir(), "faiss.vdb")
	require.NoError(t, vdb.Save(ctx, ix, path))
	ix2, err := faiss.New(dim)
	require.NoError(t, err)
	defer ix2.Close()
	require.NoError(t, vdb.Load(ctx, ix2, path))
	want, err := ix.SearchBatch(ctx, vs[:20], 5)
	require.NoError(t, err)
	got, err := ix2.SearchBatch(ctx, vs[:20], 5)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

func TestThreadsKnob(t *testing.T) {
	// Indexes with different thread counts, used at once, give the same
	// answers as each other (and the race detector sees no race).
	ctx := t.Context()
	const dim, n = 32, 2000
	r := rand.New(rand.NewPCG(1, 2))
	vs := gaussian(r, n, dim)
	qs := gaussian(r, 64, dim)
	var want [][]vdb.Result
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, threads := range []int{0, 1, 2, 1} {
		wg.Go(func() {
			ix, err := faiss.New(dim, faiss.WithThreads(threads))
			if !assert.NoError(t, err) {
				return
			}
			defer ix.Close()
			if !assert.NoError(t, ix.Add(ctx, testvec.IDs(0, n), vs)) {
				return
			}
			got, err := ix.SearchBatch(ctx, qs, 10)
			if !assert.NoError(t, err) {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if want == nil {
				want = got
				return
			}
			assert.Equal(t, want, got, "threads=%d", threads)
		})
	}
	wg.Wait()
}

func TestCloseReleases(t *testing.T) {
	// Many indexes made and closed (or dropped) must not crash: Close stops
	// the cleanup before freeing, so nothing is freed twice.
	ctx := t.Context()
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 50 {
		ix, err := faiss.New(8)
		require.NoError(t, err)
		require.NoError(t, ix.Add(ctx, []int64{1}, gaussian(r, 1, 8)))
		if i%2 == 0 {
			require.NoError(t, ix.Close())
			require.NoError(t, ix.Close())
		}
	}
}

func TestSearchMatchesBatch(t *testing.T) {
	// The single-query path and the BLAS batch path agree on a larger index.
	ctx := t.Context()
	const dim, n = 64, 5000
	r := rand.New(rand.NewPCG(1, 2))
	ix, err := faiss.New(dim)
	require.NoError(t, err)
	defer ix.Close()
	require.NoError(t, ix.Add(ctx, testvec.IDs(0, n), gaussian(r, n, dim)))
	qs := gaussian(r, 40, dim)
	batch, err := ix.SearchBatch(ctx, qs, 10)
	require.NoError(t, err)
	for i, q := range qs {
		one, err := ix.Search(ctx, q, 10)
		require.NoError(t, err)
		require.Len(t, batch[i], len(one))
		for j := range one {
			assert.Equal(t, one[j].ID, batch[i][j].ID, "query %d rank %d", i, j)
			assert.InDelta(t, one[j].Score, batch[i][j].Score, 1e-5)
		}
	}
}

func ExampleNew() {
	ctx := context.Background()
	ix, err := faiss.New(3) // exact inner product over unit vectors ("IDMap,Flat")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ix.Close()
	_ = ix.Add(ctx, []int64{1, 2, 3}, [][]float32{{1, 0, 0}, {0, 1, 0}, {1, 1, 0}})
	res, _ := ix.Search(ctx, []float32{1, 0.1, 0}, 2)
	for _, r := range res {
		fmt.Printf("%d %.3f\n", r.ID, r.Score)
	}
	// Output:
	// 1 0.995
	// 3 0.774
}

func ExampleWithFactory() {
	ctx := context.Background()
	// HNSW: approximate, fast to search, cannot remove (deletes are
	// tombstones, filtered from results).
	ix, err := faiss.New(2, faiss.WithFactory("HNSW32,Flat"), faiss.WithEfSearch(64))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ix.Close()
	_ = ix.Add(ctx, []int64{10, 20}, [][]float32{{1, 0}, {0, 1}})
	n, _ := ix.Delete(ctx, 10)
	res, _ := ix.Search(ctx, []float32{1, 0}, 5)
	fmt.Println(n, ix.Len(), res[0].ID)
	_, err = faiss.New(2, faiss.WithFactory("NoSuchIndex"))
	fmt.Println(errors.Is(err, faiss.ErrFactory))
	// Output:
	// 1 1 20
	// true
}

func TestSetSearchParams(t *testing.T) {
	ctx := t.Context()
	r := rand.New(rand.NewPCG(1, 2))
	ivf, err := faiss.New(8, faiss.WithFactory("IVF8,Flat"))
	require.NoError(t, err)
	defer ivf.Close()
	require.NoError(t, ivf.Train(ctx, gaussian(r, 400, 8)))
	vs := gaussian(r, 300, 8)
	require.NoError(t, ivf.Add(ctx, testvec.IDs(0, 300), vs))
	require.NoError(t, ivf.SetNProbe(8))
	require.Error(t, ivf.SetNProbe(0))
	require.ErrorIs(t, ivf.SetEfSearch(16), faiss.ErrFactory, "efSearch does not apply to IVF,Flat")
	// With every list probed, IVF,Flat is exact.
	exact, err := faiss.New(8)
	require.NoError(t, err)
	defer exact.Close()
	require.NoError(t, exact.Add(ctx, testvec.IDs(0, 300), vs))
	qs := gaussian(r, 20, 8)
	want, err := exact.SearchBatch(ctx, qs, 10)
	require.NoError(t, err)
	got, err := ivf.SearchBatch(ctx, qs, 10)
	require.NoError(t, err)
	for i := range want {
		for j := range want[i] {
			assert.Equal(t, want[i][j].ID, got[i][j].ID)
		}
	}
	require.ErrorIs(t, exact.SetNProbe(4), faiss.ErrFactory, "nprobe does not apply to Flat")

	hnsw, err := faiss.New(8, faiss.WithFactory("HNSW8,Flat"))
	require.NoError(t, err)
	require.NoError(t, hnsw.SetEfSearch(128))
	require.NoError(t, hnsw.Close())
	require.ErrorIs(t, hnsw.SetEfSearch(64), vdb.ErrClosed)
}

func TestConcurrentPersistence(t *testing.T) {
	// Export, Import, Add and Search at once, for the race detector and
	// the C memory rules (Import swaps the Faiss index under readers).
	ctx := t.Context()
	const dim = 16
	r := rand.New(rand.NewPCG(1, 2))
	vs := gaussian(r, 200, dim)
	for _, f := range []string{"Flat", "HNSW8,Flat"} {
		t.Run(f, func(t *testing.T) {
			ix, err := faiss.New(dim, faiss.WithFactory(f))
			require.NoError(t, err)
			defer ix.Close()
			require.NoError(t, ix.Add(ctx, testvec.IDs(0, 100), vs[:100]))
			var snap bytes.Buffer
			require.NoError(t, ix.Export(ctx, &snap))
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Go(func() {
					for i := range 20 {
						switch g {
						case 0:
							var buf bytes.Buffer
							assert.NoError(t, ix.Export(ctx, &buf))
						case 1:
							assert.NoError(t, ix.Import(ctx, bytes.NewReader(snap.Bytes())))
						case 2:
							assert.NoError(t, ix.Add(ctx, []int64{int64(100 + i)}, vs[100+i:101+i]))
						default:
							res, err := ix.Search(ctx, vs[i], 5)
							assert.NoError(t, err)
							assert.Len(t, res, 5)
						}
					}
				})
			}
			wg.Wait()
			assert.GreaterOrEqual(t, ix.Len(), 100)
		})
	}
}

func ExampleIndex_Train() {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 2))
	sample := gaussian(r, 39*16, 8)
	// IVF needs its lists trained (k-means) before anything is added.
	ix, err := faiss.New(8, faiss.WithFactory("IVF16,Flat"), faiss.WithNProbe(4))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ix.Close()
	err = ix.Add(ctx, []int64{1}, sample[:1])
	fmt.Println(errors.Is(err, faiss.ErrNotTrained))
	if err := ix.Train(ctx, sample); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ix.Trained(), ix.Add(ctx, testvec.IDs(0, len(sample)), sample), ix.Len())
	// Output:
	// true
	// true <nil> 624
}

func TestReadHeader(t *testing.T) {
	data := exportOf(t, 8, faiss.WithFactory("IDMap,HNSW8,Flat"))
	h, err := faiss.ReadHeader(bytes.NewReader(data))
	require.NoError(t, err)
	assert.Equal(t, 8, h.Dim)
	assert.Equal(t, "HNSW8,Flat", h.Factory)
	// The header is enough to make a matching index.
	ix, err := faiss.New(h.Dim, faiss.WithFactory(h.Factory))
	require.NoError(t, err)
	defer ix.Close()
	require.NoError(t, ix.Import(t.Context(), bytes.NewReader(data)))
	assert.Equal(t, 100, ix.Len())
}
