//go:build unix

package longterm

import "testing"

// BenchmarkQueryNamedDay measures a hybrid search of a conversation of
// 10k turns (benchRecords: said on 2023-11-14 and 15) for a question that
// names a day: one with none of its turns, and one with too many to lend
// to (more than the search's depth); and the same question naming no day.
func BenchmarkQueryNamedDay(b *testing.B) {
	m := newBenchMemory(b)
	addAll(b.Context(), b, m, benchRecords(10000, "c1"))
	for _, c := range []struct{ name, q string }{
		{"no-day", "what did the team say about the database?"},
		{"empty-day", "what did the team say about the database on 2023-11-20?"},
		{"crowded-day", "what did the team say about the database on 2023-11-15?"},
	} {
		b.Run(c.name, func(b *testing.B) {
			q := Query{Text: c.q, Namespace: "c1", Mode: Hybrid, K: 10}
			if _, err := m.Query(b.Context(), q); err != nil { // builds the indexes
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := m.Query(b.Context(), q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
