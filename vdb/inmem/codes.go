package inmem

import (
	"fmt"
	"math"
)

// Codes selects a compressed copy of the vectors that [WithCodes] keeps
// beside the float32 rows, so that a search reads fewer bytes.
type Codes uint8

const (
	// NoCodes keeps only the float32 rows (the default): every search
	// scans them all.
	NoCodes Codes = iota
	// Int8 keeps one signed byte per dimension and 16 bytes per row (a
	// scale, two norms and the codes' sum): for d=384 that is 400 bytes
	// beside the 1,536 of the float32 row, 0.26× the raw size. A search scans the codes (a
	// quarter of the bytes) and rescores in float32 only the rows whose
	// code score, widened by a proven error bound, could still reach the
	// current k-th best score. Results are identical to the float32 scan:
	// same IDs, same scores, same order.
	Int8
)

// String returns the name of c.
func (c Codes) String() string {
	switch c {
	case NoCodes:
		return "none"
	case Int8:
		return "int8"
	}
	return fmt.Sprintf("Codes(%d)", uint8(c))
}

// WithCodes keeps a compressed code of every vector beside its float32 row
// (see [Int8]) and makes searches scan the codes, rescoring in float32 only
// the rows that could make the top k. Results are exactly those of the plain
// float32 scan. A database of fewer than 8,192 rows, or of fewer than 32
// rows per result asked, is still scanned in float32: its rows stay in
// cache and the codes would not pay. It costs memory (0.26× the vectors'
// size at d=384, Int8) and
// a little time in Add, Delete and Import; it pays off on databases too large
// for the CPU caches, whose plain scans are bound by memory bandwidth. The
// export format does not change: Import recomputes the codes.
func WithCodes(c Codes) Option {
	return func(db *DB) error {
		switch c {
		case NoCodes, Int8:
		default:
			return fmt.Errorf("inmem: unknown codes %d", uint8(c))
		}
		if c == Int8 && queryMax(db.dim) < 1 {
			return fmt.Errorf("inmem: dimension %d too large for int8 codes", db.dim)
		}
		db.codes = c
		return nil
	}
}

// rowMeta is what a row's code needs besides its bytes: the scale s of the
// code c (x̂ = s·c), ‖x − x̂‖ and ‖x‖, both rounded up.
type rowMeta struct {
	scale, rnorm, xnorm float32
	csum                int32 // Σ c_j, for the byte kernel's offset
}

// codeMax is the largest code magnitude: codes lie in [-127, 127], so that
// negation never overflows.
const codeMax = 127

// queryMax returns the largest magnitude a query's int16 code may take for
// dimension d such that Σ|a_j·c_j| ≤ d·codeMax·queryMax < 2³¹: every partial
// sum the kernels form, in any order, then fits in an int32.
func queryMax(d int) int {
	return min(math.MaxInt16, math.MaxInt32/(codeMax*d))
}

// roundUp32 returns a float32 ≥ v (v ≥ 0, finite).
func roundUp32(v float64) float32 {
	f := float32(v)
	if float64(f) < v {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}

// relErr is a bound on the relative error of a float64 sum of squares of n
// terms and its square root, generously rounded up.
func relErr(n int) float64 { return float64(n+8) * 0x1p-52 }

// encodeRow writes x's int8 code into dst and returns its metadata.
func encodeRow(dst []int8, x []float32) rowMeta {
	// The largest |x_j|: for finite floats the order of their magnitudes'
	// bits is theirs, and an integer max costs less than a float one.
	var mb uint32
	j := 0
	if useAVX2 && len(x) >= 8 {
		j = len(x) &^ 7
		mb = absMaxBitsAVX2(&x[0], j)
	}
	for _, v := range x[j:] {
		mb = max(mb, math.Float32bits(v)&^(1<<31))
	}
	m := math.Float32frombits(mb)
	if m == 0 {
		clear(dst)
		var xn float64 // the row is zero: x̂ = x = 0, no residual
		return rowMeta{scale: 0, rnorm: 0, xnorm: roundUp32(xn)}
	}
	s := m / codeMax
	if s == 0 { // subnormal m
		s = math.SmallestNonzeroFloat32
	}
	// Any integer c in [-codeMax, codeMax] is a valid code: the bound needs
	// only the residual of the code actually chosen. Multiplying by the
	// reciprocal and rounding with the 1.5·2⁵² trick (to the nearest, ties
	// to even, for |t| < 2⁵¹) avoids a division and a call per element;
	// the clamp is on integers; two partial sums per norm halve the
	// additions' dependency chains (relErr bounds any order of summation).
	inv, sf := 1/float64(s), float64(s)
	const magic = 0x1.8p52
	var r2, r2b, x2, x2b float64
	var csum int32
	dst = dst[:len(x)]
	code := func(v float32) (int32, float64, float64) {
		fv := float64(v)
		c := int32((float64(fv*inv) + magic) - magic)
		c = max(-codeMax, min(codeMax, c))
		// s·c is exact in float64 (24 + 8 bits) and so is the difference
		// with a float32 of comparable size; any rounding left is covered
		// by relErr.
		return c, fv - float64(sf*float64(c)), fv
	}
	j = 0
	if useAVX2 && len(x) >= 4 {
		// The same codes, four at a time (encodeRowAVX2).
		j = len(x) &^ 3
		csum, r2, x2 = encodeRowAVX2(&dst[0], &x[0], j, inv, sf)
	}
	for ; j+1 < len(x); j += 2 {
		c0, r0, f0 := code(x[j])
		c1, r1, f1 := code(x[j+1])
		dst[j], dst[j+1] = int8(c0), int8(c1)
		csum += c0 + c1
		r2 += r0 * r0
		r2b += r1 * r1
		x2 += f0 * f0
		x2b += f1 * f1
	}
	if j < len(x) {
		c0, r0, f0 := code(x[j])
		dst[j] = int8(c0)
		csum += c0
		r2 += r0 * r0
		x2 += f0 * f0
	}
	r2, x2 = r2+r2b, x2+x2b
	e := 1 + relErr(len(x))
	return rowMeta{scale: s, rnorm: roundUp32(math.Sqrt(r2) * e), xnorm: roundUp32(math.Sqrt(x2) * e), csum: csum}
}

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

// qcode is a normalised query prepared for a scan over int8 codes: its
// int16 code a (q̂ = scale·a) and the coefficients of the row bound.
type qcode struct {
	a     []int16
	scale float64 // q̂ = scale·a
	// The bound on the float32 score of row x is
	//   scale·s_x·I + ra·‖r_x‖ + xa·‖x‖
	// with I = a·c_x; see bound.
	ra, xa float64
}

// encodeQuery prepares q (already normalised, as the float32 scan uses it)
// for a scan over int8 codes.
//
// Why a row may be skipped. Let x be a stored row, x̂ = s·c its code and
// r = x − x̂; q the query, q̂ = σ·a its code and e = q − q̂. In exact
// arithmetic
//
//	q·x = q̂·x + e·x = q̂·x̂ + q̂·r + e·x
//	    ≤ σ·s·I + ‖q̂‖·‖r‖ + ‖e‖·‖x‖              (Cauchy–Schwarz)
//
// where I = Σ a_j·c_j is computed exactly in int32 (queryMax rules out
// overflow). The float32 kernel computes q·x with d products and at most d
// further roundings in whatever order it sums them, so its result s_f obeys
// the classical bound |s_f − q·x| ≤ γ·Σ|q_j·x_j| ≤ γ·‖q‖·‖x‖, with
// γ = n·u/(1 − n·u), u = 2⁻²⁴, n = d+1. Hence
//
//	s_f ≤ σ·s·I + ‖q̂‖·‖r‖ + (‖e‖ + γ·‖q‖)·‖x‖.
//
// The norms are computed in float64 and inflated by relErr, stored norms are
// rounded up to float32, and bound adds a relative margin far larger than
// the float64 rounding of its own few operations. So when bound < the
// current k-th score (the heap's floor, itself a float32 s_f), the row's own
// s_f is strictly below it and it cannot enter the top k, whatever the tie
// order: skipping it leaves the result unchanged. Every other row is
// rescored by the float32 kernel itself, so the scores returned are the
// plain scan's, bit for bit.
func encodeQuery(q []float32) qcode { return encodeQueryMax(q, queryMax(len(q))) }

// byteQueryMax is the query code range of the byte kernel (a+128 must fit
// in a uint8).
const byteQueryMax = 127

// byteQueries reports whether the byte kernel's query codes suit dimension
// d: Σ|a_j·c_j| ≤ d·127·127 must fit in an int32.
func byteQueries(d int) bool { return d*byteQueryMax*codeMax <= math.MaxInt32 }

// encodeQueryBytes is encodeQuery with codes in [-127, 127], also returned
// offset by 128 as the unsigned bytes the VNNI byte kernel takes. The bound
// is the same, with the coarser q̂.
func encodeQueryBytes(q []float32) (qcode, []uint8) {
	qc := encodeQueryMax(q, byteQueryMax)
	u := make([]uint8, len(q))
	for j, a := range qc.a {
		u[j] = uint8(a + 128)
	}
	return qc, u
}

func encodeQueryMax(q []float32, qmax int) qcode {
	d := len(q)
	var m float32
	for _, v := range q {
		m = max(m, abs32(v))
	}
	qm := float64(qmax)
	sigma := float64(m) / qm // m > 0: the query is normalised
	a := make([]int16, d)
	var e2, h2, q2 float64
	for j, v := range q {
		c := math.RoundToEven(float64(v) / sigma)
		c = max(-qm, min(qm, c))
		a[j] = int16(c)
		h := sigma * c
		e := float64(v) - h
		e2 += e * e
		h2 += h * h
		q2 += float64(v) * float64(v)
	}
	re := 1 + relErr(d)
	n := float64(d + 1)
	gamma := n * 0x1p-24 / (1 - n*0x1p-24)
	return qcode{
		a:     a,
		scale: sigma,
		ra:    math.Sqrt(h2) * re,
		xa:    (math.Sqrt(e2)*re + gamma*math.Sqrt(q2)*re) * re,
	}
}

// bound returns an upper bound on the float32 kernel's score of a row with
// code product dot and metadata m (see encodeQuery).
func (qc *qcode) bound(dot int32, m rowMeta) float64 {
	t := qc.scale * float64(m.scale) * float64(dot)
	sl := qc.ra*float64(m.rnorm) + qc.xa*float64(m.xnorm)
	return t + sl + 1e-12*(math.Abs(t)+sl)
}

// blockMax holds the largest scale and norms over a block of rows, for
// qcode.cut.
type blockMax struct{ scale, rnorm, xnorm float64 }

func blockMaxima(meta []rowMeta) blockMax {
	var m rowMeta
	for _, x := range meta {
		m.scale = max(m.scale, x.scale)
		m.rnorm = max(m.rnorm, x.rnorm)
		m.xnorm = max(m.xnorm, x.xnorm)
	}
	return blockMax{float64(m.scale), float64(m.rnorm), float64(m.xnorm)}
}

// cut returns an integer J such that every row of a block with maxima bm
// whose code product is ≤ J has bound < floor, so that the scan can reject
// most rows with one integer comparison. It returns math.MinInt32 (reject
// nothing this way) when no such shortcut is safe.
//
// Proof. Let SL = ra·max‖r‖ + xa·max‖x‖ ≥ each row's ra·‖r‖ + xa·‖x‖ and
// T = floor − SL − μ with μ = 1e-9·(1 + SL + |floor|), which dwarfs both
// bound's relative margin (1e-12 of quantities ≤ |floor| + SL when the
// row is rejected) and the float64 rounding here. If T ≤ 0 there is no
// shortcut. Otherwise take J = ⌊T/(σ·S)⌋ − 1 with S the largest scale. A row
// with 0 ≤ I ≤ J has σ·s·I ≤ σ·S·I < T; a row with I < 0 has σ·s·I ≤ 0 < T.
// Either way its bound is below T + SL + μ = floor.
func (qc *qcode) cut(floor float64, bm blockMax) int32 {
	sl := qc.ra*bm.rnorm + qc.xa*bm.xnorm
	mu := 1e-9 * (1 + sl + math.Abs(floor))
	t := floor - sl - mu
	den := qc.scale * bm.scale
	if !(t > 0) || !(den > 0) { // also rejects NaN and an empty block
		return math.MinInt32
	}
	j := math.Floor(t/den) - 1
	if j >= math.MaxInt32 {
		return math.MaxInt32 - 1
	}
	return int32(j)
}
