package parallel

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParts_CoverOnceBalanced checks on random sizes that the runs cover
// every item exactly once, that a job below two goroutines' minimum runs in
// one call, that a larger one is cut into runsPerWorker runs a goroutine
// (or one an item), and that no run has much more than its share of the
// work.
func TestParts_CoverOnceBalanced(t *testing.T) {
	t.Parallel()

	rng := rand.New(rand.NewPCG(1, 2))
	procs := runtime.GOMAXPROCS(0)
	for range 500 {
		n := rng.IntN(40)
		sizes := make([]int, n)
		total, biggest := 0, 0
		for i := range sizes {
			sizes[i] = rng.IntN(3000)
			total += sizes[i]
			biggest = max(biggest, sizes[i])
		}
		minPart := 1 + rng.IntN(4000)
		var mu sync.Mutex
		seen := make([]int, n)
		var parts [][2]int
		Parts(n, func(i int) int { return sizes[i] }, minPart, func(lo, hi int) {
			mu.Lock()
			defer mu.Unlock()
			parts = append(parts, [2]int{lo, hi})
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		})
		for i := range seen {
			require.Equal(t, 1, seen[i], "item %d of %d", i, n)
		}
		if n == 0 {
			assert.Empty(t, parts)
			continue
		}
		want := 1
		if w := min(procs, n, total/minPart); w > 1 {
			want = min(n, w*runsPerWorker)
		}
		assert.Equal(t, want, len(parts), "n %d total %d minPart %d", n, total, minPart)
		for _, p := range parts {
			work := 0
			for i := p[0]; i < p[1]; i++ {
				work += sizes[i]
			}
			assert.Greater(t, p[1], p[0], "empty part")
			if len(parts) > 1 {
				assert.LessOrEqual(t, work, total/len(parts)+biggest, "part %v", p)
			}
		}
	}
}
