//go:build unix

package longterm

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/internal/cputime"
	"github.com/agentmem/agentmem/keyword"
)

// Synthetic conversation turns for benchmarks: one to three sentences from
// a mixed English/Chinese vocabulary, some with codes and numbers.
var (
	benchSubjects = []string{"we", "the team", "Caroline", "Dev", "the customer", "my sister", "Priya", "小王", "李娜", "张总"}
	benchVerbs    = []string{"moved", "discussed", "fixed", "booked", "cancelled", "reviewed", "deployed", "paid", "迁移了", "讨论了"}
	benchObjects  = []string{"the database", "the flight", "the invoice", "the release", "the meeting", "the marathon plan",
		"the GPU cluster", "the wedding speech", "数据库", "服务器账单", "需求评审", "支付模块"}
	benchWhen = []string{"on Monday", "last week", "after lunch", "in March", "tomorrow", "下周三", "昨天晚上"}
)

func benchTurn(r *rand.Rand, i int) string {
	var sb strings.Builder
	for s := range 1 + r.IntN(3) {
		if s > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "%s %s %s %s", benchSubjects[r.IntN(len(benchSubjects))], benchVerbs[r.IntN(len(benchVerbs))],
			benchObjects[r.IntN(len(benchObjects))], benchWhen[r.IntN(len(benchWhen))])
		if r.IntN(4) == 0 {
			fmt.Fprintf(&sb, ", ticket OPS-%d", i)
		}
		sb.WriteString(". ")
	}
	return sb.String()
}

func benchRecords(n int, ns string) []Record {
	r := rand.New(rand.NewPCG(1, 2))
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{ID: fmt.Sprintf("%s-%d", ns, i), Namespace: ns, Text: benchTurn(r, i),
			Time: time.Unix(1700000000+int64(i), 0)}
	}
	return recs
}

// newBenchMemory returns an empty in-memory store with the hash:512
// embedder (the tokenizer's dictionary loaded first), closed when b ends.
func newBenchMemory(b *testing.B) *Memory {
	if err := keyword.Preload(); err != nil {
		b.Fatal(err)
	}
	emb, _ := hash.New(hash.DefaultDim)
	m, err := New(b.Context(), emb)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	return m
}

func addAll(ctx context.Context, b *testing.B, m *Memory, recs []Record) {
	for lo := 0; lo < len(recs); lo += 1000 {
		if _, err := m.AddBatch(ctx, recs[lo:min(lo+1000, len(recs))]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIngest measures AddBatch into an in-memory store with the
// offline hash:512 embedder (chunking, embedding, both indexes).
func BenchmarkIngest(b *testing.B) {
	if err := keyword.Preload(); err != nil {
		b.Fatal(err)
	}
	emb, _ := hash.New(hash.DefaultDim)
	for _, n := range []int{1000, 10000} {
		recs := benchRecords(n, "c1")
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m, err := New(b.Context(), emb)
				if err != nil {
					b.Fatal(err)
				}
				addAll(b.Context(), b, m, recs)
				m.Close()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "turns/s")
		})
	}
}

// BenchmarkQuery measures a search of one conversation of n turns (its own
// namespace) in each mode; p50-ms and p95-ms are latencies of the loop.
func BenchmarkQuery(b *testing.B) {
	if err := keyword.Preload(); err != nil {
		b.Fatal(err)
	}
	// AGENTMEM_BENCH_DIM=D embeds with hash:D (default 512).
	dim := hash.DefaultDim
	if v, err := strconv.Atoi(os.Getenv("AGENTMEM_BENCH_DIM")); err == nil && v > 0 {
		dim = v
	}
	emb, _ := hash.New(dim)
	queries := []string{"when did we move the database", "OPS-4711", "who booked the flight on Monday",
		"服务器账单是多少", "the customer invoice last week", "李娜讨论了什么"}
	// RealMem scale (~1,400 turns a conversation) and 100k memories in
	// one namespace; AGENTMEM_BENCH_TURNS=N runs one size.
	sizes := []int{1400, 100000}
	if v, err := strconv.Atoi(os.Getenv("AGENTMEM_BENCH_TURNS")); err == nil && v > 0 {
		sizes = []int{v}
	}
	// AGENTMEM_BENCH_BACKEND=SPEC stores the vectors there (default inmem),
	// e.g. inmem:int8.
	var opts []Option
	if spec := os.Getenv("AGENTMEM_BENCH_BACKEND"); spec != "" {
		opts = append(opts, WithBackend(spec))
	}
	for _, n := range sizes {
		m, err := New(b.Context(), emb, opts...)
		if err != nil {
			b.Fatal(err)
		}
		addAll(b.Context(), b, m, benchRecords(n, "c1"))
		addAll(b.Context(), b, m, benchRecords(n/10, "c2"))
		// The keyword path's per-namespace index is built on a
		// namespace's first query: build it before timing queries.
		t0 := time.Now()
		for _, ns := range []string{"c1", "c2"} {
			if _, err := m.Query(b.Context(), Query{Text: "warm up", Namespace: ns, Mode: KeywordOnly}); err != nil {
				b.Fatal(err)
			}
		}
		b.Logf("%d turns: keyword index built in %v", n, time.Since(t0))
		type bcase struct {
			name, ns string
			mode     Mode
		}
		var cases []bcase
		for _, mode := range []Mode{Hybrid, VectorOnly, KeywordOnly} {
			cases = append(cases, bcase{fmt.Sprintf("turns=%d/mode=%s", n, mode), "c1", mode})
		}
		// A small namespace beside the large one: it costs what it holds.
		cases = append(cases, bcase{fmt.Sprintf("turns=%d/namespace-of-%d/mode=hybrid", n, n/10), "c2", Hybrid})
		for _, c := range cases {
			mode := c.mode
			b.Run(c.name, func(b *testing.B) {
				b.ReportAllocs()
				var lat []time.Duration
				i := 0
				cpu0 := cputime.Process()
				for b.Loop() {
					t0 := time.Now()
					_, err := m.Query(b.Context(), Query{Text: queries[i%len(queries)], Namespace: c.ns, Mode: mode, K: 10})
					lat = append(lat, time.Since(t0))
					if err != nil {
						b.Fatal(err)
					}
					i++
				}
				// On a loaded machine wall time mostly measures waiting
				// for a core; CPU time per query is what an idle core
				// would need (at most: the vector scan may use 2 cores).
				b.ReportMetric((cputime.Process()-cpu0).Seconds()*1000/float64(b.N), "cpu-ms/op")
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
				b.ReportMetric(float64(m.vecs[c.ns].Len()), "child-vectors")
			})
		}
		m.Close()
	}
}

// BenchmarkQueryEveryNamespace measures a hybrid search of every
// namespace (no Namespace) of the server benchmark's store in process:
// 100 namespaces of 1,000 short records (one user's each), 100k in all.
func BenchmarkQueryEveryNamespace(b *testing.B) {
	m := newBenchMemory(b)
	w := []string{"flight", "invoice", "doctor", "birthday", "deploy", "garden", "piano", "tax", "holiday", "router",
		"coffee", "contract", "meeting", "dentist", "kernel", "novel", "bicycle", "salary", "wedding", "backup"}
	for lo := 0; lo < 100000; lo += 1000 {
		recs := make([]Record, 0, 1000)
		for j := lo; j < lo+1000; j++ {
			recs = append(recs, Record{ID: fmt.Sprintf("r%d", j), Namespace: "user:" + strconv.Itoa(j%100),
				Text: fmt.Sprintf("user %d talked about the %s and the %s on day %d, reference %s-%d", j%1000, w[j%len(w)], w[(j/7)%len(w)], j%365, w[(j/3)%len(w)][:3], j)})
		}
		addAll(b.Context(), b, m, recs)
	}
	// The first search builds every namespace's keyword index.
	if _, err := m.Query(b.Context(), Query{Text: "warm up", K: 5}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	cpu0 := cputime.Process()
	for b.Loop() {
		q := fmt.Sprintf("what about the %s and %s", w[i%len(w)], w[(i*7+3)%len(w)])
		if _, err := m.Query(b.Context(), Query{Text: q, K: 5}); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric((cputime.Process()-cpu0).Seconds()*1000/float64(b.N), "cpu-ms/op")
}

// BenchmarkOpen measures reopening a store of n memories from its snapshot
// (and counts embedder calls: there must be none).
func BenchmarkOpen(b *testing.B) {
	if err := keyword.Preload(); err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("memories=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			emb := newCounting(b, hash.DefaultDim)
			m, err := Open(b.Context(), dir, emb)
			if err != nil {
				b.Fatal(err)
			}
			recs := benchRecords(n, "ns")
			for i := range recs {
				recs[i].Namespace = fmt.Sprint("ns", i%4)
			}
			addAll(b.Context(), b, m, recs)
			if err := m.Close(); err != nil {
				b.Fatal(err)
			}
			embedded := emb.Texts()
			b.Run("snapshot", func(b *testing.B) {
				b.ReportAllocs()
				cpu0 := cputime.Process()
				for b.Loop() {
					m, err := Open(b.Context(), dir, emb)
					if err != nil {
						b.Fatal(err)
					}
					if m.Len() != n {
						b.Fatalf("reopened %d memories, want %d", m.Len(), n)
					}
					m.Close()
				}
				b.ReportMetric((cputime.Process()-cpu0).Seconds()*1000/float64(b.N), "cpu-ms/op")
				b.ReportMetric(float64(emb.Texts()-embedded), "re-embedded")
			})
			// What a command-line search pays: Open and one search of every
			// namespace, whose keyword indexes the snapshot holds (then,
			// with the file removed, are built from the records).
			openQuery := func(b *testing.B) {
				for b.Loop() {
					m, err := Open(b.Context(), dir, emb, WithLogger(discardLogger))
					if err != nil {
						b.Fatal(err)
					}
					if _, err := m.Query(b.Context(), Query{Text: "the marathon plan last week"}); err != nil {
						b.Fatal(err)
					}
					m.Close()
				}
			}
			b.Run("open+first-query", openQuery)
			meta, err := os.ReadFile(filepath.Join(dir, snapMetaFile))
			if err != nil {
				b.Fatal(err)
			}
			var sm snapMeta
			if err := json.Unmarshal(meta, &sm); err != nil || sm.Turns == "" {
				b.Fatalf("no turn index in the snapshot (%v)", err)
			}
			if err := os.Remove(filepath.Join(dir, sm.Turns)); err != nil {
				b.Fatal(err)
			}
			b.Run("open+first-query/turn-index-built", openQuery)
			if n > 10000 {
				return // a full replay of 100k takes ~10 s a round
			}
			// The same store after a crash before any snapshot: the whole
			// log is replayed (vectors from the log, text re-tokenised).
			b.Run("log-only", func(b *testing.B) {
				if err := os.Remove(filepath.Join(dir, snapMetaFile)); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				cpu0 := cputime.Process()
				for b.Loop() {
					m, err := Open(b.Context(), dir, emb, WithSnapshotEvery(0))
					if err != nil {
						b.Fatal(err)
					}
					if m.Len() != n {
						b.Fatalf("reopened %d memories, want %d", m.Len(), n)
					}
					crash(m)
					m.closeIndexes()
				}
				b.ReportMetric((cputime.Process()-cpu0).Seconds()*1000/float64(b.N), "cpu-ms/op")
				b.ReportMetric(float64(emb.Texts()-embedded), "re-embedded")
			})
		})
	}
}
