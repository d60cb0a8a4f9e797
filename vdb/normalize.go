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
	sum := sumSquares(src)
	if math.IsNaN(sum) || math.IsInf(sum, 0) {
		return badElement(src)
	}
	if sum == 0 {
		return fmt.Errorf("%w: all elements are zero", ErrInvalidVector)
	}
	inv := 1 / math.Sqrt(sum)
	for i, v := range src {
		dst[i] = float32(float64(v) * inv)
	}
	return nil
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
	if len(v) != dim {
		return fmt.Errorf("%w: got %d, want %d", ErrDimension, len(v), dim)
	}
	sum := sumSquares(v)
	if math.IsNaN(sum) || math.IsInf(sum, 0) {
		return badElement(v)
	}
	if sum == 0 {
		// Only true zeros: the smallest float32 squared is still a normal
		// float64.
		return fmt.Errorf("%w: all elements are zero", ErrInvalidVector)
	}
	return nil
}
