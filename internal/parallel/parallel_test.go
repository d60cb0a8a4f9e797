package parallel

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// TestGroup_RunsEveryTaskOnce: tasks given to Go, from several groups
// at once, in bursts and after helpers have given up looking, each run
// once before their group's Wait returns.
func TestGroup_RunsEveryTaskOnce(t *testing.T) {
	t.Parallel()

	var outer sync.WaitGroup
	for c := range 4 {
		outer.Go(func() {
			for round := range 30 {
				var g Group
				var ran [17]atomic.Int32
				for i := range ran {
					g.Go(func() { ran[i].Add(1) })
				}
				g.Wait()
				for i := range ran {
					require.EqualValues(t, 1, ran[i].Load(), "caller %d round %d task %d", c, round, i)
				}
				if round%10 == 9 {
					time.Sleep(2 * spinFor) // the helpers give up
				}
			}
		})
	}
	outer.Wait()
}

// TestGroup_ReusesHelpers: a task given while a helper is looking runs on
// that helper's goroutine, not a new one; once helpers give up looking,
// their goroutines end. Not parallel: it counts goroutines.
func TestGroup_ReusesHelpers(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("helpers look for tasks only with 2 or more processors")
	}
	quiet := func() bool {
		idle.Lock()
		defer idle.Unlock()
		return len(idle.hs) == 0
	}
	require.Eventually(t, quiet, 5*time.Second, time.Millisecond, "other tests' helpers end")
	time.Sleep(10 * time.Millisecond) // Eventually's goroutines end
	before := runtime.NumGoroutine()
	// The second task comes well within spinFor of the first one's end,
	// unless the machine stalls this goroutine for longer: a few tries.
	reused := false
	for try := 0; try < 5 && !reused; try++ {
		var g Group
		var id1, id2 int
		g.Go(func() { id1 = goroutineID() })
		g.Wait()
		g.Go(func() { id2 = goroutineID() })
		g.Wait()
		reused = id1 == id2
	}
	assert.True(t, reused, "one helper ran both tasks")
	require.Eventually(t, quiet, 5*time.Second, time.Millisecond, "no helper left looking")
	// Not Eventually, which runs its condition on a goroutine of its own.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "helpers ended")
}

// goroutineID returns the running goroutine's id, from its stack's header.
func goroutineID() int {
	var b [64]byte
	n := runtime.Stack(b[:], false)
	f := strings.Fields(string(b[:n]))
	id, _ := strconv.Atoi(f[1]) // "goroutine 123 [running]:"
	return id
}
