package longterm

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLinks_AsMap: random sets and deletes, of dense ids as the turn index
// writes them and of far and negative ids as a snapshot may name, leave
// links answering as a map does.
func TestLinks_AsMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var l links
	want := map[int64]int64{}
	id := func() int64 {
		switch rng.IntN(10) {
		case 0:
			return rng.Int64N(1 << 40) // far: spilled
		case 1:
			return -1 - rng.Int64N(5)
		default:
			return rng.Int64N(5000)
		}
	}
	for i := range 20000 {
		k := id()
		if rng.IntN(3) == 0 {
			l.del(k)
			delete(want, k)
		} else {
			v := rng.Int64N(5000) - 1
			l.set(k, v)
			want[k] = v
		}
		if i%1000 == 0 || i == 19999 {
			require.Equal(t, len(want), l.len())
			require.Equal(t, slices.Sorted(maps.Keys(want)), l.keys())
			for k, v := range want {
				got, ok := l.get(k)
				require.True(t, ok, "id %d", k)
				require.Equal(t, v, got, "id %d", k)
			}
		}
	}
	_, ok := l.get(4999999)
	assert.False(t, ok)
	assert.Equal(t, int64(0), l.at(-77), "missing: 0, as a map's")
	// Growing the slice over a spilled id takes it in.
	var g links
	g.set(5000, 7)
	assert.Len(t, g.spill, 1)
	for i := range int64(5001) {
		g.set(i, i)
	}
	v, ok := g.get(5000)
	assert.True(t, ok)
	assert.Equal(t, int64(5000), v, "set after the spill moved in")
	assert.Empty(t, g.spill)
	assert.Equal(t, 5001, g.len())
}
