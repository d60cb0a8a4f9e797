package keyword_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/keyword"
)

const (
	benchEN = "The deploy of v1.2.3 failed with ERR_CONN_RESET at 3:14 pm; call Zhang on 138-0013-8000 or mail ops@example.com. " +
		"We rolled back to v1.2.2 and opened ticket E1234 for the load balancer idle timeout."
	// benchTurn is a conversation turn: plain English prose, as most of
	// what a long-term memory indexes (the word memo's case).
	benchTurn = "That sounds like a really good plan. Before you commit to the new running schedule, though, " +
		"think about how your knee felt after the half marathon last spring. I would start with three short runs " +
		"a week, keep one of them on the trail by the river, and add the longer Sunday run only once the first " +
		"two weeks feel easy. If you still want to sign up for the October race, we can work backwards from the " +
		"date and build the mileage slowly, with a rest week every fourth week. Do you want me to draft the first " +
		"month of the plan, with the distances and the days, so you can put it in your calendar tonight? " +
		"Caroline mentioned she might join you on Saturdays, which would make the early starts much easier."
	benchZH = "我们最后决定把订单服务的数据库从MySQL迁移到PostgreSQL，主要是因为事务和JSON支持更好。" +
		"部署的时候报错，后来发现是负载均衡的空闲超时设置太短，张伟的手机号是138-0013-8000。"
)

func BenchmarkTokens(b *testing.B) {
	for _, bc := range []struct {
		name string
		mode keyword.CJKMode
		text string
	}{
		{"en", keyword.Bigrams, benchEN},
		{"en/turn", keyword.Bigrams, benchTurn},
		{"zh/segmenter", keyword.Segmenter, benchZH},
		{"zh/bigrams", keyword.Bigrams, benchZH},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tok := newTok(b)
			if bc.mode == keyword.Segmenter {
				tok = segmenterTok(b)
				if err := keyword.Preload(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.text)))
			for b.Loop() {
				tok.Tokens(bc.text)
			}
		})
	}
}

// BenchmarkTokensEach tokenizes benchTurn's sentences, as a search's
// snippets do for the chunks of its hits: one Tokens call for each
// (each/tokens) against one TokensEach call (each/batch).
func BenchmarkTokensEach(b *testing.B) {
	sents := strings.SplitAfter(benchTurn, ". ")
	tok := newTok(b)
	b.Run("tokens", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(benchTurn)))
		for b.Loop() {
			for _, s := range sents {
				tok.Tokens(s)
			}
		}
	})
	b.Run("batch", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(benchTurn)))
		for b.Loop() {
			keyword.TokensEach(tok, sents)
		}
	})
}

// corpus makes n synthetic chunks: Zipf-distributed English and Chinese
// words (so common terms have long posting lists), codes and numbers.
type corpus struct {
	rng   *rand.Rand
	zipf  *rand.Zipf
	vocab []string
}

func newCorpus(seed uint64) *corpus {
	rng := rand.New(rand.NewPCG(seed, 7))
	c := &corpus{rng: rng, zipf: rand.NewZipf(rng, 1.1, 2, 19_999)}
	for i := range 20_000 {
		if i%3 == 2 { // a two-character Chinese word
			c.vocab = append(c.vocab, string([]rune{rune(0x4e00 + rng.IntN(3000)), rune(0x4e00 + rng.IntN(3000))}))
			continue
		}
		var w strings.Builder
		for range 3 + rng.IntN(6) {
			w.WriteByte(byte('a' + rng.IntN(26)))
		}
		c.vocab = append(c.vocab, w.String())
	}
	return c
}

func (c *corpus) text(words int) string {
	var b strings.Builder
	for i := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		switch c.rng.IntN(40) {
		case 0:
			fmt.Fprintf(&b, "ERR_%s_%d", strings.ToUpper(c.vocab[c.rng.IntN(200)]), c.rng.IntN(100))
		case 1:
			fmt.Fprintf(&b, "138-%04d-%04d", c.rng.IntN(10000), c.rng.IntN(10000))
		default:
			b.WriteString(c.vocab[c.zipf.Uint64()])
		}
	}
	return b.String()
}

func buildIndex(b *testing.B, n int) (*keyword.Index, *corpus) {
	b.Helper()
	c := newCorpus(1)
	ix := keyword.NewIndex(newTok(b, keyword.WithCJK(keyword.Bigrams)))
	for i := range n {
		ix.Add(int64(i), c.text(10+c.rng.IntN(20)))
	}
	return ix, c
}

func BenchmarkIndex_Add(b *testing.B) {
	c := newCorpus(2)
	texts := make([]string, 1024)
	for i := range texts {
		texts[i] = c.text(10 + c.rng.IntN(20))
	}
	ix := keyword.NewIndex(newTok(b, keyword.WithCJK(keyword.Bigrams)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		ix.Add(int64(i%50_000), texts[i%len(texts)])
		i++
	}
}

func BenchmarkIndex_Search(b *testing.B) {
	for _, n := range []int{10_000, 30_000, 100_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			ix, c := buildIndex(b, n)
			elapsed := time.Since(start)
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.Logf("built %d docs in %v: %+v", n, elapsed, ix.Stats())
			queries := make([]string, 256)
			for i := range queries {
				queries[i] = c.text(6)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				ix.Search(queries[i%len(queries)], 10, nil)
				i++
			}
			// After the loop: b.Loop's first call resets reported metrics.
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n), "B-heap/doc")
		})
	}
}

func BenchmarkIndex_Import(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			ix, _ := buildIndex(b, n)
			var snap strings.Builder
			if err := ix.Export(&snap); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := keyword.NewIndex(ix.Tokenizer()).Import(strings.NewReader(snap.String())); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(snap.Len())/(1<<20), "MB-snapshot")
		})
	}
}
