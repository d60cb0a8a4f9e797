// Package parallel splits work on independent items across goroutines.
package parallel

import (
	"runtime"
	"sync"
)

// Parts calls do on contiguous parts of [0, n) that cover it, on up to
// GOMAXPROCS goroutines, the caller's among them. size(i) is the work of
// item i (bytes of text, say): the parts are cut so that each has about
// the same work, and there are only as many as give each at least minPart
// of it, so a small job runs on the caller alone, with no goroutine. The
// parts run concurrently: do must only touch what its part owns.
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
	var wg sync.WaitGroup
	lo, sum := 0, 0
	for w := 1; w < workers; w++ {
		// Cut after the item where the work reaches w parts' share,
		// leaving at least one item for each later part.
		goal, hi := total*w/workers, lo
		for hi < n-(workers-w) && (hi == lo || sum < goal) {
			sum += size(hi)
			hi++
		}
		wg.Go(func(lo, hi int) func() { return func() { do(lo, hi) } }(lo, hi))
		lo = hi
	}
	do(lo, n)
	wg.Wait()
}
