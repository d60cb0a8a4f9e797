package longterm

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/embed/hash"
)

// BenchmarkAddLargeRecord adds one record of 1, 2, 4 and 8 MiB of one-line
// prose (issue 10's case: a single line of English and Chinese sentences)
// to an empty durable store: chunking, embedding every child (hash:64), the log
// write with its fsync and both indexes. Time and allocated bytes per op
// should double with the size; children/op says how many chunks a record
// makes.
func BenchmarkAddLargeRecord(b *testing.B) {
	emb, err := hash.New(64)
	if err != nil {
		b.Fatal(err)
	}
	unit := "The deploy of v1.2.3 failed with ERR_CONN_RESET at 3.14 pm. We rolled back, e.g. to v1.2.2! " +
		"我们决定把订单服务迁移到PostgreSQL。原因是事务支持更好，运维也更熟悉！ "
	for _, mib := range []int{1, 2, 4, 8} {
		text := strings.ToValidUTF8(strings.Repeat(unit, (mib<<20)/len(unit)+1)[:mib<<20], "")
		b.Run(fmt.Sprintf("%dMiB", mib), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			children := 0
			for b.Loop() {
				// Each op adds the record to an empty store, so that
				// ops do not differ by what the earlier ones left.
				b.StopTimer()
				m, err := Open(b.Context(), b.TempDir(), emb, WithMaxRecordBytes(16<<20), WithLogger(discardLogger))
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := m.Add(b.Context(), Record{ID: "big", Text: text}); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				children = len(m.children)
				crash(m) // no snapshot: the Add is the op
				b.StartTimer()
			}
			b.ReportMetric(float64(children), "children/op")
		})
	}
}
