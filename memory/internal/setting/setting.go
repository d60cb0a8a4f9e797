// Package setting checks and stores the values of the options that
// memory/longterm and memory/postgres both take (top k, minimum score,
// mode, fusion weights, keyword-path weights, chunking, logger), so that
// both accept the same values and refuse the others with the same
// messages. Each function stores its value through dst only when the value
// is valid; the caller wraps the error with its package and
// memory.ErrInvalidArgument.
package setting

import (
	"fmt"
	"log/slog"

	"github.com/agentmem/agentmem/chunk"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/internal/ranking"
)

// Apply applies opts, in order, to o; a nil option is skipped. The first
// error is returned as "pkg: invalid: err", wrapping invalid (the package's
// memory.ErrInvalidArgument) and the option's error.
func Apply[O any, F ~func(*O) error](o *O, opts []F, pkg string, invalid error) error {
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(o); err != nil {
			return fmt.Errorf("%s: %w: %w", pkg, invalid, err)
		}
	}
	return nil
}

// TopK sets *dst to k, how many memories a search returns; k must be
// positive.
func TopK(dst *int, k int) error {
	if k <= 0 {
		return fmt.Errorf("top k must be positive, got %d", k)
	}
	*dst = k
	return nil
}

// MinScore sets *dst to s, the lowest cosine of a vector-path match; s
// must be in [-1, 1].
func MinScore(dst *float32, s float32) error {
	if !(s >= -1 && s <= 1) { // also catches NaN
		return fmt.Errorf("minimum score must be in [-1, 1], got %v", s)
	}
	*dst = s
	return nil
}

// Mode sets *dst to m, which must be one of memory's modes.
func Mode(dst *memory.Mode, m memory.Mode) error {
	if m < memory.Hybrid || m > memory.KeywordOnly {
		return fmt.Errorf("unknown mode %d", m)
	}
	*dst = m
	return nil
}

// Weights sets the weights of score fusion: finite, ≥ 0 and not both 0
// (ranking.CheckWeights).
func Weights(vector, keyword *float64, v, k float64) error {
	if err := ranking.CheckWeights(v, k); err != nil {
		return err
	}
	*vector, *keyword = v, k
	return nil
}

// IntIn sets *dst to v, which must be in [lo, hi]; what names it in the
// error ("ef_search").
func IntIn(dst *int, what string, v, lo, hi int) error {
	if v < lo || v > hi {
		return fmt.Errorf("%s %d is not in [%d, %d]", what, v, lo, hi)
	}
	*dst = v
	return nil
}

// Unit sets *dst to w, which must be in [0, 1]; what names it in the
// error ("neighbour weight").
func Unit(dst *float64, what string, w float64) error {
	return set(dst, w, ranking.Unit(what, w))
}

// NonNegative sets *dst to x, which must be finite and ≥ 0; what names it
// in the error ("speaker boost").
func NonNegative(dst *float64, what string, x float64) error {
	return set(dst, x, ranking.NonNegative(what, x))
}

// set stores v in *dst unless err, v's check, says it is invalid.
func set[V any](dst *V, v V, err error) error {
	if err == nil {
		*dst = v
	}
	return err
}

// Chunking sets *dst to a copy of *c, how records are split into chunks;
// nil leaves *dst as it is (chunk's defaults).
func Chunking(dst **chunk.Options, c *chunk.Options) error {
	if c != nil {
		cp := *c
		*dst = &cp
	}
	return nil
}

// Logger sets *dst to l, where warnings go; nil leaves *dst as it is (the
// default, slog.Default()).
func Logger(dst **slog.Logger, l *slog.Logger) error {
	if l != nil {
		*dst = l
	}
	return nil
}
