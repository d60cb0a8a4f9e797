//go:build !linux

package postgres_test

import "time"

// serverCPU is not measured off Linux.
func serverCPU() (time.Duration, bool) { return 0, false }
