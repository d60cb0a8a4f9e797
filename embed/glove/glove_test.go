package glove_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/embed/glove"
)

// tiny is a 4-d vector file: "plane" and "flight" point one way, "cat"
// and "kitten" another, "the" and "a" (the most frequent) near the
// middle.
const tiny = `the 0.5 0.5 0.5 0.5
a 0.45 0.5 0.55 0.5
plane 1 0.1 0 0
flight 0.9 0.2 0.1 0
cat 0 0 1 0.1
kitten 0.1 0 0.9 0.2
`

func write(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "vectors.txt")
	require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
	return p
}

func cos(a, b []float32) float64 {
	var s, na, nb float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return s / math.Sqrt(na*nb)
}

func TestReadFormats(t *testing.T) {
	t.Parallel()

	v, err := glove.Read(strings.NewReader(tiny))
	require.NoError(t, err)
	assert.Equal(t, 4, v.Dim())
	assert.Equal(t, 6, v.Len())
	r, ok := v.Rank("plane")
	assert.True(t, ok)
	assert.Equal(t, 2, r)
	assert.Equal(t, []float32{1, 0.1, 0, 0}, v.Vector("plane"))
	assert.Nil(t, v.Vector("dog"))

	// A word2vec header line and CRLF line ends.
	v, err = glove.Read(strings.NewReader("2 3\r\nx 1 2 3\r\ny 4 5 6\r\n"))
	require.NoError(t, err)
	assert.Equal(t, 3, v.Dim())
	assert.Equal(t, 2, v.Len())
}

func TestReadErrorsNameTheLine(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		name, text string
		line       int
	}{
		{"truncated", "a 1 2 3\nb 1 2\n", 2},
		{"nan", "a 1 2 3\nb 1 NaN 3\n", 2},
		{"inf", "a 1 2 3\nb 1 2 3\nc +Inf 2 3\n", 3},
		{"not a number", "a 1 x 3\n", 1},
		{"no values", "a 1 2\nb\n", 2},
		{"header dimension", "2 3\nx 1 2\n", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := glove.Read(strings.NewReader(tc.text))
			require.ErrorIs(t, err, glove.ErrFormat)
			var le *glove.LineError
			require.True(t, errors.As(err, &le), "%v", err)
			assert.Equal(t, tc.line, le.Line)
		})
	}
	_, err := glove.Read(strings.NewReader("3 2\nx 1 2\n"))
	require.ErrorIs(t, err, glove.ErrFormat, "header count")
	_, err = glove.Read(strings.NewReader("\n\n"))
	require.ErrorIs(t, err, glove.ErrFormat, "empty file")
	_, err = glove.Load(filepath.Join(t.TempDir(), "missing.txt"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestEmbedMeaning(t *testing.T) {
	t.Parallel()

	v, err := glove.Read(strings.NewReader(tiny))
	require.NoError(t, err)
	for _, w := range []glove.Weighting{glove.SIF, glove.IDF, glove.Mean} {
		e, err := glove.New(v, glove.WithWeighting(w), glove.WithCommonComponent(false))
		require.NoError(t, err)
		vs, err := e.Embed(context.Background(), []string{"The PLANE", "a flight", "the cat", "a kitten!"})
		require.NoError(t, err)
		for _, x := range vs {
			require.Len(t, x, 4)
			assert.InDelta(t, 1, cos(x, x), 1e-5)
		}
		assert.Greater(t, cos(vs[0], vs[1]), cos(vs[0], vs[2]), w.String())
		assert.Greater(t, cos(vs[2], vs[3]), cos(vs[1], vs[3]), w.String())
	}
	_, err = glove.New(v, glove.WithSIFA(0))
	require.Error(t, err)

	e, err := glove.New(v)
	require.NoError(t, err)
	assert.Equal(t, embed.WordVectors, embed.KindOf(e))
}

func TestUnknownWordsAreHashed(t *testing.T) {
	t.Parallel()

	v, err := glove.Read(strings.NewReader(tiny))
	require.NoError(t, err)
	e, err := glove.New(v)
	require.NoError(t, err)
	ctx := context.Background()
	vs, err := e.Embed(ctx, []string{"LH401 xyzzy", "LH401 xyzzy", "团子最近又胖了", "医生说要控制饮食", "?!"})
	require.NoError(t, err)
	assert.Equal(t, int64(5), e.Unknown())
	assert.Equal(t, vs[0], vs[1], "the same text, the same vector")
	for _, x := range vs {
		for _, f := range x {
			require.False(t, math.IsNaN(float64(f)))
		}
		assert.InDelta(t, 1, cos(x, x), 1e-5)
	}
	_, err = e.Embed(ctx, []string{"plane", "  \n"})
	require.ErrorIs(t, err, embed.ErrEmptyText)
}

func TestNeighbours(t *testing.T) {
	t.Parallel()

	v, err := glove.Read(strings.NewReader(tiny))
	require.NoError(t, err)
	nb := v.Neighbours("plane", 1, 0)
	require.Len(t, nb, 1)
	assert.Equal(t, "flight", nb[0].Word)
	assert.Equal(t, []string{"kitten"}, v.Related(1, 0.5)("cat"))
	assert.Empty(t, v.Neighbours("plane", 3, 0.999))
	assert.Nil(t, v.Neighbours("dog", 3, 0))
}

func TestOpenSpec(t *testing.T) {
	t.Parallel()

	p := write(t, tiny)
	e, err := embed.Open("glove:" + p + "?weight=idf&pc=0")
	require.NoError(t, err)
	assert.Equal(t, 4, e.Dim())
	assert.Equal(t, "glove:vectors.txt:6x4:idf", e.Name())
	for _, spec := range []string{"glove:", "glove:" + p + "?weight=tfidf", "glove:" + p + "?pc=maybe", "glove:" + p + "?a=x", "glove:" + p + "?colour=red"} {
		_, err := embed.Open(spec)
		require.ErrorIs(t, err, embed.ErrBadSpec, spec)
	}
	_, err = embed.Open("glove:" + write(t, "a 1 2\nb 1\n"))
	require.ErrorIs(t, err, glove.ErrFormat)
}
