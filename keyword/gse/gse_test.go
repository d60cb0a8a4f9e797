package gse_test

import (
	"runtime"
	"testing"

	"github.com/go-ego/gse"
)

// BenchmarkSegmenterLoad measures loading gse's embedded dictionary, which
// Segmenter mode does once per process, and the heap it keeps.
func BenchmarkSegmenterLoad(b *testing.B) {
	for _, dict := range []string{"zh_s", "zh"} {
		b.Run(dict, func(b *testing.B) {
			var keep []*gse.Segmenter
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for b.Loop() {
				seg := &gse.Segmenter{SkipLog: true}
				if err := seg.LoadDictEmbed(dict); err != nil {
					b.Fatal(err)
				}
				keep = append(keep, seg)
			}
			var after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(keep))/(1<<20), "MB-heap/op")
			runtime.KeepAlive(keep)
		})
	}
}
