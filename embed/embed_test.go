package embed_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ollama/ollama/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed"
	_ "github.com/agentmem/agentmem/embed/hash"   // registers "hash"
	_ "github.com/agentmem/agentmem/embed/ollama" // registers "ollama"
)

func TestOpen_KnownSpecs(t *testing.T) {
	t.Parallel()

	tests := []struct {
		spec     string
		wantName string
		wantDim  int
	}{
		{"hash", "hash:512", 512},
		{"hash:", "hash:512", 512},
		{"hash:64", "hash:64", 64},
		{" hash:128 ", "hash:128", 128},
		{"ollama:nomic-embed-text", "ollama:nomic-embed-text", 0},
		{"ollama:nomic-embed-text:v1.5", "ollama:nomic-embed-text:v1.5", 0},
		{"ollama:nomic-embed-text:latest", "ollama:nomic-embed-text", 0},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			e, err := embed.Open(tt.spec)
			require.NoError(t, err)
			assert.Equal(t, tt.wantName, e.Name())
			assert.Equal(t, tt.wantDim, e.Dim())
			// A Name is a spec that opens the same embedder again.
			again, err := embed.Open(e.Name())
			require.NoError(t, err)
			assert.Equal(t, e.Name(), again.Name())
		})
	}
}

func TestOpen_UnknownScheme(t *testing.T) {
	t.Parallel()

	for _, spec := range []string{"", "faiss:x", "openai:text-embedding-3-small", "512"} {
		_, err := embed.Open(spec)
		require.ErrorIs(t, err, embed.ErrUnknownScheme, "spec %q", spec)
		assert.Contains(t, err.Error(), "registered: hash, ollama", "the error lists the registered schemes")
	}
}

func TestOpen_BadSpecs(t *testing.T) {
	t.Parallel()

	for _, spec := range []string{"hash:abc", "hash:0", "hash:-3", "hash:1e3", "hash:99999999", "ollama", "ollama:", "ollama:  "} {
		e, err := embed.Open(spec)
		require.ErrorIs(t, err, embed.ErrBadSpec, "spec %q", spec)
		assert.Nil(t, e)
		assert.Contains(t, err.Error(), fmt.Sprintf("%q", spec), "the error quotes the spec")
	}
}

func TestSchemes(t *testing.T) {
	t.Parallel()

	assert.Subset(t, embed.Schemes(), []string{"hash", "ollama"})
}

func TestRegister_ProgrammingErrorsPanic(t *testing.T) {
	t.Parallel()

	assert.Panics(t, func() { embed.Register("hash", func(string) (embed.Embedder, error) { return nil, nil }) })
	assert.Panics(t, func() { embed.Register("nil-opener", nil) })
}

func TestDimension_Hash(t *testing.T) {
	t.Parallel()

	e, err := embed.Open("hash:32")
	require.NoError(t, err)
	d, err := embed.Dimension(t.Context(), e)
	require.NoError(t, err)
	assert.Equal(t, 32, d)
}

// TestOpen_Ollama_FakeOllamaServer checks the whole path from a spec to a
// request: Open honours OLLAMA_HOST and Dimension learns the model's
// dimension from a (fake) server.
func TestOpen_Ollama_FakeOllamaServer(t *testing.T) {
	var got api.EmbedRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/api/embed", r.URL.Path)
		assert.NoError(t, json.NewDecoder(r.Body).Decode(&got))
		assert.NoError(t, json.NewEncoder(w).Encode(api.EmbedResponse{Embeddings: [][]float32{{3, 4, 0}}}))
	}))
	t.Cleanup(srv.Close)
	t.Setenv("OLLAMA_HOST", srv.URL)

	e, err := embed.Open("ollama:nomic-embed-text")
	require.NoError(t, err)
	d, err := embed.Dimension(t.Context(), e)
	require.NoError(t, err)
	assert.Equal(t, 3, d)
	assert.Equal(t, 3, e.Dim())
	assert.Equal(t, "nomic-embed-text", got.Model)
	assert.Equal(t, []any{"search_document: dimension probe"}, got.Input)

	qe, ok := e.(embed.QueryEmbedder)
	require.True(t, ok, "ollama embedders implement QueryEmbedder")
	v, err := qe.EmbedQuery(context.Background(), []string{"when do I fly?"})
	require.NoError(t, err)
	assert.InDeltaSlice(t, []float32{0.6, 0.8, 0}, v[0], 1e-6)
	assert.Equal(t, []any{"search_query: when do I fly?"}, got.Input)
}

// counted is an embedder that records its batch sizes and can drop a
// vector or fail.
type counted struct {
	batches []int
	short   bool
	fail    error
}

func (c *counted) Name() string { return "counted" }

func (c *counted) Dim() int { return 2 }

func (c *counted) Embed(_ context.Context, texts []string) ([][]float32, error) {
	if c.fail != nil {
		return nil, c.fail
	}
	c.batches = append(c.batches, len(texts))
	out := make([][]float32, len(texts))
	for i, s := range texts {
		out[i] = []float32{float32(len(s)), 1}
	}
	if c.short {
		out = out[1:]
	}
	return out, nil
}

func TestEmbedAll(t *testing.T) {
	t.Parallel()

	ctx := t.Context()
	texts := []string{"a", "bb", "ccc", "dddd", "eeeee"}
	c := &counted{}
	vecs, err := embed.EmbedAll(ctx, c, texts, 2)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 2, 1}, c.batches, "calls of at most the batch size, in order")
	for i, v := range vecs {
		assert.Equal(t, float32(len(texts[i])), v[0], "vector %d is text %d's", i, i)
	}
	c = &counted{}
	_, err = embed.EmbedAll(ctx, c, texts, 0)
	require.NoError(t, err)
	assert.Equal(t, []int{5}, c.batches, "batch ≤ 0: one call")

	_, err = embed.EmbedAll(ctx, &counted{short: true}, texts, 10)
	assert.ErrorContains(t, err, "embed: embedder counted returned 4 vectors for 5 texts")
	down := errors.New("model server down")
	_, err = embed.EmbedAll(ctx, &counted{fail: down}, texts, 10)
	assert.ErrorIs(t, err, down)
}

// TestEmbedAllInto: an IntoEmbedder writes into the buffer (the vectors
// are slices of it, each capped); an embedder without EmbedInto, or a
// buffer too small, falls back to EmbedAll and leaves the buffer alone.
func TestEmbedAllInto(t *testing.T) {
	t.Parallel()

	ctx := t.Context()
	h, err := embed.Open("hash:16")
	require.NoError(t, err)
	texts := []string{"one", "two", "three", "four", "five"}
	want, err := embed.EmbedAll(ctx, h, texts, 0)
	require.NoError(t, err)

	buf := make([]float32, 5*16)
	vecs, err := embed.EmbedAllInto(ctx, h, buf, texts, 2)
	require.NoError(t, err)
	assert.Equal(t, want, vecs)
	assert.Same(t, &buf[16], &vecs[1][0], "vector 1 is written into the buffer")
	assert.Equal(t, 16, cap(vecs[0]), "capped: appending to one vector does not overwrite the next")

	small := make([]float32, 4*16)
	vecs, err = embed.EmbedAllInto(ctx, h, small, texts, 2)
	require.NoError(t, err)
	assert.Equal(t, want, vecs)
	assert.Equal(t, make([]float32, 4*16), small, "too small: not used")

	c := &counted{}
	vecs, err = embed.EmbedAllInto(ctx, c, make([]float32, 100), texts, 2)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 2, 1}, c.batches, "no EmbedInto: EmbedAll")
	assert.Len(t, vecs, 5)

	_, err = embed.EmbedAllInto(ctx, h, buf, []string{"one", ""}, 0)
	assert.ErrorIs(t, err, embed.ErrEmptyText)
}
