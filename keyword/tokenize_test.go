package keyword_test

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/keyword"
	_ "github.com/agentmem/agentmem/keyword/gse" // Segmenter mode
)

func newTok(t testing.TB, opts ...keyword.TokenizerOption) keyword.Tokenizer {
	t.Helper()
	tok, err := keyword.NewTokenizer(opts...)
	require.NoError(t, err)
	return tok
}

// segmenterTok returns a Segmenter-mode tokenizer, skipping the test under
// -short: loading the gse dictionary takes seconds (tens under -race).
func segmenterTok(t testing.TB) keyword.Tokenizer {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping the gse dictionary load")
	}
	tok, err := keyword.NewTokenizer(keyword.WithCJK(keyword.Segmenter))
	require.NoError(t, err, "this test binary imports keyword/gse")
	return tok
}

func TestTokens(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"case folding and stop words", "The Quick brown FOX is in the garden",
			[]string{"quick", "brown", "fox", "garden"}},
		{"error constant", "got ERR_CONN_RESET", []string{"got", "err_conn_reset", "err", "conn", "reset"}},
		{"letters and digits", "E1234", []string{"e1234", "1234"}},
		{"flight code", "LH401", []string{"lh401", "lh", "401"}},
		{"flight code with space", "LH 401", []string{"lh", "401", "lh401"}},
		{"flight code with hyphen", "LH-401", []string{"lh-401", "lh", "401", "lh401"}},
		{"lower-case word does not join a number", "call 911 now", []string{"call", "911", "now"}},
		{"leading and trailing connectors", "@alice 'quoted' students' #42", []string{"alice", "quoted", "student", "42"}},
		{"contraction", "I'm here", []string{"i'm", "here"}},
		{"possessive", "Caroline's sister’s DOG'S bowl", []string{"caroline", "sister", "dog", "bowl"}},
		{"plurals", "Meetings queries boxes shoes glass virus toes bus KEYS", []string{"meeting", "query", "boxe", "shoe", "glass", "virus", "toe", "bus", "key"}},
		{"an acronym's plural is the acronym", "KPIs PDFs LLMs APIs KPI", []string{"kpi", "pdf", "llm", "api", "kpi"}},
		{"acronym plural rule leaves other words alone", "Gus GPUS iOS", []string{"gus", "gpus", "ios", "os"}},
		{"diacritics taken off Latin letters", "Zürich ZÜRICH José Straße Łódź Ørsted naïve Привет", []string{"zurich", "zurich", "jose", "strasse", "lodz", "orsted", "naive", "привет"}},
		{"an acronym with dots is the acronym too", "U.S. U.K. e.g. 9 a.m.", []string{"u.s", "us", "u.k", "uk", "e.g", "eg", "9", "a.m"}},
		{"a time of day is not the word am", "10am 3PM 10:30am 4pm-6pm PM2.5", []string{"10am", "10", "3pm", "3", "10:30am", "10", "30am", "30", "4pm-6pm", "4pm", "4", "6pm", "6", "4pm6pm", "pm2.5", "pm2", "pm", "2", "5", "2.5"}},
		{"plural rule leaves codes alone", "ERRORS_X A1S", []string{"errors_x", "error", "a1s", "1"}},
		{"version", "v1.2.3", []string{"v1.2.3", "v1", "1", "2", "3", "1.2.3"}},
		{"decimal", "3.14", []string{"3.14", "3", "14"}},
		{"phone with hyphens", "138-0013-8000",
			[]string{"138-0013-8000", "138", "0013", "8000", "13800138000"}},
		{"phone plain", "13800138000", []string{"13800138000"}},
		{"thousands separators", "1,000,000 users, 3 days", []string{"1,000,000", "1", "000", "000", "1000000", "user", "3", "day"}},
		{"date", "2023-05-08", []string{"2023-05-08", "2023", "05", "08", "20230508"}},
		{"phone with spaces", "138 0013 8000",
			[]string{"138", "0013", "1380013", "8000", "13800138000", "00138000"}},
		{"email", "user@example.com",
			[]string{"user@example.com", "example.com", "user", "example", "com"}},
		{"url", "https://go.dev/doc",
			[]string{"https://go.dev/doc", "go.dev", "http", "go", "dev", "doc"}},
		{"file name", "main.go", []string{"main.go", "main", "go"}},
		{"camel case", "getUserName", []string{"getusername", "get", "user", "name"}},
		{"sentence end is not a connector", "see main.go. Then", []string{"see", "main.go", "main", "go"}},
		{"full width forms", "ＥＲＲ１２３４，ＯＫ", []string{"err1234", "err", "1234", "ok"}},
		{"case folded, diacritics taken off", "Café ÉCOLE", []string{"cafe", "ecole"}},
		{"cyrillic", "Привет мир", []string{"привет", "мир"}},
		{"japanese bigrams and kanji", "今日は雨です", []string{"今", "日", "今日", "日は", "雨", "は雨", "雨で", "です"}},
		{"katakana", "コーヒー", []string{"コー", "ーヒ", "ヒー"}},
		{"korean bigrams", "서울에서 만나요", []string{"서울", "울에", "에서", "만나", "나요"}},
		{"lone hangul syllable", "나 는", []string{"나", "는"}},
		{"hangul next to han", "韓國한국", []string{"韓", "國", "韓國", "한국"}},
		{"thai", "สวัสดี", []string{"สว", "วั", "ัส", "สด", "ดี"}},
		{"only punctuation", "!!! ... ，。？——", nil},
		{"empty", "", nil},
		{"invalid utf-8", "ok\xffgo", []string{"ok", "go"}},
	}
	// These cases are about cutting: plural-only stemming keeps the
	// expected terms readable (TestTokens_Snowball covers the default).
	tok := newTok(t, keyword.WithCJK(keyword.Bigrams), keyword.WithStemming(keyword.PluralsOnly))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tok.Tokens(tt.in))
		})
	}
}

func TestTokens_Snowball(t *testing.T) {
	t.Parallel()

	tok := newTok(t)
	assert.Equal(t, []string{"meet", "meet", "class", "class", "run", "run", "lh401", "lh", "401", "e1234", "1234"},
		tok.Tokens("meetings meeting classes class running runs LH401 E1234"))
	assert.Equal(t, tok.Tokens("She adopted the cats"), tok.Tokens("she adopts a cat"), "word forms meet")
	assert.Equal(t, []string{"buy", "bike", "child"}, tok.Tokens("bought bike children"), "irregular forms meet")
	assert.Equal(t, tok.Tokens("what did I buy? who drives"), tok.Tokens("what did I bought? who drove"))
	assert.Equal(t, []string{"fli", "fli", "fli"}, tok.Tokens("flew flown flies"), "a base word is stemmed as its forms are")
	assert.Equal(t, []string{"went", "made", "said", "left"}, tok.Tokens("went made said left"),
		"light verbs and forms with another common meaning stay as written")
	assert.Equal(t, []string{"bought"}, newTok(t, keyword.WithStemming(keyword.PluralsOnly)).Tokens("bought"), "plurals only")
	assert.Equal(t, tok.Tokens("my favorite color, organized at the center"), tok.Tokens("My favourite colour, organised at the centre"),
		"British and American spellings meet")
	assert.Contains(t, tok.(interface{ Name() string }).Name(), "stem=snowball")
	plural := newTok(t, keyword.WithStemming(keyword.PluralsOnly))
	assert.NotEqual(t, tok.(interface{ Name() string }).Name(), plural.(interface{ Name() string }).Name(), "snapshots record the stemming")
}

func TestTokens_Chinese(t *testing.T) {
	t.Parallel()

	const in = "我们决定把订单服务迁移到PostgreSQL数据库。"
	t.Run("bigrams", func(t *testing.T) {
		got := newTok(t, keyword.WithCJK(keyword.Bigrams)).Tokens(in)
		assert.Equal(t, []string{"我", "们", "我们", "决", "们决", "定", "决定", "把", "定把", "订", "把订", "单", "订单",
			"服", "单服", "务", "服务", "迁", "务迁", "移", "迁移", "到", "移到",
			"postgresql", "postgr", "sql", "数", "据", "数据", "库", "据库"}, got)
		assert.Equal(t, []string{"库"}, newTok(t).Tokens("库"), "a lone character is kept")
		assert.Equal(t, []string{"猫", "的猫", "吃", "猫吃", "饭", "吃饭", "饭了"}, newTok(t).Tokens("的猫吃饭了"),
			"stop words are not kept alone, only in bigrams")
	})
	t.Run("segmenter", func(t *testing.T) {
		got := segmenterTok(t).Tokens(in)
		for _, w := range []string{"我们", "决定", "订单", "服务", "迁移", "数据库", "数据", "postgresql"} {
			assert.Contains(t, got, w)
		}
		assert.NotContains(t, got, "们决", "the segmenter does not emit bigrams across words")
		assert.Equal(t, []string{"我", "猫", "吃饭"}, segmenterTok(t).Tokens("我的猫吃饭了吗"), "particles are stop words")
	})
}

func TestTokens_Match(t *testing.T) {
	t.Parallel()

	// Each pair must share a term, in both CJK modes.
	pairs := [][2]string{
		{"LH401", "LH 401"},
		{"138-0013-8000", "13800138000"},
		{"138 0013 8000", "13800138000"},
		{"+86 138 0013 8000", "13800138000"},
		{"user@example.com", "example.com"},
		{"ERR_CONN_RESET", "conn reset"},
		{"v1.2.3", "1.2.3"},
		{"ＬＨ４０１", "lh401"},
		{"订单服务", "订单"},
	}
	for _, mode := range []keyword.CJKMode{keyword.Bigrams, keyword.Segmenter} {
		var tok keyword.Tokenizer
		if mode == keyword.Segmenter {
			tok = segmenterTok(t)
		} else {
			tok = newTok(t)
		}
		for _, p := range pairs {
			a, b := tok.Tokens(p[0]), tok.Tokens(p[1])
			assert.True(t, slices.ContainsFunc(a, func(s string) bool { return slices.Contains(b, s) }),
				"%s: %q %v and %q %v share no term", mode, p[0], a, p[1], b)
		}
		// The whole of one token is what makes the match exact.
		assert.Contains(t, tok.Tokens("call 138-0013-8000"), "13800138000")
		assert.Contains(t, tok.Tokens("LH 401"), "lh401")
	}
}

func TestWithStopWords(t *testing.T) {
	t.Parallel()

	tok := newTok(t, keyword.WithStopWords())
	assert.Equal(t, []string{"the", "cat"}, tok.Tokens("The cat"))
	tok = newTok(t, keyword.WithStopWords("Cat"))
	assert.Equal(t, []string{"the"}, tok.Tokens("The cat"))
	assert.Equal(t, []string{"to-do", "do"}, newTok(t).Tokens("to-do"), "compounds are kept whole")
}

func TestNewTokenizer_BadMode(t *testing.T) {
	t.Parallel()

	_, err := keyword.NewTokenizer(keyword.WithCJK(keyword.CJKMode(7)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unknown CJK mode")
}

// upperTokens is a Tokenizer that is not the package's: TokensEach calls
// its Tokens for each text.
type upperTokens struct{}

func (upperTokens) Tokens(text string) []string { return strings.Fields(strings.ToUpper(text)) }

func TestTokensEach(t *testing.T) {
	t.Parallel()
	tok := newTok(t)
	// Short texts (below the length that takes a word memo alone) and
	// long ones, plain words, codes, possessives, CJK, and an empty one.
	texts := []string{
		"Caroline's plan", "LH 401 leaves at 3:14 pm; call 138-0013-8000.", "",
		strings.Repeat("running schedules and the knee’s recovery ", 12), "我们决定用数据库", "getUserName v1.2.3 ERR_CONN_RESET",
		"The answers aren't obvious, but Maria’S notes are.",
	}
	for _, batch := range [][]string{texts, texts[:2], texts[1:2], nil} {
		got := keyword.TokensEach(tok, batch)
		require.Len(t, got, len(batch))
		for i, text := range batch {
			assert.Equal(t, tok.Tokens(text), got[i], "%q", text)
		}
	}
	assert.Equal(t, [][]string{{"A", "B"}, {}}, keyword.TokensEach(upperTokens{}, []string{"a b", ""}))
}

func TestTokens_Concurrent(t *testing.T) {
	t.Parallel()

	tok := segmenterTok(t) // gse must be safe to share
	want := tok.Tokens("并发分词测试 concurrent ERR_CONN_RESET")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				assert.Equal(t, want, tok.Tokens("并发分词测试 concurrent ERR_CONN_RESET"))
			}
		})
	}
	wg.Wait()
}

func FuzzTokens(f *testing.F) {
	for _, s := range []string{"ERR_CONN_RESET v1.2.3", "LH 401 138-0013-8000", "我们决定用数据库", "今日は", "서울", "a@b.c/d:e", "\xff\xfe", "Zürich U.S. Łódź ÆSIR ǅemal Ệ KPIs"} {
		f.Add(s)
	}
	tok, err := keyword.NewTokenizer(keyword.WithCJK(keyword.Bigrams))
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, in string) {
		for _, tk := range tok.Tokens(in) {
			require.NotEmpty(t, tk)
			require.LessOrEqual(t, len(tk), keyword.MaxTermBytes)
			require.True(t, utf8.ValidString(tk), "%q", tk)
		}
	})
}

func TestSegmenterModeName(t *testing.T) {
	t.Parallel()

	// Snapshots record the tokenizer; the two modes must not be confused.
	ix := keyword.NewIndex(newTok(t))
	ix.Add(1, "数据库")
	var snap bytes.Buffer
	require.NoError(t, ix.Export(&snap))
	err := keyword.NewIndex(segmenterTok(t)).Import(&snap)
	require.ErrorIs(t, err, keyword.ErrTokenizer)
}

func TestIsCJKBigram(t *testing.T) {
	for term, want := range map[string]bool{"陈静": true, "静的": true, "陈": false, "数据库": false, "ab": false, "陈a": false, "": false} {
		assert.Equal(t, want, keyword.IsCJKBigram(term), term)
	}
}
