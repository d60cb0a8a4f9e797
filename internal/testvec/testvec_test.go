package testvec

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUnitIsReproducibleAndNormalised(t *testing.T) {
	a, b := Unit(7, 5, 16), Unit(7, 5, 16)
	require.Len(t, a, 5)
	assert.Equal(t, a, b, "the same seed must give the same vectors")
	assert.NotEqual(t, a, Unit(8, 5, 16), "another seed must give other vectors")
	for i, v := range a {
		require.Len(t, v, 16)
		assert.Equal(t, 16, cap(v), "vector %d must not reach into the next one", i)
		var sum float64
		for _, x := range v {
			sum += float64(x) * float64(x)
		}
		assert.InDelta(t, 1, math.Sqrt(sum), 1e-5, "vector %d must have unit length", i)
	}
}

func TestIDs(t *testing.T) {
	assert.Equal(t, []int64{5, 6, 7}, IDs(5, 3))
	assert.Empty(t, IDs(5, 0))
}
