//go:build race

package server

// raceEnabled: the race detector slows everything ~10×; load tests shrink.
const raceEnabled = true
