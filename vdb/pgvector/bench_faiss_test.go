//go:build faiss

package pgvector_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/faiss"
)

// Under -tags faiss, BenchmarkCompare also measures Faiss IVF256,Flat (the
// index vdb/faiss's BenchmarkApprox uses at 100k) on the same vectors.
func init() {
	extraBench = append(extraBench, func(b *testing.B, vecs, queries [][]float32, exact [][]vdb.Result) {
		t0 := time.Now()
		ivf, err := faiss.New(benchDim, faiss.WithFactory("IVF256,Flat"))
		if err != nil {
			b.Fatal(err)
		}
		defer ivf.Close()
		if err := ivf.Train(b.Context(), vecs[:min(len(vecs), 39*256)]); err != nil {
			b.Fatal(err)
		}
		addAll(b, ivf, vecs, 50_000)
		build := time.Since(t0)
		b.Logf("faiss IVF256,Flat over %d vectors: train+add %v", len(vecs), build.Round(time.Millisecond))
		for _, np := range []int{8, 16} {
			if err := ivf.SetNProbe(np); err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("faiss-ivf256/nprobe=%d", np), func(b *testing.B) {
				benchSearch(b, ivf, queries, exact)
				b.ReportMetric(build.Seconds(), "build-s")
			})
		}
	})
}
