package bench_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	chromem "github.com/philippgille/chromem-go"

	"github.com/agentmem/agentmem/internal/testvec"
	"github.com/agentmem/agentmem/vdb/inmem"
)

const (
	dim = 384
	k   = 10
)

// searcher is one backend under test: a single query, the k best IDs.
type searcher func(ctx context.Context, q []float32) ([]int64, error)

// fixture holds both backends filled with the same n vectors.
type fixture struct {
	queries [][]float32
	inmem   searcher
	chromem searcher
}

func newFixture(b *testing.B, n int) *fixture {
	b.Helper()
	ctx := b.Context()
	vecs := testvec.Unit(1, n, dim)

	db, err := inmem.New(dim, inmem.WithCapacity(n))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i)
	}
	if err := db.Add(ctx, ids, vecs); err != nil {
		b.Fatal(err)
	}

	cdb := chromem.NewDB()
	noEmbed := func(context.Context, string) ([]float32, error) {
		return nil, errors.New("bench: documents carry precomputed embeddings")
	}
	col, err := cdb.CreateCollection("bench", nil, noEmbed)
	if err != nil {
		b.Fatal(err)
	}
	docs := make([]chromem.Document, n)
	for i, v := range vecs {
		docs[i] = chromem.Document{ID: strconv.Itoa(i), Embedding: v, Content: "doc " + strconv.Itoa(i)}
	}
	if err := col.AddDocuments(ctx, docs, 4); err != nil {
		b.Fatal(err)
	}

	f := &fixture{
		queries: testvec.Unit(2, 32, dim),
		inmem: func(ctx context.Context, q []float32) ([]int64, error) {
			res, err := db.Search(ctx, q, k)
			if err != nil {
				return nil, err
			}
			out := make([]int64, len(res))
			for i, r := range res {
				out[i] = r.ID
			}
			return out, nil
		},
		chromem: func(ctx context.Context, q []float32) ([]int64, error) {
			res, err := col.QueryEmbedding(ctx, q, k, nil, nil)
			if err != nil {
				return nil, err
			}
			out := make([]int64, len(res))
			for i, r := range res {
				id, err := strconv.ParseInt(r.ID, 10, 64)
				if err != nil {
					return nil, err
				}
				out[i] = id
			}
			return out, nil
		},
	}
	// Both must find the same neighbours, or the comparison means nothing.
	for _, q := range f.queries[:4] {
		a, err := f.inmem(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		c, err := f.chromem(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		if !slices.Equal(a, c) {
			b.Fatalf("inmem and chromem disagree on the top %d: %v vs %v", k, a, c)
		}
	}
	return f
}

func p50ms(d []time.Duration) float64 {
	slices.Sort(d)
	return float64(d[len(d)/2]) / float64(time.Millisecond)
}

// BenchmarkSearch runs single-query search (d=384, k=10, random unit
// vectors) through inmem and chromem-go on the same vectors, alternating the
// two query by query so that both see the same machine load, and reports each
// median and the speed-up of inmem over chromem-go.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			f := newFixture(b, n)
			ctx := b.Context()
			var tIn, tCh []time.Duration
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				q := f.queries[i%len(f.queries)]
				i++
				start := time.Now()
				if _, err := f.inmem(ctx, q); err != nil {
					b.Fatal(err)
				}
				mid := time.Now()
				if _, err := f.chromem(ctx, q); err != nil {
					b.Fatal(err)
				}
				tIn = append(tIn, mid.Sub(start))
				tCh = append(tCh, time.Since(mid))
			}
			in, ch := p50ms(tIn), p50ms(tCh)
			b.ReportMetric(in, "inmem-p50-ms")
			b.ReportMetric(ch, "chromem-p50-ms")
			b.ReportMetric(ch/in, "speedup")
		})
	}
}

// BenchmarkSearchBackend times each backend on its own, for the usual ns/op
// and allocation figures.
func BenchmarkSearchBackend(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		f := newFixture(b, n)
		for _, be := range []struct {
			name string
			s    searcher
		}{{"inmem", f.inmem}, {"chromem", f.chromem}} {
			b.Run(fmt.Sprintf("n=%d/%s", n, be.name), func(b *testing.B) {
				ctx := b.Context()
				var durs []time.Duration
				i := 0
				b.ReportAllocs()
				for b.Loop() {
					start := time.Now()
					if _, err := be.s(ctx, f.queries[i%len(f.queries)]); err != nil {
						b.Fatal(err)
					}
					durs = append(durs, time.Since(start))
					i++
				}
				b.ReportMetric(p50ms(durs), "p50-ms")
			})
		}
	}
}
