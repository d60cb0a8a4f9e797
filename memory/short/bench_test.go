package short_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/memory/short"
)

// shortSegments returns n distinct short rounds (~60-80 bytes), English and
// Chinese mixed.
func shortSegments(n int) []string {
	topics := []string{"flight LH 401", "aisle seat", "花生过敏", "staging password", "dinner at 7pm", "北京天气", "deploy error E1234", "dentist appointment"}
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("user: note %d about %s\nassistant: noted (%d)", i, topics[i%len(topics)], i*7)
	}
	return out
}

// BenchmarkShortMemoryUpdate measures Update throughput with the hash:512
// embedder on short segments. One op writes n segments into a fresh memory,
// one Update per segment (batch=1) or with UpdateBatch; with store=true the
// op includes opening the directory and Close, which writes the snapshot,
// and every Update/UpdateBatch call is one fsync.
func BenchmarkShortMemoryUpdate(b *testing.B) {
	for _, store := range []bool{false, true} {
		for _, batch := range []int{1, 100, 1000} {
			n := 10000
			if store && batch == 1 {
				n = 1000 // one fsync per segment: keep the run short
			}
			segs := shortSegments(n)
			b.Run(fmt.Sprintf("store=%v/batch=%d/n=%d", store, batch, n), func(b *testing.B) {
				emb, err := hash.New(512)
				require.NoError(b, err)
				ctx := b.Context()
				b.ReportAllocs()
				for b.Loop() {
					var mem *short.Memory
					var err error
					if store {
						mem, err = short.Open(ctx, b.TempDir(), emb)
					} else {
						mem, err = short.New(ctx, emb)
					}
					if err != nil {
						b.Fatal(err)
					}
					for lo := 0; lo < n; lo += batch {
						if batch == 1 {
							err = mem.Update(ctx, segs[lo])
						} else {
							_, err = mem.UpdateBatch(ctx, segs[lo:min(lo+batch, n)])
						}
						if err != nil {
							b.Fatal(err)
						}
					}
					if err := mem.Close(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "segments/s")
			})
		}
	}
}

// BenchmarkShortMemoryUpdateConcurrent measures single-segment Updates to a
// store from several goroutines at once: they share fsyncs (group commit in
// longterm's log), so throughput grows with the number of writers. One op
// writes n segments into a fresh store, split across the writers.
func BenchmarkShortMemoryUpdateConcurrent(b *testing.B) {
	const n = 1000
	segs := shortSegments(n)
	for _, writers := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("writers=%d/n=%d", writers, n), func(b *testing.B) {
			emb, err := hash.New(512)
			require.NoError(b, err)
			ctx := b.Context()
			b.ReportAllocs()
			for b.Loop() {
				mem, err := short.Open(ctx, b.TempDir(), emb)
				if err != nil {
					b.Fatal(err)
				}
				var wg sync.WaitGroup
				for w := range writers {
					wg.Go(func() {
						for i := w; i < n; i += writers {
							if err := mem.Update(ctx, segs[i]); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				if err := mem.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "segments/s")
		})
	}
}
