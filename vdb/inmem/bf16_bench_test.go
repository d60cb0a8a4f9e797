package inmem

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkBatchCodesBF16 times batches of 8 to 512 queries over a
// database with int8 codes (N=100k, d=384, k=10) both ways, taking turns:
// through the codes' kernels and through the float32 scan's bfloat16
// pass, and reports the ratio of their times (bf16/codes) that
// bf16OverCodes is chosen by. It is skipped where the pass does not run.
//
//	go test -run '^$' -bench BatchCodesBF16 -benchtime 20x ./vdb/inmem
func BenchmarkBatchCodesBF16(b *testing.B) {
	const n, d = 100_000, 384
	if !useTileBF16(d, tileQueries) {
		b.Skip("no AVX-512 BF16 on this CPU or build")
	}
	r := rand.New(rand.NewPCG(5, 6))
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i)
	}
	db, err := New(d, WithCodes(Int8), WithCapacity(n))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := db.Add(b.Context(), ids, unitVecs(r, n, d)); err != nil {
		b.Fatal(err)
	}
	qs := unitVecs(r, 512, d)
	defer func(old int) { bf16OverCodes = old }(bf16OverCodes)
	for _, nq := range []int{8, 16, 24, 32, 48, 64, 200, 512} {
		b.Run(fmt.Sprintf("queries=%d", nq), func(b *testing.B) {
			var codes, bf16 time.Duration
			for b.Loop() {
				for _, c := range []struct {
					over int
					t    *time.Duration
				}{{1 << 30, &codes}, {1, &bf16}} {
					bf16OverCodes = c.over
					t := time.Now()
					if _, err := db.SearchBatch(b.Context(), qs[:nq], 10); err != nil {
						b.Fatal(err)
					}
					*c.t += time.Since(t)
				}
			}
			b.ReportMetric(float64(bf16)/float64(codes), "bf16/codes")
			b.ReportMetric(float64(codes.Microseconds())/1000/float64(b.N), "codes-ms")
			b.ReportMetric(float64(bf16.Microseconds())/1000/float64(b.N), "bf16-ms")
		})
	}
}
