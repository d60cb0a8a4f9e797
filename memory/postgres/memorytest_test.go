package postgres_test

import (
	"testing"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/memorytest"
)

// TestConformance runs memory/memorytest on memory/postgres, each rule in
// a schema of its own (dropped when the rule ends), which the suite
// reopens to check persistence.
func TestConformance(t *testing.T) {
	needPG(t)
	memorytest.Run(t, func(t *testing.T) memorytest.Subject {
		url, emb := storeURL(t), hashEmb(t, 256)
		reopen := func() memory.Memory { return openWith(t, url, emb) }
		return memorytest.Subject{Memory: reopen(), Reopen: reopen}
	})
}
