package postgres_test

import (
	"testing"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/memorytest"
	"github.com/agentmem/agentmem/memory/postgres"
)

// TestConformance runs memory/memorytest on memory/postgres, each rule in
// a schema of its own (dropped when the rule ends), which the suite
// reopens to check persistence.
func TestConformance(t *testing.T) {
	needPG(t)
	memorytest.Run(t, func(t *testing.T) memorytest.Subject {
		url, emb := storeURL(t), hashEmb(t, 256)
		reopen := func() (memory.Memory, error) {
			m, err := postgres.Open(t.Context(), url, emb, postgres.WithCreate())
			if err != nil {
				return nil, err
			}
			t.Cleanup(func() { m.Close() })
			return m, nil
		}
		return memorytest.Subject{Memory: openWith(t, url, emb), Reopen: reopen}
	})
}
