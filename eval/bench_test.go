package eval

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/internal/cputime"
	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory/longterm"
	_ "github.com/agentmem/agentmem/vdb/inmem" // registers the default backend
)

// realMemDir is the development set (../shared/data/realmem beside the
// repository); AGENTMEM_REALMEM=DIR names another copy.
func realMemDir(b *testing.B) string {
	dir := os.Getenv("AGENTMEM_REALMEM")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "data", "realmem")
	}
	if _, err := os.Stat(filepath.Join(dir, "turns.jsonl")); err != nil {
		b.Skipf("no RealMem data set: %v (set AGENTMEM_REALMEM)", err)
	}
	return dir
}

// BenchmarkIngestRealMem measures what `agentmem eval` reports as its
// ingest rate: every RealMem turn written into a fresh in-memory
// long-term memory with the offline hash:512 embedder, each conversation
// its own namespace, in the batches Run writes (the turns between two
// questions' asked_at), with the keyword path's turn index built (Run's
// first query of a conversation builds it; here one untimed query does).
// Besides turns/s it reports cpu-ms/op, the process's CPU time (every
// goroutine's: the parallel helpers', the garbage collector's) over the
// timed part of an ingest: on a machine shared with others the wall time
// of a run drifts more than the work it does.
func BenchmarkIngestRealMem(b *testing.B) {
	d, err := Load(realMemDir(b))
	if err != nil {
		b.Fatal(err)
	}
	if err := keyword.Preload(); err != nil {
		b.Fatal(err)
	}
	emb, err := hash.New(hash.DefaultDim)
	if err != nil {
		b.Fatal(err)
	}
	// Each conversation's turns and the turn counts at which Run asks
	// questions (its ingest batch boundaries).
	type conv struct {
		name  string
		turns []Turn
		cuts  []int
	}
	var convs []*conv
	byName := map[string]*conv{}
	pos := map[string]int{}
	for _, t := range d.Turns {
		c := byName[t.Conv]
		if c == nil {
			c = &conv{name: t.Conv}
			byName[t.Conv] = c
			convs = append(convs, c)
		}
		pos[Key(t.Conv, t.ID)] = len(c.turns)
		c.turns = append(c.turns, t)
	}
	for _, q := range d.Questions {
		if c := byName[q.Conv]; c != nil && q.AskedAt != "" {
			c.cuts = append(c.cuts, pos[Key(q.Conv, q.AskedAt)])
		}
	}
	for _, c := range convs {
		c.cuts = append(slices.Compact(slices.Sorted(slices.Values(c.cuts))), len(c.turns))
	}
	ctx := b.Context()
	b.ReportAllocs()
	var cpu time.Duration
	for b.Loop() {
		mem, err := longterm.New(ctx, emb)
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range convs {
			b.StopTimer()
			if _, err := mem.Query(ctx, longterm.Query{Text: "hello", Namespace: c.name, Mode: longterm.KeywordOnly}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			cpu0 := cputime.Process()
			in := 0
			for _, cut := range c.cuts {
				if cut <= in {
					continue
				}
				if _, _, err := addTurns(ctx, mem, c.turns[in:cut]); err != nil {
					b.Fatal(err)
				}
				in = cut
			}
			cpu += cputime.Process() - cpu0
		}
		b.StopTimer()
		mem.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(len(d.Turns))*float64(b.N)/b.Elapsed().Seconds(), "turns/s")
	b.ReportMetric(cpu.Seconds()*1000/float64(b.N), "cpu-ms/op")
}

// BenchmarkQueryRealMem measures the long-term memory's searches on real
// conversations: every RealMem turn stored (hash:512, each conversation its
// own namespace; untimed), then each question asked in its conversation
// (K 10; op i asks question i, cycling through them), in hybrid,
// vector and keyword. It reports each mode's p50-ms and its CPU per search
// (cpu-ms/op: the process's, over the timed part), the figures a change to
// the ranking's cost is checked by.
func BenchmarkQueryRealMem(b *testing.B) {
	d, err := Load(realMemDir(b))
	if err != nil {
		b.Fatal(err)
	}
	emb, err := hash.New(hash.DefaultDim)
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	mem, err := longterm.New(ctx, emb)
	if err != nil {
		b.Fatal(err)
	}
	defer mem.Close()
	if _, _, err := addTurns(ctx, mem, d.Turns); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct {
		name string
		mode longterm.Mode
	}{{"hybrid", longterm.Hybrid}, {"vector", longterm.VectorOnly}, {"keyword", longterm.KeywordOnly}} {
		b.Run(mode.name, func(b *testing.B) {
			ask := func(i int) {
				q := d.Questions[i%len(d.Questions)]
				if _, err := mem.Query(ctx, longterm.Query{Text: q.Question, Namespace: q.Conv, K: 10, Mode: mode.mode}); err != nil {
					b.Fatal(err)
				}
			}
			for i := range len(d.Questions) {
				ask(i) // warm: each namespace's indexes built
			}
			lat := make([]time.Duration, 0, b.N)
			cpu0 := cputime.Process()
			i := 0
			for b.Loop() {
				t := time.Now()
				ask(i)
				lat = append(lat, time.Since(t))
				i++
			}
			cpu := cputime.Process() - cpu0
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(cpu.Seconds()*1000/float64(len(lat)), "cpu-ms/op")
		})
	}
}
