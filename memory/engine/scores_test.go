package engine

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScoreSet: random adds, sets and scales, dense ids and ids past
// denseIDs or negative (the map), over many resets, leave a scoreSet
// holding what a map holds, its ids listed in the order first set.
func TestScoreSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var s scoreSet
	for round := range 300 {
		s.reset()
		want := map[int64]float64{}
		var order []int64
		n := rng.IntN(3000)
		for range n {
			var id int64
			switch rng.IntN(10) {
			case 0:
				id = denseIDs + rng.Int64N(50)
			case 1:
				id = -1 - rng.Int64N(3)
			case 2:
				id = rng.Int64N(denseIDs)
			default:
				id = rng.Int64N(int64(1 + round*10))
			}
			if _, ok := want[id]; !ok && rng.IntN(4) > 0 {
				order = append(order, id)
				want[id] = 0
			} else if !ok {
				assert.False(t, s.has(id))
				assert.Zero(t, s.get(id))
				continue
			}
			v := float64(rng.IntN(100)) / 7
			switch rng.IntN(3) {
			case 0:
				s.add(id, v)
				want[id] += v
			case 1:
				s.set(id, v)
				want[id] = v
			default:
				if !s.has(id) {
					s.set(id, 0)
				}
				s.scale(id, v)
				want[id] *= v
			}
		}
		require.Equal(t, len(want), s.len(), "round %d", round)
		assert.Equal(t, order, s.ids, "round %d", round)
		got := maps.Collect(s.all())
		assert.Equal(t, want, got, "round %d", round)
		for id, v := range want {
			assert.True(t, s.has(id))
			assert.Equal(t, v, s.get(id))
		}
		var c scoreSet
		c.copyFrom(&s)
		assert.Equal(t, s.ids, c.ids)
		assert.Equal(t, got, maps.Collect(c.all()))
	}
}

// TestScoreSet_GenerationWrap: when the generation counter wraps, no id
// set before reads as set.
func TestScoreSet_GenerationWrap(t *testing.T) {
	var s scoreSet
	s.set(5, 1)
	s.gen = ^uint32(0) - 1
	s.mark[5] = ^uint32(0)
	s.reset() // gen = max: id 5 was marked with it
	assert.True(t, s.has(5), "the mark equals the generation: set (set up for the wrap)")
	s.reset() // wraps to 0: marks cleared, gen 1
	assert.False(t, s.has(5))
	assert.Zero(t, s.get(5))
	assert.Equal(t, 0, s.len())
	s.add(5, 2)
	assert.Equal(t, 2.0, s.get(5))
	assert.Equal(t, []int64{5}, slices.Collect(maps.Keys(maps.Collect(s.all()))))
}
