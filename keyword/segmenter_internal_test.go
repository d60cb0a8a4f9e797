package keyword

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withoutSegmenter runs the test as a program that imports no segmenter
// (this test binary imports keyword/gse for the other tests).
func withoutSegmenter(t *testing.T) {
	segmenterMu.Lock()
	saved := segmenterLoad
	segmenterLoad = nil
	segmenterMu.Unlock()
	t.Cleanup(func() {
		segmenterMu.Lock()
		segmenterLoad = saved
		segmenterMu.Unlock()
	})
}

func TestSegmenter_NotRegistered(t *testing.T) {
	withoutSegmenter(t)
	_, err := NewTokenizer(WithCJK(Segmenter))
	require.ErrorIs(t, err, errors.ErrUnsupported)
	assert.Contains(t, err.Error(), "keyword/gse")
	assert.NoError(t, Preload(), "nothing to load")
	tok, err := NewTokenizer()
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"数", "数据", "据", "据库", "库"}, tok.Tokens("数据库"), "bigrams need no segmenter")
}

type cutAll struct{ calls *int }

func (c cutAll) CutSearch(text string, _ ...bool) []string { *c.calls++; return []string{text} }

func TestRegisterSegmenter(t *testing.T) {
	withoutSegmenter(t)
	loads, cuts := 0, 0
	RegisterSegmenter(func() (WordCutter, error) { loads++; return cutAll{&cuts}, nil })
	assert.Panics(t, func() { RegisterSegmenter(func() (WordCutter, error) { return nil, nil }) }, "a second registration")
	tok, err := NewTokenizer(WithCJK(Segmenter))
	require.NoError(t, err)
	assert.Equal(t, []string{"数据库"}, tok.Tokens("数据库"))
	require.NoError(t, Preload())
	tok.Tokens("迁移")
	assert.Equal(t, 1, loads, "loaded once")
	assert.Equal(t, 2, cuts)
}
