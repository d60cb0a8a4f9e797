package longterm

import (
	"log/slog"
	"testing"

	"github.com/agentmem/agentmem/internal/embedtest"
)

// newCounting returns the hash embedder of dimension dim, counting what it embeds.
func newCounting(t testing.TB, dim int) *embedtest.Counting { return embedtest.CountingHash(t, dim) }

var discardLogger = slog.New(slog.DiscardHandler)

// crash abandons m as a killed process would: no snapshot, log and lock
// released by the "kernel".
func crash(m *Memory) {
	m.log.close()
	m.lock.Close()
}
