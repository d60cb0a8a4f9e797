package postgres_test

import (
	"testing"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/memorytest"
	"github.com/agentmem/agentmem/memory/postgres"
)

// TestConformance runs memory/memorytest on memory/postgres, each rule in
// a schema of its own (dropped when the rule ends), which the suite
// reopens to check persistence: with the HNSW index from the first record
// (hnsw) and with the default WithIndexAfter, under which the suite's
// small stores have none and scan their chunks exactly (default).
func TestConformance(t *testing.T) {
	needPG(t)
	for _, c := range []struct {
		name string
		opts []postgres.Option
	}{
		{"hnsw", []postgres.Option{postgres.WithIndexAfter(0)}},
		{"default", []postgres.Option{postgres.WithIndexAfter(postgres.DefaultIndexAfter)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			memorytest.Run(t, func(t *testing.T) memorytest.Subject {
				url, emb := storeURL(t), hashEmb(t, 256)
				reopen := func() (memory.Memory, error) {
					m, err := postgres.Open(t.Context(), url, emb, append([]postgres.Option{postgres.WithCreate()}, c.opts...)...)
					if err != nil {
						return nil, err
					}
					t.Cleanup(func() { m.Close() })
					return m, nil
				}
				return memorytest.Subject{Memory: openWith(t, url, emb, c.opts...), Reopen: reopen}
			})
		})
	}
}
