//go:build unix

package longterm

import (
	"fmt"
	"testing"

	"github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory/engine"
)

// BenchmarkIngestFacts measures AddBatch of n records into one namespace
// of an in-memory store (hash:512, batches of 1,000): as events (with
// ids), as facts (without: each is looked up among its namespace's
// near-duplicates, a vector search, and exact duplicates are merged), and
// as facts with near-duplicates off (engine.NearOff). The cost of the
// lookup grows with the namespace: the README's facts section quotes it.
func BenchmarkIngestFacts(b *testing.B) {
	if err := keyword.Preload(); err != nil {
		b.Fatal(err)
	}
	emb, _ := hash.New(hash.DefaultDim)
	const n = 20000
	events := benchRecords(n, "c1")
	facts := make([]Record, n)
	for i, r := range events {
		r.ID = ""
		facts[i] = r
	}
	for _, c := range []struct {
		name string
		recs []Record
		opts []Option
	}{
		{"events", events, nil},
		{"facts", facts, nil},
		{"facts,near=off", facts, []Option{WithEngine(engine.WithNearDuplicates(engine.DefaultNearScore, engine.NearOff))}},
	} {
		b.Run(fmt.Sprintf("%s/turns=%d", c.name, n), func(b *testing.B) {
			for b.Loop() {
				m, err := New(b.Context(), emb, c.opts...)
				if err != nil {
					b.Fatal(err)
				}
				addAll(b.Context(), b, m, c.recs)
				m.Close()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "turns/s")
		})
	}
}
