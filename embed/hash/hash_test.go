package hash

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed"
)

func newEmbedder(t testing.TB, dim int) *Embedder {
	t.Helper()
	e, err := New(dim)
	require.NoError(t, err)
	return e
}

func embedOne(t testing.TB, e *Embedder, text string) []float32 {
	t.Helper()
	v, err := e.Embed(context.Background(), []string{text})
	require.NoError(t, err)
	require.Len(t, v, 1)
	return v[0]
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func requireUnit(t *testing.T, v []float32) {
	t.Helper()
	for i, x := range v {
		require.False(t, math.IsNaN(float64(x)) || math.IsInf(float64(x), 0), "component %d is %v", i, x)
	}
	require.InDelta(t, 1, dot(v, v), 1e-5, "vectors must be L2-normalised")
}

func TestNew(t *testing.T) {
	t.Parallel()

	for _, dim := range []int{1, 2, 16, DefaultDim, 4096, MaxDim} {
		e, err := New(dim)
		require.NoError(t, err, "dim %d", dim)
		assert.Equal(t, dim, e.Dim())
		assert.Equal(t, fmt.Sprintf("hash:%d", dim), e.Name())
		requireUnit(t, embedOne(t, e, "hello world"))
	}
	for _, dim := range []int{0, -1, MaxDim + 1} {
		_, err := New(dim)
		require.Error(t, err, "dim %d", dim)
		assert.Contains(t, err.Error(), "out of range")
	}
}

// The golden values pin the algorithm: stores persist these vectors, so any
// change to tokenising, hashing or weighting must be deliberate (and must
// come with a new Name, or stores built before would silently mismatch).
func TestEmbed_GoldenValues(t *testing.T) {
	t.Parallel()

	assert.Equal(t, uint64(0x32fd0025808e70f1), key(kindWord, []rune("flight")), "word hash")
	assert.Equal(t, uint64(0x133f517f53d467fc), key(kindCJK2, []rune("航班")), "CJK bigram hash")

	e := newEmbedder(t, 16)
	tests := []struct {
		text string
		want []float32
	}{
		{"My flight is LH 401 on Friday.", []float32{0, 0.15811388, 0, 0.31622776, 0.31622776, 0, 0, 0, 0.15811388, 0.15811388, -0.15811388, 0.47434166, -0.15811388, 0.6324555, -0.15811388, 0.15811388}},
		{"我的航班是星期五。", []float32{0.27196413, 0, -0.1903749, 0, 0.54392827, 0, -0.1903749, 0.35355338, 0.1903749, -0.1903749, 0, 0, -0.1903749, 0.46233907, 0.27196413, -0.1903749}},
		{"?!", []float32{0.70710677, 0, 0, 0, 0, 0, 0, 0, 0, 0, -0.70710677, 0, 0, 0, 0, 0}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, embedOne(t, e, tt.text), "golden vector of %q changed: the algorithm changed", tt.text)
	}

	// At the default dimension, pin the exact bits through a digest.
	e = newEmbedder(t, DefaultDim)
	digests := []struct{ text, want string }{
		{"My flight is LH 401 on Friday.", "babb162e575e1a450993c2eec82b665430e0ae32604b3d6cef422f32cfc165ea"},
		{"the the the cat; 猫猫猫 ねこ", "e5539c06234a86b61c7244a735018136ccc14dcd44fdd6eeb738a00eeb9c4619"},
	}
	for _, tt := range digests {
		assert.Equal(t, tt.want, digest(embedOne(t, e, tt.text)), "golden digest of %q changed: the algorithm changed", tt.text)
	}
}

func TestEmbed_Deterministic(t *testing.T) {
	t.Parallel()

	e := newEmbedder(t, DefaultDim)
	texts := []string{"The quick brown fox", "東京タワーに行きました", "서울에서 만나요", "LH 401, Friday 7:30", "..."}
	want, err := e.Embed(t.Context(), texts)
	require.NoError(t, err)

	// Same texts in another order, one at a time, and concurrently.
	for i := len(texts) - 1; i >= 0; i-- {
		assert.Equal(t, want[i], embedOne(t, e, texts[i]))
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			got, err := e.Embed(context.Background(), texts)
			assert.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
	wg.Wait()
	// A fresh embedder of the same dimension agrees.
	assert.Equal(t, want[0], embedOne(t, newEmbedder(t, DefaultDim), texts[0]))
}

func TestEmbed_UnitVectors(t *testing.T) {
	t.Parallel()

	e := newEmbedder(t, DefaultDim)
	texts := []string{
		"a",
		"Hello, World!",
		"?!",
		"🙂🙂🙂",
		"---",
		"naïve café résumé",
		"Привет, мир",
		"नमस्ते दुनिया",
		"混合 text with 中文 and English",
		"\xff\xfe invalid utf-8 \xc3",
		"\xff\xfe",
		strings.Repeat("word ", 10000),
		strings.Repeat("x", 100000),
	}
	vs, err := e.Embed(t.Context(), texts)
	require.NoError(t, err)
	require.Len(t, vs, len(texts))
	for i, v := range vs {
		require.Len(t, v, DefaultDim, "text %d", i)
		requireUnit(t, v)
	}
}

func TestEmbed_CaseAndPunctuationInsensitive(t *testing.T) {
	t.Parallel()

	e := newEmbedder(t, DefaultDim)
	a := embedOne(t, e, "My Flight is on FRIDAY")
	b := embedOne(t, e, "my flight, is on friday!")
	assert.Equal(t, a, b)
	assert.Equal(t, embedOne(t, e, "ÉTÉ"), embedOne(t, e, "été"))
	// NFKC: combining accents, full-width forms, ligatures, half-width kana.
	assert.Equal(t, embedOne(t, e, "café"), embedOne(t, e, "cafe\u0301"))
	assert.Equal(t, embedOne(t, e, "LH401 flight"), embedOne(t, e, "ＬＨ４０１ ﬂight"))
	assert.Equal(t, embedOne(t, e, "コーヒー"), embedOne(t, e, "ｺｰﾋｰ"))
}

func TestEmbed_RelatedScoresHigher(t *testing.T) {
	t.Parallel()

	e := newEmbedder(t, DefaultDim)
	tests := []struct {
		name, anchor, related, unrelated string
	}{
		{"inflection", "flight", "flights", "banana"},
		{"shared words", "my flight is on friday", "flights on friday", "the cat sat on the mat"},
		{"memory recall", "user: my flight is LH 401 on Friday\nassistant: noted", "what is my flight number?", "please summarise this article"},
		{"code", "error: connection refused on port 5432", "connection refused", "the weather is nice"},
		{"chinese", "我的航班是星期五", "航班星期五起飞", "今天天气很好"},
		{"japanese", "東京タワーに行きました", "東京タワーはどこですか", "ラーメンが好きです"},
		{"korean", "서울에서 만나요", "서울에서 만나서 반가워요", "오늘 날씨가 좋네요"},
		{"mixed", "我的航班是LH401", "LH401航班", "cat food"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := embedOne(t, e, tt.anchor)
			rel := dot(a, embedOne(t, e, tt.related))
			unrel := dot(a, embedOne(t, e, tt.unrelated))
			assert.Greater(t, rel, unrel, "related text must score higher than unrelated")
			assert.Greater(t, rel, 0.3, "related text must pass the default min score")
			assert.Less(t, unrel, 0.3, "unrelated text must stay under the default min score")
		})
	}
	// Texts sharing only function words stay well apart.
	a := embedOne(t, e, "what is the capital of France?")
	assert.Less(t, dot(a, embedOne(t, e, "the weather is nice in the morning")), 0.25)
	a = embedOne(t, e, "how do I reset my password?")
	assert.Less(t, dot(a, embedOne(t, e, "user: how do I cook rice?")), 0.25)

	// Identical texts score 1.
	v := embedOne(t, e, "same text")
	assert.InDelta(t, 1, dot(v, embedOne(t, e, "same text")), 1e-6)
}

func TestEmbed_CJKUsesBigrams(t *testing.T) {
	t.Parallel()

	e := newEmbedder(t, DefaultDim)
	// The same characters in another order share unigrams but not bigrams.
	a := embedOne(t, e, "航班")
	b := embedOne(t, e, "班航")
	s := dot(a, b)
	assert.Greater(t, s, 0.0)
	assert.Less(t, s, 0.9)
	// Katakana with the prolonged sound mark stays one CJK run.
	assert.Greater(t, dot(embedOne(t, e, "コーヒー"), embedOne(t, e, "コーヒーを飲む")), 0.5)
}

func TestEmbed_Errors(t *testing.T) {
	t.Parallel()

	e := newEmbedder(t, DefaultDim)
	for _, texts := range [][]string{{""}, {" \t\n"}, {"ok", "\u3000"}, {"ok", "fine", ""}} {
		v, err := e.Embed(t.Context(), texts)
		require.ErrorIs(t, err, embed.ErrEmptyText, "texts %q", texts)
		assert.Nil(t, v)
		assert.Contains(t, err.Error(), fmt.Sprintf("text %d", len(texts)-1), "the error names the bad text")
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := e.Embed(ctx, []string{"hello"})
	require.ErrorIs(t, err, context.Canceled)
}

func TestEmbed_EmptyBatch(t *testing.T) {
	t.Parallel()

	v, err := newEmbedder(t, 8).Embed(t.Context(), nil)
	require.NoError(t, err)
	assert.Empty(t, v)
}

func TestEmbed_VectorsDoNotAlias(t *testing.T) {
	t.Parallel()

	e := newEmbedder(t, 8)
	vs, err := e.Embed(t.Context(), []string{"one", "two"})
	require.NoError(t, err)
	second := append([]float32(nil), vs[1]...)
	_ = append(vs[0], 42) // must reallocate, not overwrite vs[1]
	assert.Equal(t, second, vs[1])
}

func TestEmbed_LargeBatchSameAsOneByOne(t *testing.T) {
	t.Parallel()

	// A batch large enough to be embedded in parallel gives every text the
	// vector it gets alone, in order.
	e := newEmbedder(t, DefaultDim)
	texts := repeat(sentence, 2000)
	texts[7] = "用户：我的航班是星期五的LH401"
	texts[1999] = "?!"
	vs, err := e.Embed(t.Context(), texts)
	require.NoError(t, err)
	require.Len(t, vs, len(texts))
	for _, i := range []int{0, 7, 999, 1000, 1001, 1998, 1999} {
		assert.Equal(t, embedOne(t, e, texts[i]), vs[i], "text %d", i)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = e.Embed(ctx, texts)
	require.ErrorIs(t, err, context.Canceled)
}

// TestEmbedInto: the vectors written into a caller's buffer are Embed's,
// whatever the buffer held; a buffer of the wrong size and a blank text
// are errors.
func TestEmbedInto(t *testing.T) {
	t.Parallel()

	e := newEmbedder(t, 64)
	var _ embed.IntoEmbedder = e
	for _, n := range []int{1, 3, 2000} { // 2000: embedded in parallel
		texts := repeat(sentence, n)
		texts[0] = "Can you book a table for Friday?"
		want, err := e.Embed(t.Context(), texts)
		require.NoError(t, err)
		dst := make([]float32, n*64)
		for i := range dst {
			dst[i] = 7 // a reused buffer's old contents
		}
		require.NoError(t, e.EmbedInto(t.Context(), dst, texts))
		for i := range texts {
			assert.Equal(t, want[i], dst[i*64:(i+1)*64], "n %d, text %d", n, i)
		}
	}

	err := e.EmbedInto(t.Context(), make([]float32, 63), []string{"hello"})
	assert.ErrorIs(t, err, embed.ErrDimension)
	err = e.EmbedInto(t.Context(), make([]float32, 128), []string{"hello", " "})
	assert.ErrorIs(t, err, embed.ErrEmptyText)
	assert.ErrorContains(t, err, "text 1")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, e.EmbedInto(ctx, make([]float32, 64), []string{"hello"}), context.Canceled)
}

var sentence = "user: my flight is LH 401 on Friday, please remind me"

func BenchmarkEmbed(b *testing.B) {
	cases := []struct {
		name  string
		texts []string
	}{
		{"sentence", []string{sentence}},
		{"cjk", []string{"用户：我的航班是星期五的LH401，请提醒我"}},
		{"batch=100", repeat(sentence, 100)},
		{"batch=1000", repeat(sentence, 1000)},
		{"words=1000", []string{strings.Repeat("the quick brown fox jumps over the lazy dog ", 111)}},
	}
	e, err := New(DefaultDim)
	require.NoError(b, err)
	ctx := context.Background()
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Embed(ctx, c.texts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s #%d", s, i)
	}
	return out
}

// digest returns the SHA-256 of v's float32 bits, little-endian.
func digest(v []float32) string {
	h := sha256.New()
	for _, x := range v {
		_ = binary.Write(h, binary.LittleEndian, math.Float32bits(x))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func FuzzEmbed(f *testing.F) {
	for _, s := range []string{"", " ", "hello world", "我的航班是星期五", "?!", "\xff", "ｺｰﾋｰ", "cafe\u0301"} {
		f.Add(s)
	}
	e, err := New(64)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, text string) {
		v, err := e.Embed(context.Background(), []string{text})
		if isBlank(text) {
			require.ErrorIs(t, err, embed.ErrEmptyText)
			return
		}
		require.NoError(t, err)
		requireUnit(t, v[0])
		again, err := e.Embed(context.Background(), []string{text})
		require.NoError(t, err)
		require.Equal(t, v, again)
	})
}
