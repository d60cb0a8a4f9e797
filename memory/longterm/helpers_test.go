package longterm

import (
	"github.com/agentmem/agentmem/memory/engine"

	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"

	"github.com/agentmem/agentmem/internal/embedtest"
	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/inmem"
)

// Test backends, opened by spec through the registry as real ones are.
var (
	openedMu   sync.Mutex
	openedByNS = map[string]int{} // namespaces the "test-counting" backend was opened for
)

func init() {
	vdb.Register("test-counting", func(_ context.Context, cfg vdb.Config) (vdb.VectorDatabase, error) {
		openedMu.Lock()
		openedByNS[cfg.Namespace]++
		openedMu.Unlock()
		return inmem.New(cfg.Dim)
	})
	vdb.Register("test-broken", func(context.Context, vdb.Config) (vdb.VectorDatabase, error) {
		return nil, errors.New("no backend")
	})
	vdb.Register("test-other", func(_ context.Context, cfg vdb.Config) (vdb.VectorDatabase, error) {
		return inmem.New(cfg.Dim)
	})
}

// newCounting returns the hash embedder of dimension dim, counting what it embeds.
func newCounting(t testing.TB, dim int) *embedtest.Counting { return embedtest.CountingHash(t, dim) }

var discardLogger = slog.New(slog.DiscardHandler)

// crash abandons m as a killed process would: no snapshot, log and lock
// released by the "kernel".
func crash(m *Memory) {
	m.log.close()
	m.lock.Close()
}

// everyMatch makes a memory return every hit that matched the query at
// all (no minimum relevance): the tests of ranking see its whole order.
var everyMatch = WithEngine(engine.WithMinRelevance(0))
