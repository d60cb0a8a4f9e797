package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed"
)

// fakeOllama is an httptest server speaking Ollama's /api/embed protocol:
// it decodes and checks each api.EmbedRequest, records it, and answers with
// the vectors that answer returns (by default vectorFor each input).
type fakeOllama struct {
	t      *testing.T
	srv    *httptest.Server
	model  string
	mu     sync.Mutex
	reqs   []api.EmbedRequest
	inputs [][]string
	answer func(req api.EmbedRequest, input []string) (status int, body any)
}

// vectorFor is the fake model: a 4-dimensional, not normalised vector that
// depends on the text, so tests can check order and normalisation.
func vectorFor(text string) []float32 {
	return []float32{float32(len(text)), 1, 0, 2}
}

func newFakeOllama(t *testing.T, model string) *fakeOllama {
	t.Helper()
	f := &fakeOllama{t: t, model: model}
	f.answer = func(_ api.EmbedRequest, input []string) (int, any) {
		vs := make([][]float32, len(input))
		for i, s := range input {
			vs[i] = vectorFor(s)
		}
		return http.StatusOK, api.EmbedResponse{Model: model, Embeddings: vs}
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeOllama) serve(w http.ResponseWriter, r *http.Request) {
	assert.Equal(f.t, http.MethodPost, r.Method, "the client must POST")
	assert.Equal(f.t, "/api/embed", r.URL.Path, "the client must use /api/embed")
	assert.Equal(f.t, "application/json", r.Header.Get("Content-Type"))
	var req api.EmbedRequest
	if !assert.NoError(f.t, json.NewDecoder(r.Body).Decode(&req), "request body must be an api.EmbedRequest") {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	assert.Equal(f.t, f.model, req.Model)
	raw, ok := req.Input.([]any)
	assert.True(f.t, ok, "input must be a JSON array of strings, got %T", req.Input)
	input := make([]string, len(raw))
	for i, x := range raw {
		input[i], ok = x.(string)
		assert.True(f.t, ok, "input[%d] must be a string", i)
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.inputs = append(f.inputs, input)
	answer := f.answer
	f.mu.Unlock()

	status, body := answer(req, input)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	assert.NoError(f.t, json.NewEncoder(w).Encode(body))
}

func (f *fakeOllama) setAnswer(fn func(req api.EmbedRequest, input []string) (int, any)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answer = fn
}

func (f *fakeOllama) requests() ([]api.EmbedRequest, [][]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]api.EmbedRequest(nil), f.reqs...), append([][]string(nil), f.inputs...)
}

func (f *fakeOllama) newEmbedder(t *testing.T, opts ...Option) *Embedder {
	t.Helper()
	e, err := New(f.model, append([]Option{WithHost(f.srv.URL), WithHTTPClient(f.srv.Client())}, opts...)...)
	require.NoError(t, err)
	return e
}

func normalized(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / math.Sqrt(s))
	}
	return out
}

func TestEmbed_FakeOllamaServer_Batches(t *testing.T) {
	t.Parallel()

	f := newFakeOllama(t, "all-minilm")
	e := f.newEmbedder(t, WithBatchSize(3))
	texts := []string{"a", "bb", "ccc", "dddd", "eeeee", "ffffff", "ggggggg"}

	vs, err := e.Embed(t.Context(), texts)
	require.NoError(t, err)
	require.Len(t, vs, len(texts))
	for i, v := range vs {
		assert.InDeltaSlice(t, normalized(vectorFor(texts[i])), v, 1e-6, "vector %d must be the normalised answer for text %d", i, i)
	}
	_, inputs := f.requests()
	assert.Equal(t, [][]string{{"a", "bb", "ccc"}, {"dddd", "eeeee", "ffffff"}, {"ggggggg"}}, inputs,
		"7 texts in batches of 3 must be 3 requests, in order")
	assert.Equal(t, 4, e.Dim())
	assert.Equal(t, "ollama:all-minilm", e.Name())
}

func TestEmbed_FakeOllamaServer_DefaultBatchSize(t *testing.T) {
	t.Parallel()

	f := newFakeOllama(t, "all-minilm")
	e := f.newEmbedder(t)
	texts := make([]string, DefaultBatchSize+1)
	for i := range texts {
		texts[i] = strings.Repeat("x", i+1)
	}
	vs, err := e.Embed(t.Context(), texts)
	require.NoError(t, err)
	require.Len(t, vs, len(texts))
	_, inputs := f.requests()
	require.Len(t, inputs, 2)
	assert.Len(t, inputs[0], DefaultBatchSize)
	assert.Len(t, inputs[1], 1)
}

func TestEmbed_FakeOllamaServer_LearnsAndEnforcesDimension(t *testing.T) {
	t.Parallel()

	f := newFakeOllama(t, "all-minilm")
	e := f.newEmbedder(t)
	assert.Equal(t, 0, e.Dim(), "the dimension is unknown before the first answer")

	_, err := e.Embed(t.Context(), []string{"first"})
	require.NoError(t, err)
	assert.Equal(t, 4, e.Dim())

	f.setAnswer(func(_ api.EmbedRequest, input []string) (int, any) {
		return http.StatusOK, api.EmbedResponse{Embeddings: [][]float32{{1, 2, 3, 4, 5}}}
	})
	_, err = e.Embed(t.Context(), []string{"second"})
	require.ErrorIs(t, err, embed.ErrDimension)
	assert.Contains(t, err.Error(), "answered 5 dimensions")
	assert.Contains(t, err.Error(), "expected 4")
	assert.Equal(t, 4, e.Dim(), "a wrong answer must not change the learned dimension")
}

func TestEmbed_FakeOllamaServer_MixedDimensionsInOneAnswer(t *testing.T) {
	t.Parallel()

	f := newFakeOllama(t, "all-minilm")
	f.setAnswer(func(_ api.EmbedRequest, input []string) (int, any) {
		return http.StatusOK, api.EmbedResponse{Embeddings: [][]float32{{1, 2, 3}, {1, 2}}}
	})
	_, err := f.newEmbedder(t).Embed(t.Context(), []string{"a", "b"})
	require.ErrorIs(t, err, embed.ErrDimension)
}

func TestEmbed_FakeOllamaServer_WithDimensions(t *testing.T) {
	t.Parallel()

	f := newFakeOllama(t, "all-minilm")
	e := f.newEmbedder(t, WithDimensions(4), WithKeepAlive(time.Minute))
	assert.Equal(t, 4, e.Dim(), "WithDimensions makes the dimension known up front")
	_, err := e.Embed(t.Context(), []string{"a"})
	require.NoError(t, err)
	reqs, _ := f.requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, 4, reqs[0].Dimensions)
	require.NotNil(t, reqs[0].KeepAlive)
	assert.Equal(t, time.Minute, reqs[0].KeepAlive.Duration)

	e3 := f.newEmbedder(t, WithDimensions(3))
	_, err = e3.Embed(t.Context(), []string{"a"})
	require.ErrorIs(t, err, embed.ErrDimension, "a server ignoring the requested dimensions must be caught")
}

type vectors [][]float32

func TestEmbed_FakeOllamaServer_BadAnswers(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name   string
		answer any
		want   string
	}{
		{"too few vectors", vectors{{1, 2}}, "answered 1 vectors for 2 texts"},
		{"too many vectors", vectors{{1, 2}, {1, 2}, {1, 2}}, "answered 3 vectors for 2 texts"},
		{"no vectors", json.RawMessage(`{"model":"all-minilm"}`), "answered 0 vectors for 2 texts"},
		{"empty vector", vectors{{1, 2}, {}}, "empty vector for text 1"},
		{"zero vector", vectors{{0, 0}, {1, 2}}, "all-zero vector for text 0"},
		{"float32 overflow", json.RawMessage(`{"embeddings":[[1e39,1],[1,2]]}`), "all-minilm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeOllama(t, "all-minilm")
			f.setAnswer(func(_ api.EmbedRequest, input []string) (int, any) {
				if v, ok := tt.answer.(vectors); ok {
					return http.StatusOK, api.EmbedResponse{Embeddings: v}
				}
				return http.StatusOK, tt.answer
			})
			v, err := f.newEmbedder(t).Embed(t.Context(), []string{"a", "b"})
			require.Error(t, err)
			assert.Nil(t, v)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestEmbed_FakeOllamaServer_NotJSON(t *testing.T) {
	t.Parallel()

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("<html>not ollama</html>"))
	}))
	t.Cleanup(srv.Close)
	e, err := New("m", WithHost(srv.URL))
	require.NoError(t, err)
	_, err = e.Embed(t.Context(), []string{"a"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), srv.URL, "the error names the server")
}

func TestEmbed_FakeOllamaServer_ModelNotFound(t *testing.T) {
	t.Parallel()

	f := newFakeOllama(t, "nope")
	f.setAnswer(func(api.EmbedRequest, []string) (int, any) {
		// What Ollama answers for a model it has not pulled.
		return http.StatusNotFound, map[string]string{"error": `model "nope" not found, try pulling it first`}
	})
	_, err := f.newEmbedder(t).Embed(t.Context(), []string{"hello"})
	require.ErrorIs(t, err, embed.ErrModelNotFound)
	t.Log(err)
	assert.Contains(t, err.Error(), "run `ollama pull nope`")
	assert.Contains(t, err.Error(), f.srv.URL)
	se, ok := errors.AsType[api.StatusError](err)
	require.True(t, ok, "the server's error stays available")
	assert.Equal(t, http.StatusNotFound, se.StatusCode)
}

func TestEmbed_FakeOllamaServer_ServerError(t *testing.T) {
	t.Parallel()

	f := newFakeOllama(t, "all-minilm")
	f.setAnswer(func(api.EmbedRequest, []string) (int, any) {
		return http.StatusInternalServerError, map[string]string{"error": "llama runner process has terminated"}
	})
	_, err := f.newEmbedder(t).Embed(t.Context(), []string{"hello"})
	require.Error(t, err)
	assert.NotErrorIs(t, err, embed.ErrModelNotFound)
	assert.NotErrorIs(t, err, embed.ErrUnreachable)
	t.Log(err)
	assert.Contains(t, err.Error(), "500")
	assert.Contains(t, err.Error(), "llama runner process has terminated")
}

func TestEmbed_Unreachable(t *testing.T) {
	t.Parallel()

	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close() // nothing listens there any more

	e, err := New("all-minilm", WithHost(addr))
	require.NoError(t, err)
	_, err = e.Embed(t.Context(), []string{"hello"})
	require.ErrorIs(t, err, embed.ErrUnreachable)
	t.Log(err)
	assert.Contains(t, err.Error(), addr, "the error names the address")

	// With a client of the caller's, the address comes from the failed request.
	u, err := url.Parse(addr)
	require.NoError(t, err)
	e, err = New("all-minilm", WithClient(api.NewClient(u, http.DefaultClient)))
	require.NoError(t, err)
	_, err = e.Embed(t.Context(), []string{"hello"})
	require.ErrorIs(t, err, embed.ErrUnreachable)
	assert.Contains(t, err.Error(), addr)
}

func TestEmbed_FakeOllamaServer_Cancel(t *testing.T) {
	t.Parallel()

	arrived := make(chan struct{})
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The server notices a client hanging up only once the body is read.
		_, _ = io.Copy(io.Discard, r.Body)
		close(arrived)
		select { // answer only when the client gives up (or the test ends)
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) }) // runs before srv.Close
	e, err := New("all-minilm", WithHost(srv.URL))
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-arrived
		cancel()
	}()
	_, err = e.Embed(ctx, []string{"hello"})
	require.ErrorIs(t, err, context.Canceled)
	t.Log(err)
	assert.NotErrorIs(t, err, embed.ErrUnreachable)
}

func TestEmbed_CancelledBeforeRequest(t *testing.T) {
	t.Parallel()

	f := newFakeOllama(t, "all-minilm")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := f.newEmbedder(t).Embed(ctx, []string{"hello"})
	require.ErrorIs(t, err, context.Canceled)
	reqs, _ := f.requests()
	assert.Empty(t, reqs, "no request after cancellation")
}

func TestEmbed_FakeOllamaServer_EmptyTextSendsNothing(t *testing.T) {
	t.Parallel()

	f := newFakeOllama(t, "all-minilm")
	e := f.newEmbedder(t)
	for _, texts := range [][]string{{""}, {"ok", "  \n"}} {
		_, err := e.Embed(t.Context(), texts)
		require.ErrorIs(t, err, embed.ErrEmptyText)
		_, err = e.EmbedQuery(t.Context(), texts)
		require.ErrorIs(t, err, embed.ErrEmptyText)
	}
	vs, err := e.Embed(t.Context(), nil)
	require.NoError(t, err)
	assert.Empty(t, vs)
	reqs, _ := f.requests()
	assert.Empty(t, reqs, "empty texts are refused before any request")
}

func TestEmbed_FakeOllamaServer_Prefixes(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name            string
		model           string
		opts            []Option
		wantQ, wantDocs string
	}{
		{"nomic defaults", "nomic-embed-text", nil, "search_query: q", "search_document: d"},
		{"nomic tag", "nomic-embed-text:v1.5", nil, "search_query: q", "search_document: d"},
		{"no prefixes for other models", "all-minilm", nil, "q", "d"},
		{"disabled", "nomic-embed-text", []Option{WithPrefixes("", "")}, "q", "d"},
		{"custom", "all-minilm", []Option{WithPrefixes("query: ", "passage: ")}, "query: q", "passage: d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeOllama(t, tt.model)
			e := f.newEmbedder(t, tt.opts...)
			_, err := e.EmbedQuery(t.Context(), []string{"q"})
			require.NoError(t, err)
			_, err = e.Embed(t.Context(), []string{"d"})
			require.NoError(t, err)
			_, inputs := f.requests()
			assert.Equal(t, [][]string{{tt.wantQ}, {tt.wantDocs}}, inputs)
		})
	}
}

func TestNew_OllamaHostHonoured(t *testing.T) {
	f := newFakeOllama(t, "all-minilm")
	t.Setenv("OLLAMA_HOST", f.srv.URL)
	e, err := New("all-minilm")
	require.NoError(t, err)
	_, err = e.Embed(t.Context(), []string{"hello"})
	require.NoError(t, err)
	reqs, _ := f.requests()
	assert.Len(t, reqs, 1, "the request must go to OLLAMA_HOST")

	// Without a scheme, as ollama itself accepts it.
	t.Setenv("OLLAMA_HOST", strings.TrimPrefix(f.srv.URL, "http://"))
	e, err = New("all-minilm")
	require.NoError(t, err)
	_, err = e.Embed(t.Context(), []string{"hello"})
	require.NoError(t, err)
}

func TestNew_Errors(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name  string
		model string
		opts  []Option
	}{
		{"empty model", " ", nil},
		{"batch size 0", "m", []Option{WithBatchSize(0)}},
		{"bad host scheme", "m", []Option{WithHost("ftp://x")}},
		{"bad host", "m", []Option{WithHost("http://")}},
		{"nil client", "m", []Option{WithClient(nil)}},
		{"nil http client", "m", []Option{WithHTTPClient(nil)}},
		{"client and host", "m", []Option{WithClient(api.NewClient(&url.URL{Scheme: "http", Host: "x"}, nil)), WithHost("x:1")}},
		{"dimensions 0", "m", []Option{WithDimensions(0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := New(tt.model, tt.opts...)
			require.Error(t, err)
			assert.Nil(t, e)
			assert.True(t, strings.HasPrefix(err.Error(), "ollama: "), "error %q names the package", err)
		})
	}
}

func TestEmbed_FakeOllamaServer_Concurrent(t *testing.T) {
	t.Parallel()

	f := newFakeOllama(t, "all-minilm")
	e := f.newEmbedder(t, WithBatchSize(2))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			vs, err := e.Embed(context.Background(), []string{"a", "bb", "ccc"})
			assert.NoError(t, err)
			assert.Len(t, vs, 3)
		})
	}
	wg.Wait()
	assert.Equal(t, 4, e.Dim())
}

func TestDefaultPrefixes(t *testing.T) {
	t.Parallel()

	q, d := DefaultPrefixes("library/nomic-embed-text:latest")
	assert.Equal(t, "search_query: ", q)
	assert.Equal(t, "search_document: ", d)
	q, d = DefaultPrefixes("mxbai-embed-large")
	assert.NotEmpty(t, q)
	assert.Empty(t, d)
	q, d = DefaultPrefixes("bge-m3")
	assert.Empty(t, q)
	assert.Empty(t, d)
}
