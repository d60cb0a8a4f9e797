package vdb_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/vdb"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name string
		in   []float32
		want []float32
	}{
		{"Unit", []float32{0, 1, 0}, []float32{0, 1, 0}},
		{"Scaled", []float32{3, 4}, []float32{0.6, 0.8}},
		{"Negative", []float32{-3, 0, 4}, []float32{-0.6, 0, 0.8}},
		{"Tiny", []float32{3e-40, 4e-40}, []float32{0.6, 0.8}},             // subnormal float32s
		{"Huge", []float32{3e38, 3e38}, []float32{0.70710677, 0.70710677}}, // squares overflow float32
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := make([]float32, len(tt.in))
			require.NoError(t, vdb.Normalize(dst, tt.in))
			assert.InDeltaSlice(t, tt.want, dst, 1e-6)
			// In place.
			in := slices.Clone(tt.in)
			require.NoError(t, vdb.Normalize(in, in))
			assert.Equal(t, dst, in, "dst and src may be the same slice")
		})
	}
}

func TestNormalize_Error(t *testing.T) {
	tests := []struct {
		name string
		dst  []float32
		src  []float32
		want error
	}{
		{"NaN", make([]float32, 2), []float32{1, float32(math.NaN())}, vdb.ErrInvalidVector},
		{"PosInf", make([]float32, 2), []float32{float32(math.Inf(1)), 1}, vdb.ErrInvalidVector},
		{"NegInf", make([]float32, 2), []float32{1, float32(math.Inf(-1))}, vdb.ErrInvalidVector},
		{"Zero", make([]float32, 3), make([]float32, 3), vdb.ErrInvalidVector},
		{"Empty", nil, nil, vdb.ErrInvalidVector},
		{"LenMismatch", make([]float32, 2), []float32{1, 2, 3}, vdb.ErrDimension},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := slices.Clone(tt.dst)
			err := vdb.Normalize(dst, tt.src)
			assert.ErrorIs(t, err, tt.want)
			assert.Equal(t, tt.dst, dst, "a failed Normalize leaves dst alone")
		})
	}
}

func TestCheckVector(t *testing.T) {
	tests := []struct {
		name string
		v    []float32
		dim  int
		want error
	}{
		{"OK", []float32{0, 0, 1e-30}, 3, nil},
		{"Short", []float32{1, 2}, 3, vdb.ErrDimension},
		{"Long", []float32{1, 2, 3, 4}, 3, vdb.ErrDimension},
		{"Nil", nil, 3, vdb.ErrDimension},
		{"NaN", []float32{1, float32(math.NaN()), 3}, 3, vdb.ErrInvalidVector},
		{"Inf", []float32{1, 2, float32(math.Inf(-1))}, 3, vdb.ErrInvalidVector},
		{"Zero", []float32{0, 0, 0}, 3, vdb.ErrInvalidVector},
		{"NegZero", []float32{float32(math.Copysign(0, -1)), 0, 0}, 3, vdb.ErrInvalidVector},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := vdb.CheckVector(tt.v, tt.dim)
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, tt.want)
		})
	}
}

// TestSquaredNormScale checks that SquaredNorm checks as CheckVector does
// and that Scale with its sum writes what Normalize writes, bit for bit,
// over magnitudes from subnormal to near the float32 maximum.
func TestSquaredNormScale(t *testing.T) {
	for _, tt := range []struct {
		name string
		v    []float32
		dim  int
	}{
		{"Short", []float32{1, 2}, 3},
		{"NaN", []float32{1, float32(math.NaN()), 3}, 3},
		{"Zero", []float32{0, 0, 0}, 3},
	} {
		_, err := vdb.SquaredNorm(tt.v, tt.dim)
		assert.Equal(t, vdb.CheckVector(tt.v, tt.dim), err, tt.name)
		assert.Error(t, err, tt.name)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		dim := 1 + r.IntN(600)
		scale := math.Pow(10, float64(r.IntN(70)-40))
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64() * scale)
		}
		v[r.IntN(dim)] = float32(scale) // never all zero
		sq, err := vdb.SquaredNorm(v, dim)
		require.NoError(t, err, "vector %d", i)
		want := make([]float32, dim)
		require.NoError(t, vdb.Normalize(want, v))
		got := make([]float32, dim)
		vdb.Scale(got, v, sq)
		require.Equal(t, want, got, "vector %d (scale %g)", i, scale)
		vdb.Scale(v, v, sq) // in place, as Normalize allows
		require.Equal(t, want, v, "vector %d in place", i)
	}
}

// fake is a VectorDatabase with none of the optional interfaces: it answers
// Search from a fixed list, so the helpers' fallbacks can be observed.
type fake struct {
	results []vdb.Result
	calls   int
	err     error
}

func (f *fake) Dim() int { return 2 }
func (f *fake) Len() int { return len(f.results) }
func (f *fake) Add(context.Context, []int64, [][]float32) error {
	return errors.ErrUnsupported
}
func (f *fake) Search(ctx context.Context, q []float32, k int) ([]vdb.Result, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	if k <= 0 {
		return nil, vdb.ErrInvalidK
	}
	return slices.Clone(f.results[:min(k, len(f.results))]), nil
}
func (f *fake) Delete(context.Context, ...int64) (int, error) { return 0, nil }
func (f *fake) Close() error                                  { return nil }

func TestSearchMinScore_Fallback(t *testing.T) {
	f := &fake{results: []vdb.Result{{1, 0.9}, {2, 0.5}, {3, 0.3}, {4, -0.2}}}
	res, err := vdb.SearchMinScore(t.Context(), f, []float32{1, 0}, 3, 0.5)
	require.NoError(t, err)
	assert.Equal(t, []vdb.Result{{1, 0.9}, {2, 0.5}}, res, "Score ≥ minScore, among the top k")
	res, err = vdb.SearchMinScore(t.Context(), f, []float32{1, 0}, 10, -1)
	require.NoError(t, err)
	assert.Len(t, res, 4)
	f.err = vdb.ErrClosed
	_, err = vdb.SearchMinScore(t.Context(), f, []float32{1, 0}, 10, 0)
	assert.ErrorIs(t, err, vdb.ErrClosed)
}

func TestSearchBatch_Fallback(t *testing.T) {
	f := &fake{results: []vdb.Result{{1, 0.9}, {2, 0.5}}}
	res, err := vdb.SearchBatch(t.Context(), f, [][]float32{{1, 0}, {0, 1}, {1, 1}}, 1)
	require.NoError(t, err)
	assert.Equal(t, [][]vdb.Result{{{1, 0.9}}, {{1, 0.9}}, {{1, 0.9}}}, res)
	assert.Equal(t, 3, f.calls, "one Search per query")

	res, err = vdb.SearchBatch(t.Context(), f, nil, 1)
	require.NoError(t, err)
	assert.Empty(t, res)

	_, err = vdb.SearchBatch(t.Context(), f, nil, 0)
	assert.ErrorIs(t, err, vdb.ErrInvalidK, "k is checked even without queries")

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = vdb.SearchBatch(ctx, f, nil, 1)
	assert.ErrorIs(t, err, context.Canceled)

	f.err = vdb.ErrClosed
	_, err = vdb.SearchBatch(t.Context(), f, [][]float32{{1, 0}}, 1)
	assert.ErrorIs(t, err, vdb.ErrClosed)
}

func TestSaveLoad_Unsupported(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.vdb")
	err := vdb.Save(t.Context(), &fake{}, path)
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	assert.NoFileExists(t, path)
	err = vdb.Load(t.Context(), &fake{}, path)
	assert.ErrorIs(t, err, errors.ErrUnsupported)
}

// persister stores one byte string.
type persister struct {
	fake
	data      []byte
	exportErr error
}

func (p *persister) Export(ctx context.Context, w io.Writer) error {
	if p.exportErr != nil {
		w.Write([]byte("partial"))
		return p.exportErr
	}
	_, err := w.Write(p.data)
	return err
}

func (p *persister) Import(ctx context.Context, r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if string(b) == "bad" {
		return vdb.ErrCorrupt
	}
	p.data = b
	return nil
}

func TestSaveLoad(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "x.vdb")
	require.NoError(t, vdb.Save(ctx, &persister{data: []byte("hello")}, path))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(b))

	var p persister
	require.NoError(t, vdb.Load(ctx, &p, path))
	assert.Equal(t, "hello", string(p.data))

	// A failed Save leaves the old file and no temporary files behind.
	err = vdb.Save(ctx, &persister{exportErr: io.ErrShortWrite}, path)
	assert.ErrorIs(t, err, io.ErrShortWrite)
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(b), "a failed Save leaves the old file intact")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "a failed Save leaves no temporary file")

	// Load errors name the file and keep the cause.
	require.NoError(t, os.WriteFile(path, []byte("bad"), 0o600))
	err = vdb.Load(ctx, &p, path)
	assert.ErrorIs(t, err, vdb.ErrCorrupt)
	assert.Contains(t, err.Error(), path)
	err = vdb.Load(ctx, &p, filepath.Join(dir, "missing.vdb"))
	assert.ErrorIs(t, err, fs.ErrNotExist)

}
