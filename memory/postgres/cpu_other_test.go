//go:build !linux

package postgres_test

import "time"

// processCPU is not measured off Linux.
func processCPU() time.Duration { return 0 }

// serverCPU is not measured off Linux.
func serverCPU() (time.Duration, bool) { return 0, false }
