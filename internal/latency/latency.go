// Package latency summarises the latencies benchmarks measure.
package latency

import (
	"slices"
	"time"
)

// PercentileMs returns the p-quantile (0 ≤ p ≤ 1) of d in milliseconds, 0
// for no durations. d is not modified.
func PercentileMs(d []time.Duration, p float64) float64 {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[min(len(s)-1, int(p*float64(len(s))))]) / float64(time.Millisecond)
}
