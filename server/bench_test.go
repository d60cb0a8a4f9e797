package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem/memory/longterm"
)

// The benchmarks run against one store of benchN memories (100k by
// default; AGENTMEM_BENCH_N overrides), built once per test binary with the
// hash:512 embedder in a temporary directory removed by TestMain.
var benchDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	if builtDir != "" {
		os.RemoveAll(builtDir)
	}
	os.Exit(code)
}

// builtDir holds the CLI that buildAgentmem built, if it did.
var builtDir string

var benchWords = []string{"flight", "invoice", "doctor", "birthday", "deploy", "garden", "piano", "tax", "holiday", "router",
	"coffee", "contract", "meeting", "dentist", "kernel", "novel", "bicycle", "salary", "wedding", "backup"}

func benchText(i int) string {
	w := benchWords
	return fmt.Sprintf("user %d talked about the %s and the %s on day %d, reference %s-%d", i%1000, w[i%len(w)], w[(i/7)%len(w)], i%365, w[(i/3)%len(w)][:3], i)
}

func benchQuery(i int) string {
	w := benchWords
	return fmt.Sprintf("what about the %s and %s", w[i%len(w)], w[(i*7+3)%len(w)])
}

// benchStore returns the shared benchmark store.
var benchStore = sync.OnceValues(func() (*longterm.Memory, error) {
	n := 100_000
	if s := os.Getenv("AGENTMEM_BENCH_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "agentmem-server-bench-")
	if err != nil {
		return nil, err
	}
	benchDir = dir
	emb, err := mustHashE()
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	m, err := longterm.Open(ctx, dir, emb, longterm.WithLogger(quiet), longterm.WithSnapshotEvery(0))
	if err != nil {
		return nil, err
	}
	const batch = 1000
	for i := 0; i < n; i += batch {
		recs := make([]longterm.Record, 0, batch)
		for j := i; j < min(i+batch, n); j++ {
			recs = append(recs, longterm.Record{Text: benchText(j), Namespace: "user:" + strconv.Itoa(j%100)})
		}
		if _, err := m.AddBatch(ctx, recs); err != nil {
			return nil, err
		}
	}
	return m, nil
})

// benchServer serves the shared store on a loopback port for the
// benchmark.
func benchServer(b *testing.B, st Store) string {
	srv, err := New(st, WithLogger(quiet))
	if err != nil {
		b.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l, 10*time.Second) }()
	b.Cleanup(func() { cancel(); <-done })
	return "http://" + l.Addr().String()
}

// runClients runs b.N operations split over clients goroutines, each
// timed, and reports req/s, p50 and p99.
func runClients(b *testing.B, clients int, op func(i int) error) {
	lat := make([][]time.Duration, clients)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < b.N; i += clients {
				t0 := time.Now()
				if err := op(i); err != nil {
					b.Error(err)
					return
				}
				lat[c] = append(lat[c], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) == 0 {
		return
	}
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(0, "ns/op") // not meaningful with concurrent clients
}

func BenchmarkSearch(b *testing.B) {
	benchInprocAndHTTP(b,
		func(st *longterm.Memory, i int) error {
			_, err := st.Query(context.Background(), longterm.Query{Text: benchQuery(i), K: 5})
			return err
		},
		func(hc *http.Client, url string, i int) error {
			var res SearchResult
			return post(hc, "POST", url+"/v1/search", SearchRequest{Query: benchQuery(i), K: 5}, http.StatusOK, &res)
		})
}

func BenchmarkAdd(b *testing.B) {
	benchInprocAndHTTP(b,
		func(st *longterm.Memory, i int) error {
			_, err := st.Add(context.Background(), longterm.Record{Text: benchText(i) + " inproc", Namespace: "bench"})
			return err
		},
		func(hc *http.Client, url string, i int) error {
			var res AddResult
			return post(hc, "POST", url+"/v1/memories", AddRequest{Text: benchText(i) + " http", Scope: Scope{Namespace: "bench"}}, http.StatusCreated, &res)
		})
}

// benchInprocAndHTTP runs one operation on the shared benchmark store, in
// process and over HTTP, with 1, 8 and 64 concurrent clients.
func benchInprocAndHTTP(b *testing.B, inproc func(st *longterm.Memory, i int) error, overHTTP func(hc *http.Client, url string, i int) error) {
	st, err := benchStore()
	if err != nil {
		b.Fatal(err)
	}
	url := benchServer(b, st)
	hc := loadClient(64)
	for _, clients := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("inproc/clients=%d", clients), func(b *testing.B) {
			runClients(b, clients, func(i int) error { return inproc(st, i) })
		})
		b.Run(fmt.Sprintf("http/clients=%d", clients), func(b *testing.B) {
			runClients(b, clients, func(i int) error { return overHTTP(hc, url, i) })
		})
	}
}
