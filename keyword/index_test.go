package keyword_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/keyword"
)

// plainIndex has no stop words and bigram CJK, so scores are easy to check.
func plainIndex(t testing.TB, opts ...keyword.IndexOption) *keyword.Index {
	t.Helper()
	return keyword.NewIndex(newTok(t, keyword.WithStopWords(), keyword.WithCJK(keyword.Bigrams)), opts...)
}

// addDocs adds texts to ix as documents 1, 2, … and returns ix.
func addDocs(ix *keyword.Index, texts ...string) *keyword.Index {
	for i, text := range texts {
		ix.Add(int64(i+1), text)
	}
	return ix
}

func TestIndex_BM25(t *testing.T) {
	t.Parallel()

	ix := addDocs(plainIndex(t), "apple banana", "apple apple cherry", "cherry date")

	// N = 3, avgdl = 7/3, k1 = 1.2, b = 0.75, idf = ln(1 + (N-df+0.5)/(df+0.5)).
	// apple: df 2; doc 1 tf 1 len 2 → 0.49917627; doc 2 tf 2 len 3 → 0.59818644.
	// cherry: df 2; doc 2 tf 1 len 3 → 0.42081720; doc 3 tf 1 len 2 → 0.49917627.
	got := ix.Search("apple", 10, nil)
	require.Len(t, got, 2)
	assert.Equal(t, int64(2), got[0].ID)
	assert.InDelta(t, 0.5981864372218454, got[0].Score, 1e-12)
	assert.Equal(t, int64(1), got[1].ID)
	assert.InDelta(t, 0.4991762683023676, got[1].Score, 1e-12)

	got = ix.Search("Apple, CHERRY!", 10, nil)
	require.Len(t, got, 3)
	assert.Equal(t, []int64{2, 1, 3}, ids(got), "ties are broken by id")
	assert.InDelta(t, 1.0190036401511668, got[0].Score, 1e-12)
	assert.Equal(t, got[1].Score, got[2].Score)

	assert.Equal(t, ids(got), ids(ix.Search("apple cherry apple", 10, nil)), "a repeated query term counts once")
	assert.Equal(t, []int64{2}, ids(ix.Search("apple cherry", 1, nil)))
	assert.Equal(t, []int64{1, 3}, ids(ix.Search("apple cherry", 10, func(id int64) bool { return id != 2 })))
	assert.Empty(t, ix.Search("kiwi", 10, nil))
	assert.Nil(t, ix.Search("?!…", 10, nil), "a query without terms finds nothing")
	assert.Nil(t, ix.Search("apple", 0, nil))
	assert.Nil(t, ix.Search("apple", -1, nil))
}

func TestIndex_CodeCountsOnce(t *testing.T) {
	t.Parallel()

	ix := addDocs(plainIndex(t), "13800138000", "138-0013-9999", "apple")
	// Query groups: {whole 138-0013-8000, 13800138000; parts 138, 0013, 8000}.
	// Doc 1 matches a whole form: its score is that term's BM25 alone.
	// Doc 2 matches two of three parts: PartWeight × (s(138) + s(0013)) / 3.
	got := ix.Search("138-0013-8000", 10, nil)
	require.Equal(t, []int64{1, 2}, ids(got))
	whole := ix.Search("13800138000", 10, nil)
	require.Len(t, whole, 1)
	assert.InDelta(t, whole[0].Score, got[0].Score, 1e-12)
	p138 := ix.Search("138", 10, nil)[0].Score
	p0013 := ix.Search("0013", 10, nil)[0].Score
	assert.InDelta(t, keyword.PartWeight*(p138+p0013)/3, got[1].Score, 1e-12)
}

func TestIndex_Params(t *testing.T) {
	t.Parallel()

	ix := addDocs(plainIndex(t, keyword.WithK1(0), keyword.WithB(0)), "apple banana", "apple apple cherry", "cherry date")
	got := ix.Search("apple", 10, nil)
	require.Len(t, got, 2)
	// k1 = 0: the score is idf alone, whatever tf and length.
	assert.Equal(t, got[0].Score, got[1].Score)
	assert.Equal(t, []int64{1, 2}, ids(got))
}

func TestIndex_BadParamsMeanDefaults(t *testing.T) {
	t.Parallel()

	want := plainIndex(t)
	got := plainIndex(t, keyword.WithK1(-1), keyword.WithK1(math.NaN()), keyword.WithK1(math.Inf(1)),
		keyword.WithB(1.5), keyword.WithB(-0.1), keyword.WithB(math.NaN()))
	for _, ix := range []*keyword.Index{want, got} {
		ix.Add(1, "apple banana")
		ix.Add(2, "apple apple cherry")
	}
	assert.Equal(t, want.Search("apple", 5, nil), got.Search("apple", 5, nil))
}

func TestIndex_ReplaceAndDeleteKeepStats(t *testing.T) {
	t.Parallel()

	ix := addDocs(plainIndex(t), "red green", "red blue blue", "green")
	assert.Equal(t, keyword.Stats{Docs: 3, Terms: 3, AvgLength: 2}, ix.Stats())
	assert.Equal(t, 2, ix.DocFreq("red"))

	ix.Add(2, "yellow") // replace
	assert.Equal(t, 3, ix.Len())
	assert.Equal(t, keyword.Stats{Docs: 3, Terms: 3, AvgLength: 4.0 / 3}, ix.Stats())
	assert.Equal(t, 1, ix.DocFreq("red"))
	assert.Equal(t, 0, ix.DocFreq("blue"))
	assert.Empty(t, ix.Search("blue", 10, nil))
	assert.Equal(t, []int64{2}, ids(ix.Search("yellow", 10, nil)))

	assert.True(t, ix.Delete(1))
	assert.False(t, ix.Delete(1))
	assert.False(t, ix.Delete(99))
	assert.Equal(t, keyword.Stats{Docs: 2, Terms: 2, AvgLength: 1}, ix.Stats())
	assert.Equal(t, 0, ix.DocFreq("red"))
	assert.Equal(t, 1, ix.DocFreq("green"))
	assert.Equal(t, []int64{3}, ids(ix.Search("green red", 10, nil)))

	ix.Add(4, "!!!") // no terms: stored, never found
	assert.Equal(t, 3, ix.Len())
	assert.Equal(t, keyword.Stats{Docs: 3, Terms: 2, AvgLength: 2.0 / 3}, ix.Stats())
}

// TestIndex_MatchesRebuild checks, after random adds, replaces and deletes,
// that scores equal those of an index built from the surviving texts alone.
func TestIndex_MatchesRebuild(t *testing.T) {
	t.Parallel()

	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "数据", "库"}
	text := func() string {
		var b bytes.Buffer
		for range 1 + rng.IntN(8) {
			b.WriteString(words[rng.IntN(len(words))] + " ")
		}
		return b.String()
	}
	ix := plainIndex(t)
	live := map[int64]string{}
	for range 2000 {
		id := int64(rng.IntN(100))
		if rng.IntN(4) == 0 {
			_, had := live[id]
			assert.Equal(t, had, ix.Delete(id))
			delete(live, id)
			continue
		}
		s := text()
		ix.Add(id, s)
		live[id] = s
	}
	ref := plainIndex(t)
	for id, s := range live {
		ref.Add(id, s)
	}
	require.Equal(t, ref.Len(), ix.Len())
	require.Equal(t, ref.Stats(), ix.Stats())
	for _, q := range []string{"alpha", "beta gamma", "数据库 eta", "theta zeta eps delta"} {
		want, got := ref.Search(q, 1000, nil), ix.Search(q, 1000, nil)
		require.Equal(t, ids(want), ids(got), q)
		for i := range want {
			assert.InDelta(t, want[i].Score, got[i].Score, 1e-9)
		}
	}
}

func TestIndex_TopKMatchesFullSort(t *testing.T) {
	t.Parallel()

	ix := plainIndex(t)
	for i := range 500 {
		ix.Add(int64(i), fmt.Sprintf("common w%d w%d", i%7, i%13))
	}
	all := ix.Search("common w3 w5", 1000, nil)
	for _, k := range []int{1, 5, 10, 100} {
		assert.Equal(t, all[:k], ix.Search("common w3 w5", k, nil), "k=%d", k)
	}
}

func TestIndex_Concurrent(t *testing.T) {
	t.Parallel()

	ix := keyword.NewIndex(nil)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 200 {
				id := int64(w*1000 + i)
				ix.Add(id, fmt.Sprintf("worker %d item %d 订单%d ERR_%d", w, i, i, i))
				if i%3 == 0 {
					ix.Delete(id)
				}
			}
		})
		wg.Go(func() {
			for i := range 200 {
				res := ix.Search(fmt.Sprintf("item 订单%d", i), 5, func(id int64) bool { return ix.Len() >= 0 })
				assert.LessOrEqual(t, len(res), 5)
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			var buf bytes.Buffer
			assert.NoError(t, ix.Export(&buf))
			back := keyword.NewIndex(nil)
			assert.NoError(t, back.Import(&buf))
		}
	})
	wg.Wait()
	assert.Equal(t, 4*(200-67), ix.Len())
}

func TestIndex_ExportImport(t *testing.T) {
	t.Parallel()

	ix := keyword.NewIndex(nil)
	ix.Add(5, "订单服务迁移到 PostgreSQL, ERR_CONN_RESET")
	ix.Add(-3, "call 138-0013-8000")
	ix.Add(9, "temporary")
	ix.Add(7, "")
	ix.Delete(9)

	var snap bytes.Buffer
	require.NoError(t, ix.Export(&snap))

	back := keyword.NewIndex(nil)
	back.Add(100, "will be replaced")
	require.NoError(t, back.Import(bytes.NewReader(snap.Bytes())))
	assert.Equal(t, ix.Len(), back.Len())
	assert.Equal(t, ix.Stats(), back.Stats())
	for _, q := range []string{"订单", "13800138000", "conn reset", "temporary", "replaced", "postgresql 迁移"} {
		assert.Equal(t, ix.Search(q, 10, nil), back.Search(q, 10, nil), q)
	}
	// The imported index keeps working.
	back.Add(5, "something else")
	assert.Empty(t, back.Search("订单", 10, nil))
	assert.Equal(t, 3, back.Len())

	// Deterministic: the same contents added in another order give the same bytes.
	other := keyword.NewIndex(nil)
	other.Add(7, "")
	other.Add(-3, "call 138-0013-8000")
	other.Add(5, "订单服务迁移到 PostgreSQL, ERR_CONN_RESET")
	var snap2 bytes.Buffer
	require.NoError(t, other.Export(&snap2))
	assert.Equal(t, snap.Bytes(), snap2.Bytes())
}

func TestIndex_ImportErrors(t *testing.T) {
	t.Parallel()

	ix := addDocs(keyword.NewIndex(nil), "keep me", "and me too 数据库")
	var snap bytes.Buffer
	require.NoError(t, ix.Export(&snap))
	good := snap.Bytes()

	check := func(t *testing.T, data []byte, want error) {
		t.Helper()
		target := keyword.NewIndex(nil)
		target.Add(42, "untouched")
		err := target.Import(bytes.NewReader(data))
		require.ErrorIs(t, err, want)
		assert.Equal(t, []int64{42}, ids(target.Search("untouched", 5, nil)), "a failed Import leaves the index as it was")
		assert.Equal(t, 1, target.Len())
	}
	t.Run("flipped bytes", func(t *testing.T) {
		for i := range good {
			bad := bytes.Clone(good)
			bad[i] ^= 0x40
			want := keyword.ErrCorrupt
			if i == 4 || i == 5 {
				want = keyword.ErrVersion
			}
			check(t, bad, want)
		}
	})
	t.Run("truncated", func(t *testing.T) {
		for n := range len(good) {
			check(t, good[:n], keyword.ErrCorrupt)
		}
	})
	t.Run("empty", func(t *testing.T) { check(t, nil, keyword.ErrCorrupt) })
	t.Run("damage behind a valid checksum", func(t *testing.T) {
		// The parser itself must reject or survive every single-byte change
		// and every cut, never panic.
		reseal := func(b []byte) []byte {
			out := append(bytes.Clone(b), 0, 0, 0, 0)
			binary.LittleEndian.PutUint32(out[len(b):], crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
			return out
		}
		body := good[:len(good)-4]
		var variants [][]byte
		for i := 8; i < len(body); i++ {
			for _, x := range []byte{0x01, 0x80, 0xff} {
				bad := bytes.Clone(body)
				bad[i] ^= x
				variants = append(variants, reseal(bad))
			}
			variants = append(variants, reseal(body[:i]))
		}
		for _, v := range variants {
			target := keyword.NewIndex(nil)
			err := target.Import(bytes.NewReader(v))
			if err != nil {
				require.True(t, errors.Is(err, keyword.ErrCorrupt) || errors.Is(err, keyword.ErrTokenizer), "%v", err)
				continue
			}
			target.Search("keep me 数据库", 5, nil)
			target.Delete(1)
			target.Add(2, "replaced")
			assert.Equal(t, []int64{2}, ids(target.Search("replaced", 5, nil)))
		}
	})
	t.Run("other tokenizer", func(t *testing.T) {
		target := keyword.NewIndex(newTok(t, keyword.WithStopWords()))
		require.ErrorIs(t, target.Import(bytes.NewReader(good)), keyword.ErrTokenizer)
	})
	t.Run("reader error", func(t *testing.T) {
		boom := errors.New("boom")
		require.ErrorIs(t, keyword.NewIndex(nil).Import(errReader{boom}), boom)
	})
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func ids(rs []keyword.Result) []int64 {
	out := make([]int64, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

func ExampleIndex_Search() {
	tok, err := keyword.NewTokenizer(keyword.WithCJK(keyword.Bigrams))
	if err != nil {
		panic(err)
	}
	ix := addDocs(keyword.NewIndex(tok), "Flight LH 401 leaves at 9:40.", "Call me on 138-0013-8000 after lunch.", "The deploy failed with ERR_CONN_RESET.", "我们决定把订单服务迁移到 PostgreSQL。")

	for _, q := range []string{"LH401", "13800138000", "conn reset", "订单服务用什么数据库", "?!"} {
		fmt.Println(q, "→", ids(ix.Search(q, 3, nil)))
	}
	// Output:
	// LH401 → [1]
	// 13800138000 → [2]
	// conn reset → [3]
	// 订单服务用什么数据库 → [4]
	// ?! → []
}

func TestIndex_ImportThenEdit(t *testing.T) {
	t.Parallel()

	ix := plainIndex(t)
	for i := range 50 {
		ix.Add(int64(i), fmt.Sprintf("shared w%d w%d", i%5, i%7))
	}
	var snap bytes.Buffer
	require.NoError(t, ix.Export(&snap))
	back := plainIndex(t)
	require.NoError(t, back.Import(&snap))
	// Deleting and replacing imported documents keeps postings consistent.
	for i := 0; i < 50; i += 3 {
		assert.True(t, back.Delete(int64(i)))
		ix.Delete(int64(i))
	}
	for i := 1; i < 50; i += 4 {
		back.Add(int64(i), "replaced shared")
		ix.Add(int64(i), "replaced shared")
	}
	assert.Equal(t, ix.Stats(), back.Stats())
	for _, q := range []string{"shared", "w3", "replaced w4", "w0 w6"} {
		assert.Equal(t, ix.Search(q, 100, nil), back.Search(q, 100, nil), q)
	}
}

func FuzzIndexImport(f *testing.F) {
	ix := keyword.NewIndex(newTok(f, keyword.WithCJK(keyword.Bigrams)))
	ix.Add(1, "alpha beta 数据库")
	ix.Add(-2, "beta gamma gamma")
	var snap bytes.Buffer
	require.NoError(f, ix.Export(&snap))
	f.Add(snap.Bytes())
	f.Add([]byte("AMKW\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		try := func(data []byte) {
			target := keyword.NewIndex(ix.Tokenizer())
			if err := target.Import(bytes.NewReader(data)); err != nil {
				require.True(t, errors.Is(err, keyword.ErrCorrupt) || errors.Is(err, keyword.ErrVersion) ||
					errors.Is(err, keyword.ErrTokenizer), "unexpected error %v", err)
				return
			}
			// Whatever was accepted must be usable.
			target.Search("alpha beta", 5, nil)
			target.Add(3, "alpha")
			target.Delete(1)
			target.Delete(-2)
		}
		try(data)
		// Again with a valid checksum, so that the parser itself is fuzzed.
		if len(data) >= 12 {
			fixed := bytes.Clone(data)
			body := fixed[:len(fixed)-4]
			binary.LittleEndian.PutUint32(fixed[len(body):], crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
			try(fixed)
		}
	})
}

// TestIndex_FindsCodes checks that the written forms of a code find each
// other in both directions, among distractors that share parts of them.
func TestIndex_FindsCodes(t *testing.T) {
	t.Parallel()

	forms := [][2]string{
		{"my flight is LH401 tomorrow", "LH 401"},
		{"flight LH 401 boards at gate B", "LH401"},
		{"call me at 138-0013-8000", "13800138000"},
		{"his number is 13800138000", "138-0013-8000"},
		{"the deploy failed with ERR_CONN_RESET", "what was ERR_CONN_RESET about"},
		{"his number is 13800138000", "138 0013 8000"},
		{"call +86 138 0013 8000 after six", "13800138000"},
		{"error E1234 in the payment service", "e1234"},
		{"upgrade to v1.2.3 first", "1.2.3"},
		{"write to user@example.com", "user@example.com"},
		{"张伟的手机号是138-0013-8000", "张伟 13800138000"},
	}
	distractors := []string{
		"flight LH 402 was cancelled", "LH is an airline code", "401 unauthorized",
		"call 138-0013-9999 for support", "call 138 0013 7777 too", "conn pool reset nightly", "error budget",
		"upgrade to v1.2.4 later", "write to admin@example.org", "张伟明天出差",
	}
	for i, f := range forms {
		t.Run(f[1], func(t *testing.T) {
			ix := keyword.NewIndex(nil)
			for j, d := range distractors {
				ix.Add(int64(100+j), d)
			}
			ix.Add(int64(i), f[0])
			got := ix.Search(f[1], 3, nil)
			require.NotEmpty(t, got, "%q finds nothing", f[1])
			assert.Equal(t, int64(i), got[0].ID, "%q should find %q first, got %v", f[1], f[0], got)
		})
	}
}
