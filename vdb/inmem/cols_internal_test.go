package inmem

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDotCols checks the column kernel of every path (AVX-512, AVX2,
// portable; those the CPU lacks fall back to the next) against an int64
// reference, with the codes' extremes and int16 query codes.
func TestDotCols(t *testing.T) {
	paths := []struct {
		name         string
		avx2, avx512 bool
	}{{"avx512", useAVX2, useAVX512}, {"avx2", useAVX2, false}, {"generic", false, false}}
	r := rand.New(rand.NewPCG(3, 4))
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			old2, old512 := useAVX2, useAVX512
			useAVX2, useAVX512 = p.avx2, p.avx512
			t.Cleanup(func() { useAVX2, useAVX512 = old2, old512 })
			for _, d := range []int{1, 3, 64, 384, 512} {
				for trial := range 6 {
					blk := make([]int8, blockRows*d)
					for i := range blk {
						blk[i] = int8(r.IntN(2*codeMax+1) - codeMax)
						if trial == 0 {
							blk[i] = -codeMax
						}
					}
					a := make([]int16, d)
					qmax := queryMax(d)
					for range 1 + r.IntN(d) {
						v := r.IntN(2*qmax+1) - qmax
						if trial == 0 {
							v = qmax
						}
						a[r.IntN(d)] = int16(v)
					}
					var tm colTerms
					for j, v := range a {
						if v != 0 {
							tm.offs = append(tm.offs, int64(j*blockRows))
							tm.as = append(tm.as, int32(v))
						}
					}
					var got [blockRows]int32
					for i := range got {
						got[i] = 12345 // overwritten
					}
					dotCols(&got, tm, blk)
					for i := range blockRows {
						var want int64
						for j := range d {
							want += int64(a[j]) * int64(blk[j*blockRows+i])
						}
						require.Equal(t, want, int64(got[i]), "d=%d trial=%d row %d", d, trial, i)
					}
				}
			}
		})
	}
}

// checkColumns asserts that db's column codes hold every row's code.
func checkColumns(t *testing.T, db *DB, what string) {
	t.Helper()
	db.mu.RLock()
	defer db.mu.RUnlock()
	d := db.dim
	require.Equal(t, db.colsLen(len(db.ids)), len(db.cols), what)
	for r := range db.ids {
		blk := db.colBlock(r / blockRows)
		for j := range d {
			if blk[j*blockRows+r%blockRows] != db.code[r*d+j] {
				t.Fatalf("%s: row %d dimension %d: column %d, code %d", what, r, j, blk[j*blockRows+r%blockRows], db.code[r*d+j])
			}
		}
	}
}

// TestColumns_Layout checks that the column codes follow the row-major
// codes through adds, replacements, deletes (the last row moving into the
// hole, the last block emptying), growth, shrinking and Import.
func TestColumns_Layout(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, dim := range []int{3, 64} {
		t.Run(fmt.Sprintf("dim=%d", dim), func(t *testing.T) {
			db, err := New(dim, WithCodes(Int8), WithColumns(), WithWorkers(3))
			require.NoError(t, err)
			defer db.Close()
			vec := func() []float32 { return randFloats(r, dim) }
			add := func(ids ...int64) {
				vs := make([][]float32, len(ids))
				for i := range vs {
					vs[i] = vec()
				}
				require.NoError(t, db.Add(t.Context(), ids, vs))
			}
			var ids []int64
			for i := range int64(1100) {
				ids = append(ids, i)
			}
			add(ids...) // coded across workers
			checkColumns(t, db, "fresh")
			add(5, 700, 1099, 2000) // replacements and one new row
			checkColumns(t, db, "replaced")
			for i := range 900 {
				_, err := db.Delete(t.Context(), int64((i*7)%1100))
				require.NoError(t, err)
			}
			checkColumns(t, db, "deleted")
			add(3000, 3001)
			checkColumns(t, db, "grown again")
			var buf bytes.Buffer
			require.NoError(t, db.Export(t.Context(), &buf))
			fresh, err := New(dim, WithCodes(Int8), WithColumns())
			require.NoError(t, err)
			defer fresh.Close()
			require.NoError(t, fresh.Import(t.Context(), &buf))
			checkColumns(t, fresh, "imported")
		})
	}
}

// TestWithColumns_NeedsCodes: columns copy the int8 codes.
func TestWithColumns_NeedsCodes(t *testing.T) {
	_, err := New(8, WithColumns())
	require.ErrorContains(t, err, "int8")
}

// TestColumns_IVF: an IVF frees its DB's column codes while its index is
// trained (its searches scan the lists) and rebuilds them when the index
// is dropped.
func TestColumns_IVF(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 7))
	const dim = 16
	x, err := NewIVF(dim, IVFConfig{MinRows: 1000, ListRows: 100}, WithCodes(Int8), WithColumns())
	require.NoError(t, err)
	defer x.Close()
	add := func(lo, hi int) {
		ids, vs := make([]int64, 0, hi-lo), make([][]float32, 0, hi-lo)
		for i := lo; i < hi; i++ {
			ids, vs = append(ids, int64(i)), append(vs, randFloats(r, dim))
		}
		require.NoError(t, x.Add(t.Context(), ids, vs))
	}
	add(0, 500)
	checkColumns(t, x.db, "below MinRows")
	add(500, 1200)
	require.NoError(t, x.WaitTrained(t.Context()))
	require.Positive(t, x.Lists())
	require.Nil(t, x.db.cols, "trained: no columns")
	for i := range 900 {
		_, err := x.Delete(t.Context(), int64(i))
		require.NoError(t, err)
	}
	require.Zero(t, x.Lists())
	checkColumns(t, x.db, "index dropped")
}
