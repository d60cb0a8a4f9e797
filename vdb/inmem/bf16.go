package inmem

import (
	"math"

	"github.com/agentmem/agentmem/vdb"
)

// The float32 batch scan's bfloat16 pass. Where the CPU multiplies
// bfloat16 pairs (AVX-512 BF16: VDPBF16PS does two multiply-adds a lane
// where VFMADD231PS does one), a batch tile first scores each block of
// rows in bfloat16 — the block converted once for all the batch's
// queries, the queries once per batch — and rescores in float32, with the
// kernel every other path uses (dotRows), only the rows whose bfloat16
// score comes within bf16Slack of the query's current floor. The results
// are the float32 scan's, bit for bit: a row whose float32 score reaches
// the floor has a bfloat16 score no lower than the floor less the slack.

// bf16Rows is how many stored rows per result asked a batch needs to take
// the bfloat16 pass: until a query's top k fills, every row is rescored,
// so the pass pays only when k is small beside the rows.
const bf16Rows = 32

// bf16OverCodes is the fewest queries for which a batch over a database
// with codes takes the bfloat16 pass instead, where it runs: from about
// there the batch is bound by multiply-adds, which the pass does faster
// than the codes' kernels (BenchmarkBatchCodesBF16, 100k × 384: 0.81× the
// codes' time at 48 queries, 0.69× at 200; 0.86–1.10× at 24–32).
var bf16OverCodes = 48

// bf16Slack bounds |s̃ − s|, where s is dotRows' float32 score of two unit
// vectors of dimension d and s̃ dotRows12BF16's score of the same vectors
// rounded to bfloat16. Rounding a float32 to bfloat16 (8 significant
// bits, to nearest) moves it by at most 2⁻⁸ of itself, so each product
// q̃ⱼx̃ⱼ is within (2·2⁻⁸ + 2⁻¹⁶)·|qⱼxⱼ| of qⱼxⱼ; the products of two
// bfloat16 are exact in float32, and the kernel's float32 sums (d/8 + 3
// roundings a score) and dotRows' (at most d) add at most (2d + 8)·2⁻²⁴
// of Σ|qⱼxⱼ| more. Σ|qⱼxⱼ| ≤ ‖q‖·‖x‖ ≤ 1 + 2⁻¹⁶ for vectors normalised
// in float32. A subnormal read as zero moves a product by less than 2⁻¹²⁶.
// The bound below rounds all of this up, and leaves room for the float32
// subtraction floor − slack.
func bf16Slack(d int) float32 {
	e := (1.0/128 + 1.0/65536 + float64(2*d+8)/(1<<24)) * (1 + 1.0/65536)
	return float32(e * (1 + 1.0/1024))
}

// toBF16Generic sets dst[i] to src[i] rounded to bfloat16, to nearest,
// ties to even. (The assembly reads subnormals as zero; both are within
// bf16Slack.)
func toBF16Generic(dst []uint16, src []float32) {
	for i, f := range src {
		b := math.Float32bits(f)
		b += 0x7FFF + (b>>16)&1
		dst[i] = uint16(b >> 16)
	}
}

// bf16ToFloat32 is the float32 a bfloat16 stands for.
func bf16ToFloat32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// dotBF16Generic sets out[i] to the float32 sum of the products of the
// bfloat16 vector q with row i of rows (bfloat16, len(q) columns): what
// dotRows12BF16 computes, up to the order of its sums.
func dotBF16Generic(out []float32, q, rows []uint16) {
	d := len(q)
	for i := range out {
		var s float32
		for j, x := range rows[i*d : (i+1)*d] {
			s += bf16ToFloat32(q[j]) * bf16ToFloat32(x)
		}
		out[i] = s
	}
}

// packQueriesBF16 lays out up to tileQueries queries of dimension d (a
// multiple of 16) in bfloat16 for dotRows12BF16: for each 16-element chunk
// c, six 32-element vectors, vector p holding chunk c of query 2p then
// chunk c of query 2p+1. Missing queries are zeros.
func packQueriesBF16(qs [][]float32, d int) []uint16 {
	q16 := make([][]uint16, len(qs))
	for i, q := range qs {
		q16[i] = make([]uint16, d)
		toBF16Generic(q16[i], q)
	}
	return packPairs(q16, d, 16)
}

// offerBF16 offers the float32 scores of the rows [r, r+len(approx)) whose
// bfloat16 score approx[i] reaches t's floor less slack, rescored with
// dotRows against q; the rest cannot reach the floor.
func (db *DB) offerBF16(t *topK, q, approx []float32, r int, slack float32) {
	var one [1]float32
	for i := 0; ; i++ {
		i += skipBelow(approx[i:], t.floor-slack)
		if i >= len(approx) {
			return
		}
		dotRows(one[:], q, db.row(r+i))
		if one[0] >= t.floor {
			t.offer(vdb.Result{ID: db.ids[r+i], Score: one[0]})
		}
	}
}

// dotTileBF16 sets out[i][r] to the bfloat16 score of t.qs[i] with row r of
// rows16 (n rows of bfloat16, len(t.qs[0]) columns) through dotRows12BF16,
// and of the last n%4 rows, which the kernel leaves, their float32 score
// (dotRows over rows, the same rows in float32): no lower than their
// bfloat16 score could be less the slack, so offerBF16 treats them alike.
func dotTileBF16(out *[tileQueries][blockRows]float32, t *qtile, rows16 []uint16, rows []float32, n int) {
	d := len(t.qs[0])
	m := n &^ 3
	if m > 0 {
		_ = rows16[m*d-1]
		_ = t.bf16[tileQueries*d-1]
		dotRows12BF16(&out[0][0], blockRows*4, &t.bf16[0], &rows16[0], m, d)
	}
	if m < n {
		for i, q := range t.qs {
			dotRows(out[i][m:n], q, rows[m*d:n*d])
		}
	}
}
