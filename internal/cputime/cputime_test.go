//go:build unix

package cputime

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestProcess checks that the CPU time read grows as the process works,
// and only grows.
func TestProcess(t *testing.T) {
	before := Process()
	assert.Positive(t, before, "a running test has used some CPU")
	now := before
	for end := time.Now().Add(5 * time.Second); now == before && time.Now().Before(end); {
		now = Process()
	}
	assert.Greater(t, now, before, "5 s of busy work moved no CPU time")
}
