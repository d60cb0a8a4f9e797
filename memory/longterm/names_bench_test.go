package longterm

import (
	"fmt"
	"strconv"
	"testing"
	"time"
)

// BenchmarkQueryEveryNamespaceNames measures a hybrid search of every
// namespace of a store of chat logs (100 namespaces of 1,000 turns, user
// and assistant taking turns, 100k in all) by queries that say names: a
// user's own ("What did Maya say about Python?", given as "Hi, I'm Maya"
// in one namespace) and tools every namespace's users name, so that each
// namespace looks among its user's turns for an introduction
// (nsSearch.addAliases).
func BenchmarkQueryEveryNamespaceNames(b *testing.B) {
	m := newBenchMemory(b)
	tools := []string{"Python", "Docker", "Postgres", "Kafka", "Redis", "Grafana", "Terraform", "Rust"}
	w := []string{"flight", "invoice", "doctor", "birthday", "deploy", "garden", "piano", "tax", "holiday", "router"}
	t0 := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	for lo := 0; lo < 100000; lo += 1000 {
		recs := make([]Record, 0, 1000)
		for j := lo; j < lo+1000; j++ {
			ns, k := j%100, j/100
			r := Record{ID: fmt.Sprintf("r%d", j), Namespace: "user:" + strconv.Itoa(ns), Time: t0.Add(time.Duration(k) * time.Minute),
				Speaker: "user", Text: fmt.Sprintf("I used %s for the %s on day %d", tools[j%len(tools)], w[(j/7)%len(w)], k)}
			if k == 0 {
				r.Text = fmt.Sprintf("Hi, I'm Maya%d. Nice to meet you.", ns)
			} else if k%2 == 1 {
				r.Speaker, r.Text = "assistant", fmt.Sprintf("Noted: %s and the %s.", tools[(j/3)%len(tools)], w[j%len(w)])
			}
			recs = append(recs, r)
		}
		addAll(b.Context(), b, m, recs)
	}
	if _, err := m.Query(b.Context(), Query{Text: "warm up", K: 5}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		q := fmt.Sprintf("What did Maya%d say about %s and the %s?", i%100, tools[i%len(tools)], w[(i*7+3)%len(w)])
		if _, err := m.Query(b.Context(), Query{Text: q, K: 5}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
