package ranking

import (
	"maps"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentmem/agentmem/keyword"
)

func TestWithNeighbours(t *testing.T) {
	for _, c := range []struct {
		name            string
		own, lent, best float64
		want            float64
	}{
		{"no own words: all that is lent", 0, 3, 10, 3},
		{"half explained: half of it", 5, 3, 10, 6.5},
		{"the best match: nothing more", 10, 3, 10, 10},
		{"nothing lent", 4, 0, 10, 4},
		{"no best (no own matches at all)", 0, 3, 0, 0},
	} {
		assert.InDelta(t, c.want, WithNeighbours(c.own, c.lent, c.best), 1e-12, c.name)
	}
	// A neighbour lent a share w ≤ 1 of the best record's score (and of
	// another's, at most best) cannot overtake it.
	best := 8.0
	for _, own := range []float64{0, 2, 5, 7.9} {
		lent := 0.3*best + 0.3*best
		assert.Less(t, WithNeighbours(own, lent, best), best, "own %v", own)
	}
}

func TestEpisodeBonuses(t *testing.T) {
	top := []keyword.Result{{ID: 7, Score: 10}, {ID: 3, Score: 5}}
	assert.Equal(t, map[int64]float64{7: 4, 3: 2}, EpisodeBonuses(0.5, 8, top, -1))
	assert.Equal(t, map[int64]float64{7: 4, 3: 2, 9: 4}, EpisodeBonuses(0.5, 8, top, 9),
		"the best own match's episode lends as the best episode does")
	assert.Equal(t, map[int64]float64{7: 4, 3: 4}, EpisodeBonuses(0.5, 8, top, 3))
	assert.Nil(t, EpisodeBonuses(0.5, 8, nil, 9), "no episode matches")
}

func TestBest(t *testing.T) {
	id, s := Best(maps.All(map[int64]float64{4: 2, 9: 5, 2: 5, 7: 1}))
	assert.Equal(t, int64(2), id, "the lowest record of those tied")
	assert.InDelta(t, 5.0, s, 0)
	id, s = Best(maps.All(map[int64]float64{3: 0}))
	assert.Equal(t, int64(-1), id, "nothing above 0")
	assert.Zero(t, s)
	id, _ = Best(maps.All(map[int64]float64(nil)))
	assert.Equal(t, int64(-1), id)
}
