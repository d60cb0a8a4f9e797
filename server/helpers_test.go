package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/memory/longterm"
)

var quiet = slog.New(slog.DiscardHandler)

// newMemory opens a long-term store in a temporary directory, with the
// hash:512 embedder, closed at the end of the test.
func newMemory(t testing.TB, opts ...longterm.Option) *longterm.Memory {
	t.Helper()
	emb, err := hash.New(512)
	require.NoError(t, err)
	m, err := longterm.Open(context.Background(), t.TempDir(), emb, append([]longterm.Option{longterm.WithLogger(quiet)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	return m
}

// testServer is a Server listening on a loopback port.
type testServer struct {
	*Server
	mem  *longterm.Memory
	url  string
	stop func() error // graceful shutdown; returns Serve's error
}

// start serves a new store (or mem, if given) on 127.0.0.1:0 until the end
// of the test.
func start(t testing.TB, mem *longterm.Memory, opts ...Option) *testServer {
	t.Helper()
	if mem == nil {
		mem = newMemory(t)
	}
	srv, err := New(mem, append([]Option{WithLogger(quiet)}, opts...)...)
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l, 10*time.Second) }()
	var once bool
	var serveErr error
	stop := func() error {
		if !once {
			once = true
			cancel()
			serveErr = <-done
		}
		return serveErr
	}
	t.Cleanup(func() { stop() })
	return &testServer{Server: srv, mem: mem, url: "http://" + l.Addr().String(), stop: stop}
}

// response is a decoded answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

// decode decodes the body into v.
func (r response) decode(t testing.TB, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(r.body, v), "body: %s", r.body)
}

// errCode returns the error code of an error answer.
func (r response) errCode(t testing.TB) string {
	t.Helper()
	var e errorBody
	r.decode(t, &e)
	require.NotEmpty(t, e.Error.Message, "body: %s", r.body)
	return e.Error.Code
}

// call sends a request with body (a []byte, a string sent as is, or a
// value encoded as JSON) and the bearer token tok ("" for none).
func (ts *testServer) call(t testing.TB, method, path, tok string, body any) response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = bytes.NewReader([]byte(b))
	default:
		data, err := json.Marshal(b)
		require.NoError(t, err)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, ts.url+path, rd)
	require.NoError(t, err)
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return response{status: resp.StatusCode, header: resp.Header, body: data}
}

// add stores text in namespace ns over HTTP and returns its id.
func (ts *testServer) add(t testing.TB, tok string, req AddRequest) string {
	t.Helper()
	r := ts.call(t, "POST", "/v1/memories", tok, req)
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	var res AddResult
	r.decode(t, &res)
	return res.ID
}

// recordFor returns a record with text in the default namespace.
func recordFor(text string) longterm.Record { return longterm.Record{Text: text} }

// mustHash returns the hash:512 embedder.
func mustHash(t testing.TB) *hash.Embedder {
	t.Helper()
	emb, err := hash.New(512)
	require.NoError(t, err)
	return emb
}

// mustHashE returns the hash:512 embedder (for code without a testing.TB).
func mustHashE() (*hash.Embedder, error) { return hash.New(512) }
