//go:build !unix

package cputime

import "time"

// Process is not measured off Unix: it returns 0.
func Process() time.Duration { return 0 }
