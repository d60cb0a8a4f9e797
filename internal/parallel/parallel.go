// Package parallel splits work on independent items across goroutines,
// run by helpers that stay awake between bursts of work (Group).
package parallel

import (
	"runtime"
	"sync/atomic"
)

// runsPerWorker is how many runs Parts cuts per goroutine: enough that the
// caller, which starts at once, takes the runs of a helper that starts late
// (waking an idle core took ~130 µs on average on a 2-core virtual
// machine, against 300–500 µs of work in a typical batch), few enough that
// taking a run costs nothing beside it.
const runsPerWorker = 8

// Parts calls do on contiguous runs of [0, n) that cover it, on up to
// GOMAXPROCS goroutines, the caller's among them. size(i) is the work of
// item i (bytes of text, say): the runs are cut with about the same work,
// and there are only as many goroutines as give each at least minPart of
// it, so a small job runs on the caller alone, with no goroutine. Each
// goroutine takes the next run when done with its last, so the caller
// starts at once and a helper that starts late takes fewer; the helpers
// are a Group's, which stay awake between the bursts of a batch's phases.
// The runs are done concurrently: do must only touch what its run owns.
func Parts(n int, size func(i int) int, minPart int, do func(lo, hi int)) {
	if n <= 0 {
		return
	}
	total := 0
	for i := range n {
		total += size(i)
	}
	workers := min(runtime.GOMAXPROCS(0), n, total/max(minPart, 1))
	if workers <= 1 {
		do(0, n)
		return
	}
	runs := min(n, workers*runsPerWorker)
	// ends[r] is the end of run r: cut after the item where the work
	// reaches r+1 runs' share, leaving at least one item for each later
	// run.
	ends := make([]int, runs)
	hi, sum := 0, 0
	for r := range runs - 1 {
		goal := total * (r + 1) / runs
		lo := hi
		for hi < n-(runs-1-r) && (hi == lo || sum < goal) {
			sum += size(hi)
			hi++
		}
		ends[r] = hi
	}
	ends[runs-1] = n
	var next atomic.Int32
	work := func() {
		for {
			r := int(next.Add(1)) - 1
			if r >= runs {
				return
			}
			lo := 0
			if r > 0 {
				lo = ends[r-1]
			}
			do(lo, ends[r])
		}
	}
	var g Group
	for range workers - 1 {
		g.Go(work)
	}
	work()
	g.Wait()
}
