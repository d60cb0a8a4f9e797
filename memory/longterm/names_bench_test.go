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
// user's own ("What did Maya5 say about Python?", given as "Hi, I'm
// Maya5" in one namespace) and tools every namespace's users name, so that
// each namespace looks among its user's turns for an introduction
// (nsSearch.addAliases).
func BenchmarkQueryEveryNamespaceNames(b *testing.B) {
	tools := []string{"Python", "Docker", "Postgres", "Kafka", "Redis", "Grafana", "Terraform", "Rust"}
	w := []string{"flight", "invoice", "doctor", "birthday", "deploy", "garden", "piano", "tax", "holiday", "router"}
	benchChatLogs(b, func(ns, k, j int) (string, string) {
		switch {
		case k == 0:
			return "user", fmt.Sprintf("Hi, I'm Maya%d. Nice to meet you.", ns)
		case k%2 == 1:
			return "assistant", fmt.Sprintf("Noted: %s and the %s.", tools[(j/3)%len(tools)], w[j%len(w)])
		}
		return "user", fmt.Sprintf("I used %s for the %s on day %d", tools[j%len(tools)], w[(j/7)%len(w)], k)
	}, func(i int) string {
		return fmt.Sprintf("What did Maya%d say about %s and the %s?", i%100, tools[i%len(tools)], w[(i*7+3)%len(w)])
	})
}

// BenchmarkQueryEveryNamespaceNamesZH is BenchmarkQueryEveryNamespaceNames
// in Chinese: every namespace's user introduces themselves by the same
// name ("你好，我叫王小明3。": 王小明, the Han characters), whom every query
// names, and its turns say 名字 often, so that each namespace reads its
// user's introductions (ranking.IntroducedNames) and prefers their turns.
func BenchmarkQueryEveryNamespaceNamesZH(b *testing.B) {
	w := []string{"机票", "发票", "医生", "生日", "部署", "花园", "钢琴", "税务", "假期", "路由器"}
	benchChatLogs(b, func(ns, k, j int) (string, string) {
		switch {
		case k == 0:
			return "user", fmt.Sprintf("你好，我叫王小明%d。", ns)
		case k%2 == 1:
			return "assistant", fmt.Sprintf("好的，记下了：%s和%s。", w[(j/3)%len(w)], w[j%len(w)])
		}
		return "user", fmt.Sprintf("我第%d天处理了%s，文件的名字是%s%d。", k, w[(j/7)%len(w)], w[j%len(w)], k)
	}, func(i int) string {
		return fmt.Sprintf("王小明%d说过什么%s的事？", i%100, w[i%len(w)])
	})
}

// benchChatLogs fills a store with 100 namespaces of 1,000 turns, turn k
// of namespace ns (record j) said as turn returns, and measures a search
// of every namespace by query(i).
func benchChatLogs(b *testing.B, turn func(ns, k, j int) (speaker, text string), query func(i int) string) {
	m := newBenchMemory(b)
	t0 := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	for lo := 0; lo < 100000; lo += 1000 {
		recs := make([]Record, 0, 1000)
		for j := lo; j < lo+1000; j++ {
			ns, k := j%100, j/100
			sp, text := turn(ns, k, j)
			recs = append(recs, Record{ID: fmt.Sprintf("r%d", j), Namespace: "user:" + strconv.Itoa(ns),
				Time: t0.Add(time.Duration(k) * time.Minute), Speaker: sp, Text: text})
		}
		addAll(b.Context(), b, m, recs)
	}
	if _, err := m.Query(b.Context(), Query{Text: "warm up", K: 5}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := m.Query(b.Context(), Query{Text: query(i), K: 5}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
