package engine

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestTopScored: the heap's best depth are the full sort's, in its order,
// ties (many equal scores) by record id.
func TestTopScored(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 7, 200, 401, 5000} {
		for _, depth := range []int{0, 1, 5, 200} {
			out := make([]scored[int], n)
			for i := range out {
				out[i] = scored[int]{key: i, id: fmt.Sprintf("r%05d", rng.IntN(n+1)), score: float64(rng.IntN(50))}
			}
			want := slices.Clone(out)
			slices.SortFunc(want, compareScored[int])
			want = want[:min(n, depth)]
			got := topScored(out, depth)
			if len(want) == 0 {
				assert.Empty(t, got, "n %d depth %d", n, depth)
				continue
			}
			for i := range want { // equal ids may come in either order: compare what orders them
				assert.Equal(t, want[i].score, got[i].score, "n %d depth %d at %d", n, depth, i)
				assert.Equal(t, want[i].id, got[i].id, "n %d depth %d at %d", n, depth, i)
			}
		}
	}
}

// TestKthLargest: the heap's k-th largest is the sorted scores'.
func TestKthLargest(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 10, 401, 3000} {
		for _, k := range []int{1, 2, 7, 200} {
			if k > n {
				continue
			}
			ids := make([]int64, n)
			var scores scoreSet
			vals := make([]float64, n)
			for i := range ids {
				ids[i] = int64(i)
				scores.set(int64(i), float64(rng.IntN(40)))
				vals[i] = scores.get(int64(i))
			}
			slices.Sort(vals)
			assert.Equal(t, vals[n-k], first(kthLargest(make([]float64, 5), ids, &scores, k)), "n %d k %d", n, k)
		}
	}
}

// TestBestIDs: the one-pass selection gives the full sort's first
// handOffTop ids (score descending, ties by id), with many ties.
func TestBestIDs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 2, 3, 4, 50, 2000} {
		for _, spread := range []int{1, 3, 1000} {
			scores := map[int64]float64{}
			for range n {
				scores[rng.Int64N(int64(4*n+1))] = float64(rng.IntN(spread))
			}
			ids := make([]int64, 0, len(scores))
			for id := range scores {
				ids = append(ids, id)
			}
			slices.SortFunc(ids, func(x, y int64) int {
				if scores[x] != scores[y] {
					if scores[x] > scores[y] {
						return -1
					}
					return 1
				}
				return cmp.Compare(x, y)
			})
			want := ids[:min(len(ids), handOffTop)]
			assert.Equal(t, want, bestIDs(maps.All(scores)), "n %d spread %d", n, spread)
		}
	}
}

func first[A, B any](a A, _ B) A { return a }
