package chunk_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/chunk"
	"github.com/agentmem/agentmem/internal/errs"
)

// noMerge keeps every sentence on its own so that split points are visible.
var noMerge = &chunk.Options{MinRunes: 1}

func texts(cs []chunk.Chunk) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Text
	}
	return out
}

func TestSplit_Boundaries(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"english sentences", "The build failed. We rolled back! Why? Nobody knows; maybe the cache.",
			[]string{"The build failed.", "We rolled back!", "Why?", "Nobody knows;", "maybe the cache."}},
		{"chinese punctuation", "我们决定用PostgreSQL。原因是事务支持更好！你觉得呢？还有；问题",
			[]string{"我们决定用PostgreSQL。", "原因是事务支持更好！", "你觉得呢？", "还有；", "问题"}},
		{"ellipsis", "他想了想……然后走了。Wait... what happened…next",
			[]string{"他想了想……", "然后走了。", "Wait...", "what happened…", "next"}},
		{"line breaks", "first line\nsecond line\r\nthird line\u2028fourth",
			[]string{"first line", "second line", "third line", "fourth"}},
		{"blank lines and indentation", "  para one  \n\n\n   para two\t\n",
			[]string{"para one", "para two"}},
		{"decimal number", "Pi is 3.14 roughly. Next.", []string{"Pi is 3.14 roughly.", "Next."}},
		{"version", "Upgrade to v1.2.3 now. Then v2.0.1.", []string{"Upgrade to v1.2.3 now.", "Then v2.0.1."}},
		{"e.g. and i.e.", "Use a cache, e.g. Redis, i.e. in memory. Done.",
			[]string{"Use a cache, e.g. Redis, i.e. in memory.", "Done."}},
		{"titles", "Mr. Smith met Dr. Wu and Prof. Li. They talked.",
			[]string{"Mr. Smith met Dr. Wu and Prof. Li.", "They talked."}},
		{"initials", "She lives in the U.S. now and J. Smith too. Ok.",
			[]string{"She lives in the U.S. now and J. Smith too.", "Ok."}},
		{"url", "See https://example.com/a.b?x=1;y=2 for details. Then go.",
			[]string{"See https://example.com/a.b?x=1;y=2 for details.", "Then go."}},
		{"url at sentence end", "Read https://go.dev/doc. Then code.",
			[]string{"Read https://go.dev/doc.", "Then code."}},
		{"email", "Write to user@example.com today. Or call.",
			[]string{"Write to user@example.com today.", "Or call."}},
		{"file names", "Edit main.go and go.mod first. Then build.",
			[]string{"Edit main.go and go.mod first.", "Then build."}},
		{"closing quotes", `He said "stop." Then he left. 她说："好。"然后走了。`,
			[]string{`He said "stop."`, "Then he left.", `她说："好。"`, "然后走了。"}},
		{"stop run", "Really?! Yes!!! 真的？！是的。",
			[]string{"Really?!", "Yes!!!", "真的？！", "是的。"}},
		{"ascii stop before chinese", "完成了.然后呢?好的!", []string{"完成了.", "然后呢?", "好的!"}},
		{"code is not split", "if a!=b {x;y} return x?y:z", []string{"if a!=b {x;y} return x?y:z"}},
		{"numbered list", "Steps:\n1. Install it\n2. Run it", []string{"Steps:", "1. Install it", "2. Run it"}},
		{"japanese", "今日は雨です。明日は晴れ！", []string{"今日は雨です。", "明日は晴れ！"}},
		{"korean", "안녕하세요. 반갑습니다!", []string{"안녕하세요.", "반갑습니다!"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := chunk.Split(tt.in, noMerge)
			assert.Equal(t, tt.want, texts(got))
			checkInvariants(t, tt.in, got, noMerge)
		})
	}
}

func TestSplit_Empty(t *testing.T) {
	t.Parallel()

	for _, in := range []string{"", " ", "\n\n", " \t\r\n\u3000\u00a0"} {
		assert.Empty(t, chunk.Split(in, nil), "%q", in)
	}
}

func TestSplit_Merge(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"short reply joins previous", "We should migrate the database next week. OK. Then we test it all.",
			[]string{"We should migrate the database next week. OK.", "Then we test it all."}},
		{"short heading joins next", "Notes\nThe meeting moved to Friday afternoon.",
			[]string{"Notes\nThe meeting moved to Friday afternoon."}},
		{"chinese short replies", "我们决定用PostgreSQL。原因是事务支持更好！你觉得呢？好的。\n下一步：部署；测试。",
			[]string{"我们决定用PostgreSQL。", "原因是事务支持更好！你觉得呢？好的。", "下一步：部署；测试。"}},
		{"all short", "Hi. Yo. Ok.", []string{"Hi. Yo. Ok."}},
		{"single piece", "Yes.", []string{"Yes."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := chunk.Split(tt.in, nil)
			assert.Equal(t, tt.want, texts(got))
			checkInvariants(t, tt.in, got, nil)
		})
	}
}

func TestSplit_MergeRespectsMax(t *testing.T) {
	t.Parallel()

	opts := &chunk.Options{MinRunes: 10, MaxRunes: 20}
	got := chunk.Split("aaaaaaaaaaaaaaaaa. Ok. bbbbbbbbbbbbbbbbb.", opts)
	assert.Equal(t, []string{"aaaaaaaaaaaaaaaaa.", "Ok.", "bbbbbbbbbbbbbbbbb."}, texts(got))
	checkInvariants(t, "aaaaaaaaaaaaaaaaa. Ok. bbbbbbbbbbbbbbbbb.", got, opts)
}

func TestSplit_Cut(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name string
		opts *chunk.Options
		in   string
		want []string
	}{
		{"at comma", &chunk.Options{MinRunes: 1, MaxRunes: 20},
			"alpha beta gamma, delta epsilon zeta",
			[]string{"alpha beta gamma,", "delta epsilon zeta"}},
		{"at space", &chunk.Options{MinRunes: 1, MaxRunes: 12},
			"alpha beta gamma delta",
			[]string{"alpha beta", "gamma delta"}},
		{"chinese comma", &chunk.Options{MinRunes: 1, MaxRunes: 8},
			"我们今天开会，讨论了数据库",
			[]string{"我们今天开会，", "讨论了数据库"}},
		{"hard cut on rune boundary", &chunk.Options{MinRunes: 1, MaxRunes: 4},
			"数据库迁移计划完成",
			[]string{"数据库迁", "移计划完", "成"}},
		{"long word", &chunk.Options{MinRunes: 1, MaxRunes: 5},
			"abcdefghijkl",
			[]string{"abcde", "fghij", "kl"}},
		{"combining mark stays with base", &chunk.Options{MinRunes: 1, MaxRunes: 3},
			"abe\u0301cd",
			[]string{"ab", "e\u0301c", "d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := chunk.Split(tt.in, tt.opts)
			assert.Equal(t, tt.want, texts(got))
			checkInvariants(t, tt.in, got, tt.opts)
		})
	}
}

func TestSplit_OptionsClamp(t *testing.T) {
	t.Parallel()

	// MaxRunes below 2 is raised to 2; MinRunes above MaxRunes is lowered.
	got := chunk.Split("abcde", &chunk.Options{MinRunes: 50, MaxRunes: 1})
	assert.Equal(t, []string{"ab", "cd", "e"}, texts(got))
	got = chunk.Split("abc. def.", &chunk.Options{MinRunes: -3, MaxRunes: -1})
	assert.Equal(t, []string{"abc. def."}, texts(got), "negative sizes mean the defaults")
}

func TestSplit_InvalidUTF8(t *testing.T) {
	t.Parallel()

	in := "bad \xff\xfe bytes. next \xc3"
	got := chunk.Split(in, noMerge)
	assert.Equal(t, []string{"bad \xff\xfe bytes.", "next \xc3"}, texts(got))
	checkInvariants(t, in, got, noMerge)
}

func TestSplit_Large(t *testing.T) {
	t.Parallel()

	in := strings.Repeat("这是一个很长的句子，没有句号但是有逗号", 2000) + strings.Repeat("word ", 50_000)
	got := chunk.Split(in, nil)
	require.NotEmpty(t, got)
	checkInvariants(t, in, got, nil)
}

// checkInvariants asserts the package contract for Split(in, opts) == got.
func checkInvariants(t *testing.T, in string, got []chunk.Chunk, opts *chunk.Options) {
	t.Helper()
	maxRunes := chunk.DefaultMaxRunes
	if opts != nil && opts.MaxRunes > 0 {
		maxRunes = max(opts.MaxRunes, 2)
	}
	prevEnd := 0
	var covered strings.Builder
	for i, c := range got {
		require.LessOrEqual(t, prevEnd, c.Start, "chunk %d starts before the previous one ends", i)
		require.Less(t, c.Start, c.End, "chunk %d is empty", i)
		require.LessOrEqual(t, c.End, len(in))
		require.Equal(t, in[c.Start:c.End], c.Text, "chunk %d: Text != parent[Start:End]", i)
		require.Equal(t, strings.TrimFunc(c.Text, unicode.IsSpace), c.Text, "chunk %d is not trimmed", i)
		require.LessOrEqual(t, utf8.RuneCountInString(c.Text), maxRunes, "chunk %d is longer than MaxRunes", i)
		if utf8.ValidString(in) {
			require.True(t, utf8.ValidString(c.Text), "chunk %d is not valid UTF-8", i)
		}
		covered.WriteString(in[prevEnd:c.Start])
		prevEnd = c.End
	}
	covered.WriteString(in[prevEnd:])
	// Everything between chunks is white space: chunks cover all content.
	for _, r := range covered.String() {
		if r != utf8.RuneError {
			require.True(t, unicode.IsSpace(r), "content %q left outside every chunk", r)
		}
	}
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{
		"", "Hello. World!", "我们决定用PostgreSQL。原因是事务支持更好！", "v1.2.3. e.g. x", "a\r\nb\n\nc",
		"https://x.com/a?b;c. U.S. Mr. 1. item", "абв где. ёжз", "e\u0301\u200d\U0001F600",
	} {
		f.Add(s, 0, 0)
		f.Add(s, 1, 5)
	}
	f.Fuzz(func(t *testing.T, in string, minRunes, maxRunes int) {
		opts := &chunk.Options{MinRunes: minRunes % 64, MaxRunes: maxRunes % 64}
		got := chunk.Split(in, opts)
		checkInvariants(t, in, got, opts)
	})
}

func ExampleSplit() {
	parent := "We chose PostgreSQL for the orders service. It has better transactions! OK.\n" +
		"下一步：部署到测试环境；然后压测。"
	for _, c := range chunk.Split(parent, nil) {
		fmt.Printf("%d-%d %s\n", c.Start, c.End, c.Text)
	}
	// Output:
	// 0-43 We chose PostgreSQL for the orders service.
	// 44-75 It has better transactions! OK.
	// 76-127 下一步：部署到测试环境；然后压测。
}

func ExampleSplitContext() {
	ctx := context.Background()
	chunks, err := chunk.SplitContext(ctx, "Deploy on Friday. 我们周五部署到生产环境。", nil)
	fmt.Println(len(chunks), err)

	_, err = chunk.SplitContext(ctx, strings.Repeat("x", chunk.DefaultMaxBytes+1), nil)
	fmt.Println(errors.Is(err, chunk.ErrTooLarge))
	// Output:
	// 2 <nil>
	// true
}

// countingCtx is a context whose Err reports nil for the first ok calls
// and context.Canceled after, counting the calls.
type countingCtx struct {
	context.Context
	ok, calls int
}

func (c *countingCtx) Err() error {
	c.calls++
	if c.calls > c.ok {
		return context.Canceled
	}
	return nil
}

func TestSplitContext_SameAsSplit(t *testing.T) {
	t.Parallel()

	text := bigText("prose", 32<<10)
	for _, opts := range []*chunk.Options{nil, noMerge, {MinRunes: 30, MaxRunes: 50}} {
		got, err := chunk.SplitContext(context.Background(), text, opts)
		require.NoError(t, err)
		require.NotEmpty(t, got)
		assert.Equal(t, chunk.Split(text, opts), got)
	}
}

func TestSplitContext_TooLarge(t *testing.T) {
	t.Parallel()

	// 50 MiB: refused before any work (the context is never consulted).
	huge := strings.Repeat("fifty megabytes of text. ", (50<<20)/25)
	ctx := &countingCtx{Context: context.Background(), ok: 1 << 30}
	got, err := chunk.SplitContext(ctx, huge, nil)
	require.ErrorIs(t, err, chunk.ErrTooLarge)
	require.ErrorIs(t, err, errs.TooLarge)
	assert.Contains(t, err.Error(), fmt.Sprint(len(huge)))
	assert.Nil(t, got)
	assert.Zero(t, ctx.calls, "the size is checked before any work")

	// The limit is configurable: exactly MaxBytes passes, one more byte fails.
	text := "abc. def. ghi."
	_, err = chunk.SplitContext(context.Background(), text, &chunk.Options{MaxBytes: len(text)})
	require.NoError(t, err)
	_, err = chunk.SplitContext(context.Background(), text, &chunk.Options{MaxBytes: len(text) - 1})
	require.ErrorIs(t, err, chunk.ErrTooLarge)
	// Negative: no limit.
	over := strings.Repeat("x", chunk.DefaultMaxBytes+1)
	got, err = chunk.SplitContext(context.Background(), over, &chunk.Options{MaxBytes: -1})
	require.NoError(t, err)
	assert.Len(t, got, (len(over)+chunk.DefaultMaxRunes-1)/chunk.DefaultMaxRunes, "one word cut every MaxRunes")
	_, err = chunk.SplitContext(context.Background(), over, nil)
	require.ErrorIs(t, err, chunk.ErrTooLarge, "the default limit is DefaultMaxBytes")
}

func TestSplitContext_Cancel(t *testing.T) {
	t.Parallel()

	text := bigText("runon", chunk.DefaultMaxBytes)

	// Already cancelled: the context's error, no chunks, no work.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, err := chunk.SplitContext(ctx, text, nil)
	require.ErrorIs(t, err, context.Canceled)
	assert.Nil(t, got)

	// Cancelled while splitting: the splitter stops at its next check.
	// Splitting 1 MiB checks the context every 64 KiB of work; a context
	// that turns cancelled at its third check must see exactly one more.
	cc := &countingCtx{Context: context.Background(), ok: 3}
	got, err = chunk.SplitContext(cc, text, nil)
	require.ErrorIs(t, err, context.Canceled)
	assert.Nil(t, got)
	assert.Equal(t, 4, cc.calls, "Err calls: one before the work, two checks passed, one that stopped")

	// Never cancelled: the same text splits, with a check every 64 KiB of work.
	cc = &countingCtx{Context: context.Background(), ok: 1 << 30}
	got, err = chunk.SplitContext(cc, text, nil)
	require.NoError(t, err)
	assert.Equal(t, chunk.Split(text, nil), got)
	assert.Greater(t, cc.calls, len(text)>>16, "the context is checked at least once per 64 KiB of text")
}

// TestSplit_ConcatenatedParts splits a large text made of parts separated by
// blank lines and checks it gives the parts' chunks, shifted: no state
// leaks across a line break when merging is off.
func TestSplit_ConcatenatedParts(t *testing.T) {
	t.Parallel()

	parts := []string{bigText("prose", 100_000), bigText("runon", 300_000), bigText("prose", 7)}
	var whole strings.Builder
	var want []chunk.Chunk
	for _, p := range parts {
		off := whole.Len()
		for _, c := range chunk.Split(p, noMerge) {
			want = append(want, chunk.Chunk{Text: c.Text, Start: c.Start + off, End: c.End + off})
		}
		whole.WriteString(p)
		whole.WriteString("\n\n")
	}
	got := chunk.Split(whole.String(), noMerge)
	assert.Equal(t, want, got)
}

// bigText repeats a unit of prose (English and Chinese sentences, a line
// break after each pair), of one-line prose (the same without line breaks:
// a single line) or of run-on text (a log line without sentence stops) to
// size bytes.
func bigText(kind string, size int) string {
	prose := "The deploy of v1.2.3 failed with ERR_CONN_RESET at 3.14 pm. We rolled back, e.g. to v1.2.2! " +
		"我们决定把订单服务迁移到PostgreSQL。原因是事务支持更好，运维也更熟悉！"
	unit := map[string]string{
		"prose": prose + "\n",
		"line":  prose + " ",
		"runon": "level=info msg=request path=/api/v1/orders status=200 dur=3ms user=alice ",
	}[kind]
	s := strings.Repeat(unit, size/len(unit)+1)[:size]
	return strings.ToValidUTF8(s, "") // the cut may split the last rune
}

func BenchmarkSplit(b *testing.B) {
	en := strings.Repeat("The deploy of v1.2.3 failed with ERR_CONN_RESET at 3.14 pm. We rolled back, e.g. to v1.2.2! ", 4)
	zh := strings.Repeat("我们决定把订单服务迁移到PostgreSQL。原因是事务支持更好，运维也更熟悉！下一步：压测；上线。", 4)
	for _, bc := range []struct{ name, text string }{{"en", en}, {"zh", zh}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.text)))
			for b.Loop() {
				chunk.Split(bc.text, nil)
			}
		})
	}
}

// BenchmarkSplitLarge: 1, 2, 4 and 8 MiB of one-line prose (issue 10's
// case: a single line of sentences), of prose with line breaks and of
// run-on text (no sentence stop: every child is cut by size). Time and
// allocated bytes per op should double with the size. make bench runs it.
func BenchmarkSplitLarge(b *testing.B) {
	for _, kind := range []string{"line", "prose", "runon"} {
		for _, mib := range []int{1, 2, 4, 8} {
			text := bigText(kind, mib<<20)
			opts := &chunk.Options{MaxBytes: -1}
			b.Run(fmt.Sprintf("%s/%dMiB", kind, mib), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(text)))
				for b.Loop() {
					if _, err := chunk.SplitContext(context.Background(), text, opts); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
