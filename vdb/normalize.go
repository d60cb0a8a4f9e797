package vdb

import (
	"fmt"
	"math"
)

// Normalize writes src scaled to unit L2 length into dst, which must have
// len(src) elements (dst and src may be the same slice). It returns an error
// wrapping ErrInvalidVector when src holds NaN or ±Inf or is all zeros. The
// norm is accumulated in float64 so that long vectors of tiny values do not
// underflow.
func Normalize(dst, src []float32) error {
	if len(dst) != len(src) {
		return fmt.Errorf("%w: dst has %d elements, src %d", ErrDimension, len(dst), len(src))
	}
	sq, err := SquaredNorm(src, len(src))
	if err != nil {
		return err
	}
	Scale(dst, src, sq)
	return nil
}

// Scale writes src divided by √sq into dst, which must have len(src)
// elements (dst and src may be the same slice), sq being src's
// SquaredNorm: what Normalize writes, without measuring src again. A
// caller that checks a batch of vectors before it takes a lock
// (SquaredNorm) and normalises them under it measures each once.
func Scale(dst, src []float32, sq float64) {
	inv := 1 / math.Sqrt(sq)
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = float32(float64(v) * inv)
	}
}

// sumSquares returns Σ v², accumulated in float64. The squares of finite
// float32s cannot overflow a float64, so the sum is NaN or ±Inf exactly when
// some element is: one branch-free pass checks and measures at once.
func sumSquares(v []float32) float64 {
	var s0, s1, s2, s3 float64
	for len(v) >= 4 {
		a, b, c, d := float64(v[0]), float64(v[1]), float64(v[2]), float64(v[3])
		s0 += a * a
		s1 += b * b
		s2 += c * c
		s3 += d * d
		v = v[4:]
	}
	for _, x := range v {
		f := float64(x)
		s0 += f * f
	}
	return (s0 + s1) + (s2 + s3)
}

// badElement returns the ErrInvalidVector error naming v's first NaN or ±Inf.
func badElement(v []float32) error {
	for i, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%w: element %d is %v", ErrInvalidVector, i, x)
		}
	}
	return fmt.Errorf("%w: not finite", ErrInvalidVector)
}

// CheckVector reports whether v can be stored in or searched against a
// database of dimension dim: an error wrapping ErrDimension or
// ErrInvalidVector, or nil.
func CheckVector(v []float32, dim int) error {
	_, err := SquaredNorm(v, dim)
	return err
}

// SquaredNorm checks v as CheckVector does and returns Σ v², accumulated
// in float64 (positive and finite when the error is nil), for Scale.
func SquaredNorm(v []float32, dim int) (float64, error) {
	if len(v) != dim {
		return 0, fmt.Errorf("%w: got %d, want %d", ErrDimension, len(v), dim)
	}
	sum := sumSquares(v)
	if math.IsNaN(sum) || math.IsInf(sum, 0) {
		return 0, badElement(v)
	}
	if sum == 0 {
		// Only true zeros: the smallest float32 squared is still a normal
		// float64.
		return 0, fmt.Errorf("%w: all elements are zero", ErrInvalidVector)
	}
	return sum, nil
}
