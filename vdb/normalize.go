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
	var sum float64
	for i, v := range src {
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%w: element %d is %v", ErrInvalidVector, i, v)
		}
		sum += f * f
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

// CheckVector reports whether v can be stored in or searched against a
// database of dimension dim: an error wrapping ErrDimension or
// ErrInvalidVector, or nil.
func CheckVector(v []float32, dim int) error {
	if len(v) != dim {
		return fmt.Errorf("%w: got %d, want %d", ErrDimension, len(v), dim)
	}
	zero := true
	for i, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%w: element %d is %v", ErrInvalidVector, i, x)
		}
		if x != 0 {
			zero = false
		}
	}
	if zero {
		return fmt.Errorf("%w: all elements are zero", ErrInvalidVector)
	}
	return nil
}
