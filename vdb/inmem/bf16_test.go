package inmem

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/vdb"
)

// TestToBF16 checks the conversion to bfloat16 (the assembly where the CPU
// has AVX-512 BF16, against the portable code, and the portable code
// against the definition): to nearest, ties to even, at every length
// around the 16-float steps.
func TestToBF16(t *testing.T) {
	// Exact ties: 1 + 2⁻⁸ lies halfway between 1 and 1 + 2⁻⁷ and rounds to
	// the even 1; 1 + 3·2⁻⁸ halfway between 1 + 2⁻⁷ and 1 + 2⁻⁶ rounds up
	// to 1 + 2⁻⁶.
	cases := map[float32]float32{
		1:                   1,
		1 + 0x1p-8:          1,
		1 + 3*0x1p-8:        1 + 0x1p-6,
		1 + 0x1p-8 + 1e-7:   1 + 0x1p-7,
		-(1 + 3*0x1p-8):     -(1 + 0x1p-6),
		0x1p-100:            0x1p-100,
		math.MaxFloat32 / 4: math.Float32frombits((math.Float32bits(math.MaxFloat32/4) + 0x7FFF + 1) &^ 0xFFFF),
	}
	for in, want := range cases {
		var got [1]uint16
		toBF16Generic(got[:], []float32{in})
		assert.Equal(t, want, bf16ToFloat32(got[0]), "%v", in)
	}
	r := rand.New(rand.NewPCG(41, 42))
	for _, n := range []int{1, 15, 16, 17, 33, 384, 1000} {
		src := randFloats(r, n)
		for i := 0; i < n; i += 5 { // ties
			src[i] = math.Float32frombits(math.Float32bits(src[i])&^0xFFFF | 0x8000)
		}
		want, got := make([]uint16, n), make([]uint16, n)
		toBF16Generic(want, src)
		toBF16(got, src)
		require.Equal(t, want, got, "n=%d", n)
		for i, f := range src {
			b := bf16ToFloat32(want[i])
			assert.LessOrEqual(t, math.Abs(float64(b-f)), math.Abs(float64(f))*0x1p-8, "n=%d %v → %v", n, f, b)
		}
	}
}

// unitVecs returns n random unit vectors of dimension d, normalised as the
// database normalises what it stores.
func unitVecs(r *rand.Rand, n, d int) [][]float32 {
	vs := make([][]float32, n)
	for i := range vs {
		vs[i] = make([]float32, d)
		if err := vdb.Normalize(vs[i], randFloats(r, d)); err != nil {
			panic(err)
		}
	}
	return vs
}

// TestDotTileBF16 checks the bfloat16 tile (where the CPU has AVX-512
// BF16) against the portable bfloat16 products, and its scores against
// the float32 ones within bf16Slack — on random unit vectors and on the
// worst case for rounding, vectors whose every element lies just below a
// bfloat16 midpoint — for dimensions, row and query counts around the
// kernel's steps (16 elements, four rows, tileMin to twelve queries).
func TestDotTileBF16(t *testing.T) {
	if !useTileBF16(16, tileQueries) {
		t.Skip("no AVX-512 BF16 here: the bfloat16 pass never runs (TestSearchBatch_Tiles checks the float32 paths)")
	}
	r := rand.New(rand.NewPCG(43, 44))
	maxErr := map[bool]float64{}
	defer func() {
		t.Logf("largest error / slack: random %.3f, worst case %.3f", maxErr[false], maxErr[true])
		assert.Greater(t, maxErr[true], 0.5, "the worst case should come near the bound")
	}()
	for _, d := range []int{16, 32, 48, 384, 400} {
		slack := bf16Slack(d)
		for _, worst := range []bool{false, true} {
			for _, n := range []int{1, 4, 5, 7, 128} {
				vs := unitVecs(r, n+tileQueries, d)
				if worst {
					// Every element near 2^-k·(1 + 2⁻⁸ − ε): rounds down by
					// almost its half unit, all in the same direction, so the
					// errors add up instead of cancelling.
					for _, v := range vs {
						for j := range v {
							v[j] = float32(math.Copysign((1+0x1p-8-0x1p-20)/math.Sqrt(float64(d)), float64(r.NormFloat64())))
						}
					}
				}
				rows := make([]float32, 0, n*d)
				for _, v := range vs[:n] {
					rows = append(rows, v...)
				}
				rows16 := make([]uint16, len(rows))
				toBF16(rows16, rows)
				for _, nq := range []int{tileMin, 11, tileQueries} {
					qs := vs[n : n+nq]
					tiles := makeTiles(qs, d, true)
					require.NotNil(t, tiles[0].bf16)
					var out [tileQueries][blockRows]float32
					dotTileBF16(&out, &tiles[0], rows16, rows, n)
					q16 := make([]uint16, d)
					var ref, exact [1]float32
					for i, q := range qs {
						toBF16Generic(q16, q)
						for row := range n {
							got := out[i][row]
							dotRows(exact[:], q, rows[row*d:(row+1)*d])
							if row >= n&^3 { // the tail: float32
								require.Equal(t, math.Float32bits(exact[0]), math.Float32bits(got), "d=%d n=%d row %d", d, n, row)
								continue
							}
							dotBF16Generic(ref[:], q16, rows16[row*d:(row+1)*d])
							require.InDelta(t, ref[0], got, float64(d)*0x1p-24, "d=%d n=%d nq=%d query %d row %d", d, n, nq, i, row)
							if e := math.Abs(float64(got-exact[0])) / float64(slack); e > maxErr[worst] {
								maxErr[worst] = e
							}
							require.LessOrEqual(t, math.Abs(float64(got-exact[0])), float64(slack), "d=%d worst=%v query %d row %d", d, worst, i, row)
						}
					}
				}
			}
		}
	}
}

// TestBF16Slack checks the bound's size: about 2⁻⁷, the most that
// rounding both factors of every product to bfloat16 can move a dot
// product of unit vectors, and a little more for larger d.
func TestBF16Slack(t *testing.T) {
	assert.InDelta(t, 0x1p-7, bf16Slack(16), 0x1p-7/100)
	assert.InDelta(t, 0x1p-7, bf16Slack(384), 0x1p-7/50)
	assert.Less(t, bf16Slack(384), bf16Slack(4096))
}

// TestSearchBatch_BF16Ties checks the bfloat16 pass where it is hardest to
// stay exact: rows whose float32 scores differ by far less than bf16Slack,
// identical rows (ties broken by ID), and the query itself among the rows.
// The batch must give the float32 tile's results bit for bit, at every k,
// serial and split across workers.
func TestSearchBatch_BF16Ties(t *testing.T) {
	ctx := t.Context()
	r := rand.New(rand.NewPCG(45, 46))
	const d = 384
	qs := unitVecs(r, 20, d)
	var vecs [][]float32
	for _, q := range qs[:5] {
		vecs = append(vecs, q)
		for k := range 40 { // neighbours of q a hair apart
			v := make([]float32, d)
			copy(v, q)
			v[k%d] += float32(k+1) * 1e-6
			v[(k*7+3)%d] -= float32(k) * 1e-6
			vecs = append(vecs, v, v) // each twice
		}
	}
	vecs = append(vecs, unitVecs(r, 2000, d)...)
	ids := make([]int64, len(vecs))
	for i := range ids {
		ids[i] = int64(len(vecs) - i) // IDs not in row order
	}
	for _, opts := range [][]Option{nil, {WithWorkers(3), WithParallelMin(1)}} {
		db, err := New(d, opts...)
		require.NoError(t, err)
		require.NoError(t, db.Add(ctx, ids, vecs))
		for _, k := range []int{1, 10, 81, 200} {
			got, want := batchBothWays(t, db, qs, k)
			require.Equal(t, want, got, "k=%d", k)
		}
		require.NoError(t, db.Close())
	}
}

// TestSearchBatch_CodesBF16 checks a batch large enough to leave a
// database's codes for the bfloat16 pass (bf16OverCodes queries or more)
// against the same batch through the codes: the same results.
func TestSearchBatch_CodesBF16(t *testing.T) {
	ctx := t.Context()
	r := rand.New(rand.NewPCG(47, 48))
	const n, d = 3000, 64
	vs := unitVecs(r, n, d)
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i * 3)
	}
	db, err := New(d, WithCodes(Int8), WithCodesAlways())
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.Add(ctx, ids, vs))
	qs := unitVecs(r, bf16OverCodes+5, d)
	copy(qs[0], vs[7]) // a stored vector among the queries
	for _, k := range []int{1, 10, 90} {
		db.ResetRescored()
		got, err := db.SearchBatch(ctx, qs, k)
		require.NoError(t, err)
		viaBF16 := db.Rescored() == 0 // the codes' rescoring counts; the pass's does not
		restore := SetNoBF16()
		want, err := db.SearchBatch(ctx, qs, k)
		restore()
		require.NoError(t, err)
		require.Equal(t, want, got, "k=%d", k)
		assert.Equal(t, useTileBF16(d, tileQueries), viaBF16, "k=%d: the path taken", k)
		assert.Equal(t, int64(7*3), got[0][0].ID)
	}
}

// TestSearchBatch_BF16Random checks random shapes — dimensions that are
// multiples of 16, row counts that straddle blocks and the four-row tile,
// k from 1 to the pass's limit, batches from tileMin queries, one worker
// or three — each batch against the same batch with the pass off: the
// same results, scores bit for bit. Half the queries are stored rows
// nudged by less than the slack, so that many rows land within it.
func TestSearchBatch_BF16Random(t *testing.T) {
	ctx := t.Context()
	r := rand.New(rand.NewPCG(49, 50))
	for iter := range 40 {
		d := 16 * (1 + r.IntN(32))
		n := 1 + r.IntN(3000)
		vs := unitVecs(r, n, d)
		ids := make([]int64, n)
		for i, p := range r.Perm(n) {
			ids[i] = int64(p) * 7919 // unique, not in row order
		}
		var opts []Option
		if iter%2 == 1 {
			opts = []Option{WithWorkers(3), WithParallelMin(1)}
		}
		db, err := New(d, opts...)
		require.NoError(t, err)
		require.NoError(t, db.Add(ctx, ids, vs))
		qs := unitVecs(r, tileMin+r.IntN(30), d)
		for i := 0; i < len(qs); i += 2 {
			copy(qs[i], vs[r.IntN(n)])
			qs[i][r.IntN(d)] += 1e-3
		}
		k := 1 + r.IntN(max(1, n/bf16Rows))
		got, want := batchBothWays(t, db, qs, k)
		require.Equal(t, want, got, "d=%d n=%d k=%d queries=%d", d, n, k, len(qs))
		require.NoError(t, db.Close())
	}
}

// batchBothWays returns db's answers to the batch qs with the bfloat16
// pass where it runs (got) and with it off (want).
func batchBothWays(t *testing.T, db *DB, qs [][]float32, k int) (got, want [][]vdb.Result) {
	t.Helper()
	got, err := db.SearchBatch(t.Context(), qs, k)
	require.NoError(t, err)
	defer SetNoBF16()()
	want, err = db.SearchBatch(t.Context(), qs, k)
	require.NoError(t, err)
	return got, want
}
