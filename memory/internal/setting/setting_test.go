package setting

import (
	"errors"
	"log/slog"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/chunk"
	"github.com/agentmem/agentmem/memory"
)

// A setter stores a valid value and leaves the field alone on an invalid
// one, with the message both memories give.
func TestSetters(t *testing.T) {
	k := 5
	require.NoError(t, TopK(&k, 3))
	assert.Equal(t, 3, k)
	assert.EqualError(t, TopK(&k, 0), "top k must be positive, got 0")
	assert.Equal(t, 3, k)

	var s float32
	require.NoError(t, MinScore(&s, -1))
	assert.EqualError(t, MinScore(&s, 2), "minimum score must be in [-1, 1], got 2")
	assert.Error(t, MinScore(&s, float32(math.NaN())))
	assert.Equal(t, float32(-1), s)

	m := memory.Hybrid
	require.NoError(t, Mode(&m, memory.KeywordOnly))
	assert.EqualError(t, Mode(&m, memory.KeywordOnly+1), "unknown mode 3")
	assert.Equal(t, memory.KeywordOnly, m)

	v, kw := 0.1, 0.9
	require.NoError(t, Weights(&v, &kw, 1, 0))
	assert.Error(t, Weights(&v, &kw, 0, 0), "not both 0")
	assert.Error(t, Weights(&v, &kw, -1, 1))
	assert.Equal(t, []float64{1, 0}, []float64{v, kw})

	n := 5
	require.NoError(t, IntIn(&n, "ef_search", 1000, 1, 1000))
	assert.EqualError(t, IntIn(&n, "ef_search", 0, 1, 1000), "ef_search 0 is not in [1, 1000]")
	assert.Equal(t, 1000, n)
	w := 0.3
	require.NoError(t, Unit(&w, "next weight", 1))
	assert.EqualError(t, Unit(&w, "next weight", 1.5), "next weight 1.5 is not in [0, 1]")
	require.NoError(t, NonNegative(&w, "speaker boost", 7))
	assert.EqualError(t, NonNegative(&w, "speaker boost", math.Inf(1)), "speaker boost +Inf is not a finite number ≥ 0")
	assert.Equal(t, 7.0, w)
}

func TestChunkingAndLogger(t *testing.T) {
	var c *chunk.Options
	in := &chunk.Options{MinRunes: 3}
	require.NoError(t, Chunking(&c, in))
	in.MinRunes = 9
	assert.Equal(t, 3, c.MinRunes, "a copy")
	require.NoError(t, Chunking(&c, nil))
	assert.NotNil(t, c, "nil keeps the setting")

	l := slog.Default()
	require.NoError(t, Logger(&l, nil))
	assert.Same(t, slog.Default(), l)
}

func TestApply(t *testing.T) {
	type opts struct{ k int }
	type option func(*opts) error
	invalid := errors.New("invalid argument")
	var o opts
	err := Apply(&o, []option{nil, func(o *opts) error { return TopK(&o.k, 2) }}, "pkg", invalid)
	require.NoError(t, err)
	assert.Equal(t, 2, o.k)
	err = Apply(&o, []option{func(o *opts) error { return TopK(&o.k, -1) }}, "pkg", invalid)
	require.ErrorIs(t, err, invalid)
	assert.EqualError(t, err, "pkg: invalid argument: top k must be positive, got -1")
}
