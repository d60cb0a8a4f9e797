//go:build faiss

package pgvector_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/faiss"
)

// Under -tags faiss, BenchmarkCompare also measures Faiss IVF on the same
// vectors, with about √n lists as the README advises: IVF256,Flat at 100k
// (the index vdb/faiss's BenchmarkApprox uses), IVF1024,Flat at 1M.
func init() {
	extraBench = append(extraBench, func(b *testing.B, vecs, queries [][]float32, exact [][]vdb.Result) {
		lists := 256
		if len(vecs) >= 1_000_000 {
			lists = 1024
		}
		factory := fmt.Sprintf("IVF%d,Flat", lists)
		t0 := time.Now()
		ivf, err := faiss.New(benchDim, faiss.WithFactory(factory))
		if err != nil {
			b.Fatal(err)
		}
		defer ivf.Close()
		if err := ivf.Train(b.Context(), vecs[:min(len(vecs), 39*lists)]); err != nil {
			b.Fatal(err)
		}
		addAll(b, ivf, vecs, 50_000)
		build := time.Since(t0)
		b.Logf("faiss %s over %d vectors: train+add %v", factory, len(vecs), build.Round(time.Millisecond))
		for _, np := range []int{8, 16} {
			if err := ivf.SetNProbe(np); err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("faiss-ivf%d/nprobe=%d", lists, np), func(b *testing.B) {
				benchSearch(b, ivf, queries, exact)
				b.ReportMetric(build.Seconds(), "build-s")
			})
		}
	})
}
