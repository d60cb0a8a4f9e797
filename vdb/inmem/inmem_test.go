package inmem_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/internal/testvec"
	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/inmem"
	"github.com/agentmem/agentmem/vdb/vdbtest"
)

func opener(opts ...inmem.Option) vdbtest.Open {
	return func(t *testing.T, dim int) vdb.VectorDatabase {
		db, err := inmem.New(dim, opts...)
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		return db
	}
}

func TestConformance(t *testing.T) {
	t.Parallel()

	vdbtest.Run(t, opener())
}

// TestConformanceParallel runs the suite with every scan split across three
// workers, the path large databases take.
func TestConformanceParallel(t *testing.T) {
	t.Parallel()

	vdbtest.Run(t, opener(inmem.WithParallelMin(1), inmem.WithWorkers(3)))
}

// TestConformanceGeneric runs the suite on the portable kernel (gonum
// blas32), which non-amd64 builds and -tags purego use.
func TestConformanceGeneric(t *testing.T) {
	t.Cleanup(inmem.SetGeneric())
	vdbtest.Run(t, opener())
}

func TestNew_Error(t *testing.T) {
	t.Parallel()

	for _, dim := range []int{0, -1} {
		_, err := inmem.New(dim)
		assert.ErrorIs(t, err, vdb.ErrDimension, "dim %d", dim)
	}
	_, err := inmem.New(4, inmem.WithCapacity(-1))
	assert.Error(t, err)
	_, err = inmem.New(4, inmem.WithWorkers(0))
	assert.Error(t, err)
}

func vecs(r *rand.Rand, n, dim int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		out[i] = make([]float32, dim)
		for j := range out[i] {
			out[i][j] = float32(r.NormFloat64())
		}
	}
	return out
}

// TestGrowth checks that capacity tracks the size: a one-by-one fill does
// not over-allocate much, and deleting most vectors gives memory back.
func TestGrowth(t *testing.T) {
	t.Parallel()

	ctx := t.Context()
	const dim, n = 16, 5000
	db, err := inmem.New(dim)
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(1, 2))
	vs := vecs(r, n, dim)
	for i := range n {
		require.NoError(t, db.Add(ctx, []int64{int64(i)}, vs[i:i+1]))
	}
	assert.LessOrEqual(t, db.Cap(), 2*n, "small databases grow by doubling at most")
	// Replacing existing IDs does not grow.
	c := db.Cap()
	require.NoError(t, db.Add(ctx, testvec.IDs(0, n), vs))
	assert.Equal(t, c, db.Cap(), "replacing does not grow the database")

	_, err = db.Delete(ctx, testvec.IDs(0, n-100)...)
	require.NoError(t, err)
	assert.Equal(t, 100, db.Len())
	assert.Less(t, db.Cap(), n/4, "deleting most vectors shrinks the backing array")
	for i := n - 100; i < n; i++ {
		res, err := db.Search(ctx, vs[i], 1)
		require.NoError(t, err)
		require.Len(t, res, 1)
		assert.Equal(t, int64(i), res[0].ID, "vectors survive shrinking")
	}
}

func TestWithCapacity(t *testing.T) {
	t.Parallel()

	db, err := inmem.New(8, inmem.WithCapacity(1000))
	require.NoError(t, err)
	assert.Equal(t, 1000, db.Cap())
	r := rand.New(rand.NewPCG(1, 2))
	require.NoError(t, db.Add(t.Context(), testvec.IDs(0, 1000), vecs(r, 1000, 8)))
	assert.Equal(t, 1000, db.Cap(), "a capacity hint avoids reallocation")
}

func exported(t *testing.T, dim, n int) []byte {
	t.Helper()
	db, err := inmem.New(dim)
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(1, 2))
	require.NoError(t, db.Add(t.Context(), testvec.IDs(0, n), vecs(r, n, dim)))
	var buf bytes.Buffer
	require.NoError(t, db.Export(t.Context(), &buf))
	return buf.Bytes()
}

// reseal recomputes both checksums of an exported stream after a test has
// edited it on purpose.
func reseal(b []byte) {
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	binary.LittleEndian.PutUint32(b[24:], crc32.Checksum(b[:24], castagnoli))
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[28:len(b)-4], castagnoli))
}

func TestImport_Error(t *testing.T) {
	t.Parallel()

	const dim, n = 8, 10
	good := exported(t, dim, n)
	require.Len(t, good, 28+n*8+n*dim*4+4, "documented stream layout")
	tests := []struct {
		name string
		edit func(b []byte) []byte
		want error
	}{
		{"HeaderFlip", func(b []byte) []byte { b[17] ^= 1; return b }, vdb.ErrCorrupt},
		{"HeaderCRCFlip", func(b []byte) []byte { b[25] ^= 1; return b }, vdb.ErrCorrupt},
		{"VersionZero", func(b []byte) []byte { binary.LittleEndian.PutUint32(b[8:], 0); return b }, vdb.ErrVersion},
		{"HugeCount", func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[16:], 1<<62)
			reseal(b)
			return b
		}, vdb.ErrCorrupt},
		{"CountTooLarge", func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[16:], n+1)
			reseal(b)
			return b
		}, vdb.ErrCorrupt},
		{"DuplicateID", func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[28+8:], 0) // ids[1] = ids[0]
			reseal(b)
			return b
		}, vdb.ErrCorrupt},
		{"NegativeID", func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[28:], uint64(1<<63))
			reseal(b)
			return b
		}, vdb.ErrCorrupt},
		{"Empty", func([]byte) []byte { return nil }, vdb.ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, err := inmem.New(dim)
			require.NoError(t, err)
			err = db.Import(t.Context(), bytes.NewReader(tt.edit(bytes.Clone(good))))
			assert.ErrorIs(t, err, tt.want)
			assert.Equal(t, 0, db.Len(), "a failed Import leaves the database unchanged")
		})
	}
}

type failingRW struct{ n int }

var errIO = errors.New("disk on fire")

func (f *failingRW) Write(p []byte) (int, error) {
	if f.n -= len(p); f.n < 0 {
		return 0, errIO
	}
	return len(p), nil
}

func (f *failingRW) Read(p []byte) (int, error) { return 0, errIO }

func TestExportImport_IOErrors(t *testing.T) {
	t.Parallel()

	ctx := t.Context()
	db, err := inmem.New(8)
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(1, 2))
	require.NoError(t, db.Add(ctx, testvec.IDs(0, 10), vecs(r, 10, 8)))
	for _, budget := range []int{0, 28, 28 + 80, 28 + 80 + 320} {
		err := db.Export(ctx, &failingRW{n: budget})
		assert.ErrorIs(t, err, errIO, "Export reports the writer's error (budget %d)", budget)
	}
	err = db.Import(ctx, &failingRW{})
	assert.ErrorIs(t, err, errIO, "Import reports the reader's error")
	assert.NotErrorIs(t, err, vdb.ErrCorrupt, "a read error is not corruption")
	assert.Equal(t, 10, db.Len())
}

// TestImport_Cancelled checks that a large import notices cancellation
// between chunks.
func TestImport_Cancelled(t *testing.T) {
	t.Parallel()

	data := exported(t, 256, 5000) // > one 4 MiB chunk
	db, err := inmem.New(256)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	r := &cancelAfter{r: bytes.NewReader(data), n: 1 << 20, cancel: cancel}
	err = db.Import(ctx, r)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 0, db.Len())
}

type cancelAfter struct {
	r      io.Reader
	n      int
	cancel func()
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.n -= n; c.n <= 0 {
		c.cancel()
	}
	return n, err
}

// TestSearch_ParallelMatchesSerial compares a large database searched by
// several workers with the same data searched by one.
func TestSearch_ParallelMatchesSerial(t *testing.T) {
	t.Parallel()

	ctx := t.Context()
	const dim, n = 64, 3000
	r := rand.New(rand.NewPCG(1, 2))
	vs := vecs(r, n, dim)
	serial, err := inmem.New(dim, inmem.WithWorkers(1))
	require.NoError(t, err)
	par, err := inmem.New(dim, inmem.WithWorkers(4), inmem.WithParallelMin(1))
	require.NoError(t, err)
	for _, db := range []*inmem.DB{serial, par} {
		require.NoError(t, db.Add(ctx, testvec.IDs(0, n), vs))
	}
	qs := vecs(r, 20, dim)
	for _, k := range []int{1, 10, n} {
		for _, q := range qs {
			a, err := serial.Search(ctx, q, k)
			require.NoError(t, err)
			b, err := par.Search(ctx, q, k)
			require.NoError(t, err)
			assert.Equal(t, a, b, "k=%d", k)
		}
		a, err := serial.SearchBatch(ctx, qs, k)
		require.NoError(t, err)
		b, err := par.SearchBatch(ctx, qs, k)
		require.NoError(t, err)
		assert.Equal(t, a, b, "batch k=%d", k)
	}
}

// TestExportImport_PortablePath checks the element-by-element encoding used
// on big-endian machines against the memory-view fast path: same bytes, and
// each reads the other's stream.
func TestExportImport_PortablePath(t *testing.T) {
	const dim, n = 16, 300
	fast := exported(t, dim, n)
	restore := inmem.SetPortableIO()
	defer restore()
	slow := exported(t, dim, n)
	assert.Equal(t, fast, slow, "both paths write the same stream")
	db, err := inmem.New(dim)
	require.NoError(t, err)
	require.NoError(t, db.Import(t.Context(), bytes.NewReader(fast)))
	assert.Equal(t, n, db.Len())
	var again bytes.Buffer
	require.NoError(t, db.Export(t.Context(), &again))
	assert.Equal(t, fast, again.Bytes(), "a portable-path round trip is lossless")
}

func TestConformanceCodes(t *testing.T) {
	t.Parallel()

	vdbtest.Run(t, opener(inmem.WithCodes(inmem.Int8), inmem.WithCodesAlways()))
}

func TestConformanceCodesParallel(t *testing.T) {
	t.Parallel()

	vdbtest.Run(t, opener(inmem.WithCodes(inmem.Int8), inmem.WithCodesAlways(), inmem.WithParallelMin(1), inmem.WithWorkers(3)))
}

func TestConformanceCodesGeneric(t *testing.T) {
	t.Cleanup(inmem.SetGeneric())
	vdbtest.Run(t, opener(inmem.WithCodes(inmem.Int8), inmem.WithCodesAlways()))
}

// TestSearchBatch_Tiles checks batches that fill the float32 batch tiles
// (twelve queries at a time on AVX-512, through the bfloat16 pass with
// AVX-512 BF16; three on AVX2; the portable code otherwise) against one
// Search per query, on each path, serial and split
// across workers, over a row count that is neither a multiple of the
// four-row tile nor of a block: the same results, scores bit for bit. A
// database with int8 codes, whose rescoring uses the single-row kernel,
// must agree exactly as well.
func TestSearchBatch_Tiles(t *testing.T) {
	paths := []struct {
		name string
		set  func() func()
	}{
		{"default", func() func() { return func() {} }},
		{"no-bf16", inmem.SetNoBF16},
		{"no-avx512", inmem.SetNoAVX512},
		{"generic", inmem.SetGeneric},
	}
	ctx := t.Context()
	r := rand.New(rand.NewPCG(21, 22))
	for _, path := range paths {
		restore := path.set()
		for _, dim := range []int{13, 24, 48, 384} {
			const n = 1001
			vs := vecs(r, n, dim)
			qs := vecs(r, 31, dim)
			var dbs []*inmem.DB
			for _, opts := range [][]inmem.Option{
				nil,
				{inmem.WithWorkers(3), inmem.WithParallelMin(1)},
				{inmem.WithCodes(inmem.Int8), inmem.WithCodesAlways()},
			} {
				db, err := inmem.New(dim, opts...)
				require.NoError(t, err)
				require.NoError(t, db.Add(ctx, testvec.IDs(0, n), vs))
				dbs = append(dbs, db)
			}
			for _, k := range []int{1, 10, n} {
				want := make([][]vdb.Result, len(qs))
				for i, q := range qs {
					res, err := dbs[0].Search(ctx, q, k)
					require.NoError(t, err)
					want[i] = res
				}
				for j, db := range dbs {
					for _, nq := range []int{8, 12, 13, 31} {
						got, err := db.SearchBatch(ctx, qs[:nq], k)
						require.NoError(t, err)
						require.Equal(t, want[:nq], got, "%s dim=%d k=%d db %d batch of %d", path.name, dim, k, j, nq)
					}
				}
			}
			for _, db := range dbs {
				require.NoError(t, db.Close())
			}
		}
		restore()
	}
}

// TestAdd_BatchMatchesOneByOne checks that a batch large enough for Add to
// share its rows with helpers, with IDs given twice and IDs already
// stored, leaves what the same writes one at a time leave: the same
// vectors bit for bit (Export), and the same results, scores and order, of
// the codes' and the column codes' scans.
func TestAdd_BatchMatchesOneByOne(t *testing.T) {
	ctx := t.Context()
	for _, dim := range []int{48, 384} {
		t.Run(fmt.Sprintf("dim=%d", dim), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(dim), 3))
			opts := []inmem.Option{inmem.WithCodes(inmem.Int8), inmem.WithColumns(), inmem.WithCodesAlways()}
			batch, err := inmem.New(dim, opts...)
			require.NoError(t, err)
			t.Cleanup(func() { batch.Close() })
			single, err := inmem.New(dim, opts...)
			require.NoError(t, err)
			t.Cleanup(func() { single.Close() })
			first := testvec.Unit(1, 300, dim)
			require.NoError(t, batch.Add(ctx, testvec.IDs(0, 300), first))
			require.NoError(t, single.Add(ctx, testvec.IDs(0, 300), first))

			// 2,000 writes: new IDs, stored ones, and IDs repeated
			// within the batch, in random order.
			n := 2000
			ids := make([]int64, n)
			for i := range ids {
				ids[i] = int64(r.IntN(1500))
			}
			vecs := testvec.Unit(2, n, dim)
			for i := range vecs {
				if i%3 == 0 {
					slices.Reverse(vecs[i]) // not unit-length after scaling: a different norm path
					for j := range vecs[i] {
						vecs[i][j] *= 3
					}
				}
			}
			require.NoError(t, batch.Add(ctx, ids, vecs))
			for i := range ids {
				require.NoError(t, single.Add(ctx, ids[i:i+1], vecs[i:i+1]))
			}
			require.Equal(t, single.Len(), batch.Len())

			var a, b bytes.Buffer
			require.NoError(t, batch.Export(ctx, &a))
			require.NoError(t, single.Export(ctx, &b))
			require.True(t, bytes.Equal(a.Bytes(), b.Bytes()), "the stored vectors differ")

			queries := append(testvec.Unit(3, 20, dim), vecs[:5]...)
			sparse := make([]float32, dim) // few nonzero dimensions: the column scan
			sparse[1], sparse[dim/2] = 0.6, 0.8
			queries = append(queries, sparse)
			for i, q := range queries {
				got, err := batch.Search(ctx, q, 10)
				require.NoError(t, err)
				want, err := single.Search(ctx, q, 10)
				require.NoError(t, err)
				require.Equal(t, want, got, "query %d", i)
			}
		})
	}
}
