//go:build unix

package longterm

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/keyword"
)

// scaleNamespaces are the two namespaces of BenchmarkScale's store: "big"
// of n memories and "small" of n/10, side by side in one store (each
// namespace has its own indexes, so the small one costs what a store of
// its size would).
const scaleBig, scaleSmall = "big", "small"

// scaleStore returns the directory of BenchmarkScale's store of n + n/10
// memories, building it when the directory holds none.
// AGENTMEM_BENCH_STORE=DIR keeps it (outside the repository) between runs:
// building 1.1M memories takes minutes.
func scaleStore(b *testing.B, n int) string {
	dir := os.Getenv("AGENTMEM_BENCH_STORE")
	if dir == "" {
		dir = b.TempDir()
	}
	done := filepath.Join(dir, "bench-built")
	if _, err := os.Stat(done); err == nil {
		return dir
	}
	emb, _ := hash.New(hash.DefaultDim)
	t0 := time.Now()
	m, err := Open(b.Context(), dir, emb, WithSnapshotEvery(0), WithoutSync(), WithLogger(discardLogger))
	if err != nil {
		b.Fatal(err)
	}
	addAll(b.Context(), b, m, benchRecords(n, scaleBig))
	addAll(b.Context(), b, m, benchRecords(n/10, scaleSmall))
	if err := m.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	fmt.Printf("built a store of %d memories in %v\n", n+n/10, time.Since(t0))
	return dir
}

// scaleQueries returns n queries in the style of the store's turns: a
// clause of a turn, a ticket code, a question.
func scaleQueries(n, size int) []string {
	r := rand.New(rand.NewPCG(7, 11))
	out := make([]string, n)
	for i := range out {
		switch i % 4 {
		case 0:
			out[i] = fmt.Sprintf("OPS-%d", r.IntN(size))
		case 1:
			out[i] = fmt.Sprintf("when %s %s %s", benchSubjects[r.IntN(len(benchSubjects))],
				benchVerbs[r.IntN(len(benchVerbs))], benchObjects[r.IntN(len(benchObjects))])
		case 2:
			out[i] = fmt.Sprintf("%s %s", benchObjects[r.IntN(len(benchObjects))], benchWhen[r.IntN(len(benchWhen))])
		default:
			out[i] = benchTurn(r, r.IntN(size))
		}
	}
	return out
}

// scaleCase is one (namespace, mode) of BenchmarkScale.
type scaleCase struct {
	ns   string
	mode Mode
}

func (c scaleCase) String() string { return c.ns + "/" + c.mode.String() }

// scaleRun times every query of qs in every case, rounds times, the cases
// interleaved query by query, and returns each case's latencies and the
// top ids of each query in each case (of the last round).
func scaleRun(b *testing.B, m *Memory, cases []scaleCase, qs []string, rounds int, profile string) (map[scaleCase][]time.Duration, map[scaleCase][][]string) {
	lat := map[scaleCase][]time.Duration{}
	top := map[scaleCase][][]string{}
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	for range rounds {
		for _, c := range cases {
			top[c] = top[c][:0]
		}
		for _, q := range qs {
			for _, c := range cases {
				t0 := time.Now()
				hits, err := m.Query(b.Context(), Query{Text: q, Namespace: c.ns, Mode: c.mode, K: 10})
				lat[c] = append(lat[c], time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				ids := make([]string, len(hits))
				for i, h := range hits {
					ids[i] = h.ID
				}
				top[c] = append(top[c], ids)
			}
		}
	}
	return lat, top
}

// quantile returns the q-quantile of d (sorted in place).
func quantile(d []time.Duration, q float64) time.Duration {
	slices.Sort(d)
	return d[int(float64(len(d)-1)*q)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// recallAt returns the mean share of want's ids found in got, query by
// query.
func recallAt(want, got [][]string) float64 {
	var sum float64
	n := 0
	for i := range want {
		if len(want[i]) == 0 {
			continue
		}
		g := map[string]bool{}
		for _, id := range got[i] {
			g[id] = true
		}
		hit := 0
		for _, id := range want[i] {
			if g[id] {
				hit++
			}
		}
		sum += float64(hit) / float64(len(want[i]))
		n++
	}
	return sum / float64(max(n, 1))
}

// scaleExact are the options of BenchmarkScale's exact pass.
var scaleExact = []Option{WithANN(0, 0)}

// BenchmarkScale measures long-term search at scale: a store with a
// namespace of AGENTMEM_BENCH_SCALE memories (default 1M) beside one of a
// tenth of that, opened twice: exact search everywhere, then with the
// default options. It prints each (namespace, mode)'s p50 and p95, the
// ratio of the big namespace's hybrid p50 to the small one's (same run,
// queries interleaved), and the recall@10 of the default pass's hybrid
// results against the exact pass's. Run it once:
//
//	AGENTMEM_BENCH_STORE=/tmp/scale go test -run '^$' -bench Scale -benchtime 1x ./memory/longterm
//
// AGENTMEM_BENCH_QUERIES (default 200) and AGENTMEM_BENCH_ROUNDS (3) size
// the runs (the exact pass runs one round, and its results are kept in
// the store's directory for the next run); AGENTMEM_BENCH_PROBES=P1,P2,…
// runs a pass with WithANN(DefaultANNMin, P) for each P instead of the
// default one; AGENTMEM_BENCH_PROFILE=PREFIX writes a CPU profile of each
// pass's queries to PREFIX-NAME.pprof.
func BenchmarkScale(b *testing.B) {
	if err := keyword.Preload(); err != nil {
		b.Fatal(err)
	}
	n := envInt("AGENTMEM_BENCH_SCALE", 1_000_000)
	nq := envInt("AGENTMEM_BENCH_QUERIES", 200)
	rounds := envInt("AGENTMEM_BENCH_ROUNDS", 3)
	prof := os.Getenv("AGENTMEM_BENCH_PROFILE")
	dir := scaleStore(b, n)
	qs := scaleQueries(nq, n)
	emb, _ := hash.New(hash.DefaultDim)
	var cases []scaleCase
	for _, mode := range []Mode{Hybrid, VectorOnly, KeywordOnly} {
		cases = append(cases, scaleCase{scaleSmall, mode}, scaleCase{scaleBig, mode})
	}
	pass := func(name string, rounds int, opts []Option) (map[scaleCase][]time.Duration, map[scaleCase][][]string) {
		runtime.GC()
		t0 := time.Now()
		m, err := Open(b.Context(), dir, emb, append([]Option{WithLogger(discardLogger)}, opts...)...)
		if err != nil {
			b.Fatal(err)
		}
		defer m.Close()
		fmt.Printf("%s: opened in %v\n", name, time.Since(t0))
		t0 = time.Now()
		for _, ns := range []string{scaleSmall, scaleBig} {
			if _, err := m.Query(b.Context(), Query{Text: "warm up", Namespace: ns}); err != nil {
				b.Fatal(err)
			}
		}
		fmt.Printf("%s: first queries in %v\n", name, time.Since(t0))
		p := ""
		if prof != "" {
			p = prof + "-" + name + ".pprof"
		}
		lat, top := scaleRun(b, m, cases, qs, rounds, p)
		for _, c := range cases {
			l := lat[c]
			fmt.Printf("%s %-16s p50 %7.2f ms  p95 %7.2f ms\n", name, c, ms(quantile(l, .5)), ms(quantile(l, .95)))
		}
		return lat, top
	}
	for b.Loop() {
		// The exact pass's top ids are kept beside the store (they do not
		// change): a run that finds them runs only the default passes.
		cache := filepath.Join(dir, fmt.Sprintf("bench-exact-%d.json", nq))
		var topE map[string][][]string
		if data, err := os.ReadFile(cache); err == nil {
			if err := json.Unmarshal(data, &topE); err != nil {
				b.Fatal(err)
			}
		} else {
			_, top := pass("exact", 1, scaleExact)
			topE = map[string][][]string{}
			for c, ids := range top {
				topE[c.String()] = ids
			}
			data, err := json.Marshal(topE)
			if err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(cache, data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		debug.FreeOSMemory()
		probes := []int{0}
		if v := os.Getenv("AGENTMEM_BENCH_PROBES"); v != "" {
			probes = probes[:0]
			for _, f := range strings.Split(v, ",") {
				p, err := strconv.Atoi(f)
				if err != nil {
					b.Fatal(err)
				}
				probes = append(probes, p)
			}
		}
		for _, p := range probes {
			var opts []Option
			name := "default"
			if p > 0 {
				opts = append(opts, WithANN(DefaultANNMin, p))
				name = fmt.Sprintf("probes=%d", p)
			}
			latD, topD := pass(name, rounds, opts)
			runtime.GC()
			debug.FreeOSMemory()
			h := func(ns string) time.Duration { return quantile(latD[scaleCase{ns, Hybrid}], .5) }
			ratio := float64(h(scaleBig)) / float64(h(scaleSmall))
			rec := recallAt(topE[scaleCase{scaleBig, Hybrid}.String()], topD[scaleCase{scaleBig, Hybrid}])
			recV := recallAt(topE[scaleCase{scaleBig, VectorOnly}.String()], topD[scaleCase{scaleBig, VectorOnly}])
			recS := recallAt(topE[scaleCase{scaleSmall, Hybrid}.String()], topD[scaleCase{scaleSmall, Hybrid}])
			fmt.Printf("%s: hybrid p50 big/small %.2f×; recall@10 vs exact: hybrid %.4f, vector %.4f (small namespace hybrid %.4f)\n",
				name, ratio, rec, recV, recS)
			b.ReportMetric(ratio, name+"-big/small")
			b.ReportMetric(rec, name+"-hybrid-recall@10")
			b.ReportMetric(recV, name+"-vector-recall@10")
		}
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
