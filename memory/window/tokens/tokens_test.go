package tokens_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory/window/tokens"
)

// golden is one sample of testdata/cl100k.json: text with its cl100k_base
// token count, computed by measure/ with the real tokenizer.
type golden struct {
	Lang   string `json:"lang"`
	Source string `json:"source"`
	Text   string `json:"text"`
	Tokens int    `json:"cl100k"`
}

// TestEstimate_AgainstCL100K checks the promise in the package doc: the
// estimate is within ±15% of cl100k_base for English and Chinese, in total
// and for nearly every round-sized sample.
func TestEstimate_AgainstCL100K(t *testing.T) {
	b, err := os.ReadFile("testdata/cl100k.json")
	require.NoError(t, err)
	var samples []golden
	require.NoError(t, json.Unmarshal(b, &samples))
	byLang := map[string][]golden{}
	for _, s := range samples {
		byLang[s.Lang] = append(byLang[s.Lang], s)
	}
	require.Contains(t, byLang, "en")
	require.Contains(t, byLang, "zh")
	for lang, ss := range byLang {
		t.Run(lang, func(t *testing.T) {
			var real, est, within int
			worst := 0.0
			for _, s := range ss {
				e := tokens.Estimate(s.Text)
				real += s.Tokens
				est += e
				rel := math.Abs(float64(e-s.Tokens)) / float64(s.Tokens)
				if rel <= 0.15 {
					within++
				}
				worst = max(worst, rel)
			}
			total := float64(est-real) / float64(real)
			t.Logf("%s: %d samples, total error %+.1f%%, %d/%d within ±15%%, worst %.1f%%",
				lang, len(ss), 100*total, within, len(ss), 100*worst)
			assert.InDelta(t, 0, total, 0.10, "total estimate must be within ±10%% of cl100k_base")
			assert.GreaterOrEqual(t, float64(within)/float64(len(ss)), 0.95, "95%% of samples must be within ±15%%")
			assert.Less(t, worst, 0.20, "no sample may be off by 20%% or more")
		})
	}
}

func TestEstimate_Basics(t *testing.T) {
	tests := []struct {
		text string
		want int
	}{
		{"", 0},
		{" ", 1},
		{"hello", 1},
		{"hello world", 2},
		{"12345", 2},
		{"你好", 3},
		{"你好。", 4},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tokens.Estimate(tt.text), "Estimate(%q)", tt.text)
	}
	// Monotone enough for budgeting: more text never costs less.
	assert.Less(t, tokens.Estimate("a short line"), tokens.Estimate("a short line, and then a much longer one"))
}

func TestFunc(t *testing.T) {
	var c tokens.Counter = tokens.Func(func(s string) int { return len(s) })
	assert.Equal(t, 5, c.Count("hello"))
	assert.Equal(t, 5+tokens.MessageOverhead, tokens.Message(c, "hello"))
}

func TestTruncate(t *testing.T) {
	en := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 40)
	zh := strings.Repeat("短期记忆使用滑动窗口，超出上限时平滑遗忘最早的一轮对话。", 30)
	for name, text := range map[string]string{"en": en, "zh": zh} {
		t.Run(name, func(t *testing.T) {
			total := tokens.Estimate(text)
			for _, limit := range []int{total + 5, total, total / 2, 40, 12, 5, 0, -3} {
				out, cut := tokens.Truncate(tokens.Default, text, limit)
				assert.True(t, utf8.ValidString(out), "cut on a rune boundary")
				if limit >= total {
					assert.Equal(t, text, out)
					assert.Zero(t, cut)
					continue
				}
				assert.LessOrEqual(t, tokens.Estimate(out), max(limit, 0), "limit %d", limit)
				assert.Positive(t, cut)
				if out != "" {
					assert.True(t, strings.HasSuffix(out, tokens.Marker(cut)), "visible marker: %q", out)
					assert.True(t, strings.HasPrefix(text, strings.TrimSuffix(out, tokens.Marker(cut))), "keeps the head")
				} else {
					assert.Equal(t, total, cut)
				}
			}
		})
	}
}

func ExampleTruncate() {
	text := "Nothing said is lost, only moved: evicted rounds settle into long-term memory."
	out, cut := tokens.Truncate(tokens.Default, text, 12)
	fmt.Println(out)
	fmt.Println(cut, tokens.Estimate(out) <= 12)
	// Output:
	// Nothing said is lost, only…[truncated 10 tokens]
	// 10 true
}

func BenchmarkEstimate(b *testing.B) {
	for _, lang := range []struct{ name, text string }{
		{"en", strings.Repeat("The quick brown fox jumps over the lazy dog. ", 25)},
		{"zh", strings.Repeat("短期记忆使用滑动窗口，超出上限时平滑遗忘最早的一轮对话。", 20)},
	} {
		b.Run(lang.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(lang.text)))
			for b.Loop() {
				tokens.Estimate(lang.text)
			}
		})
	}
}

func TestCached(t *testing.T) {
	calls := 0
	base := tokens.Func(func(s string) int { calls++; return tokens.Estimate(s) })
	c := tokens.Cached(base, 4)
	texts := make([]string, 6)
	for i := range texts {
		texts[i] = strings.Repeat(fmt.Sprintf("round %d says something long enough to cache. ", i), 5)
	}
	for _, s := range texts[:2] {
		assert.Equal(t, tokens.Estimate(s), c.Count(s))
	}
	assert.Equal(t, 2, calls)
	for _, s := range texts[:2] {
		assert.Equal(t, tokens.Estimate(s), c.Count(s), "exact from the cache")
	}
	assert.Equal(t, 2, calls, "counted once")
	for _, s := range texts {
		assert.Equal(t, tokens.Estimate(s), c.Count(s))
	}
	assert.Equal(t, 6, calls)
	c.Count("short")
	c.Count("short")
	assert.Equal(t, 8, calls, "short texts are not cached")
}

func TestCached_Concurrent(t *testing.T) {
	c := tokens.Cached(tokens.Default, 8)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				s := strings.Repeat(fmt.Sprintf("text %d ", (g+i)%20), 30)
				assert.Equal(t, tokens.Estimate(s), c.Count(s))
			}
		})
	}
	wg.Wait()
}
