package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/longterm"
)

// awayStore is a store whose database can go away, as memory/postgres's
// does: while down, every call that needs it fails with
// memory.ErrUnavailable, and the error-free Get and Len answer "missing"
// and 0, which the server must not believe.
type awayStore struct {
	*longterm.Memory
	down atomic.Bool
}

func (s *awayStore) err() error {
	if s.down.Load() {
		return fmt.Errorf("test: connect on host=/tmp/x: PostgreSQL %w: dial error", memory.ErrUnavailable)
	}
	return nil
}

func (s *awayStore) Ping(context.Context) error { return s.err() }

func (s *awayStore) Get(id string) (memory.Record, bool) {
	if s.down.Load() {
		return memory.Record{}, false
	}
	return s.Memory.Get(id)
}

func (s *awayStore) Len() int {
	if s.down.Load() {
		return 0
	}
	return s.Memory.Len()
}

func (s *awayStore) GetContext(_ context.Context, id string) (memory.Record, bool, error) {
	if err := s.err(); err != nil {
		return memory.Record{}, false, err
	}
	r, ok := s.Memory.Get(id)
	return r, ok, nil
}

func (s *awayStore) Counts(context.Context) (int, int, error) {
	if err := s.err(); err != nil {
		return 0, 0, err
	}
	return s.Memory.Len(), s.Memory.Chunks(), nil
}

func (s *awayStore) Add(ctx context.Context, r memory.Record) (string, error) {
	if err := s.err(); err != nil {
		return "", err
	}
	return s.Memory.Add(ctx, r)
}

func (s *awayStore) Remember(ctx context.Context, recs ...memory.Record) ([]memory.Outcome, error) {
	if err := s.err(); err != nil {
		return nil, err
	}
	return s.Memory.Remember(ctx, recs...)
}

func (s *awayStore) Supersede(ctx context.Context, old string, rec memory.Record) (memory.Outcome, error) {
	if err := s.err(); err != nil {
		return memory.Outcome{}, err
	}
	return s.Memory.Supersede(ctx, old, rec)
}

func (s *awayStore) History(ctx context.Context, id string) ([]memory.Record, error) {
	if err := s.err(); err != nil {
		return nil, err
	}
	return s.Memory.History(ctx, id)
}

func (s *awayStore) Query(ctx context.Context, q memory.Query) ([]memory.Hit, error) {
	if err := s.err(); err != nil {
		return nil, err
	}
	return s.Memory.Query(ctx, q)
}

// TestUnavailableDatabase: while the store's database is away, every route
// that needs it answers 503 unavailable with Retry-After (a read of a
// stored id is not 404, the stats are not 0 memories), /healthz stays 200
// and /readyz answers 503; MCP tools fail with "unavailable (retry …)".
// When the database is back, everything answers as before.
func TestUnavailableDatabase(t *testing.T) {
	st := &awayStore{Memory: newMemory(t)}
	srv, err := New(st, WithLogger(quiet))
	require.NoError(t, err)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	ts := &testServer{Server: srv, mem: st.Memory, url: hs.URL}
	id := ts.add(t, "", AddRequest{Text: "the deploy key rotates every 90 days"})
	assert.Equal(t, http.StatusOK, ts.call(t, "GET", "/readyz", "", nil).status)
	cs := connectPipe(t, srv)

	st.down.Store(true)
	for _, rt := range []struct{ method, path, body string }{
		{"POST", "/v1/memories", `{"text": "a new note"}`},
		{"GET", "/v1/memories/" + id, ""},
		{"PUT", "/v1/memories/" + id, `{"text": "changed"}`},
		{"DELETE", "/v1/memories/" + id, ""},
		{"POST", "/v1/search", `{"query": "deploy key"}`},
		{"GET", "/v1/stats", ""},
	} {
		var body any
		if rt.body != "" {
			body = rt.body
		}
		r := ts.call(t, rt.method, rt.path, "", body)
		assert.Equal(t, http.StatusServiceUnavailable, r.status, "%s %s: %s", rt.method, rt.path, r.body)
		assert.Equal(t, CodeUnavailable, r.errCode(t), "%s %s", rt.method, rt.path)
		assert.Equal(t, strconv.Itoa(RetryAfter), r.header.Get("Retry-After"), "%s %s", rt.method, rt.path)
	}
	assert.Equal(t, http.StatusOK, ts.call(t, "GET", "/healthz", "", nil).status, "liveness stays up")
	r := ts.call(t, "GET", "/readyz", "", nil)
	assert.Equal(t, http.StatusServiceUnavailable, r.status)
	assert.Equal(t, strconv.Itoa(RetryAfter), r.header.Get("Retry-After"))
	assert.Contains(t, string(r.body), `"status":"unavailable"`)
	metrics := string(ts.call(t, "GET", "/metrics", "", nil).body)
	assert.Contains(t, metrics, "agentmem_store_memories NaN", "the gauge does not say 0")
	for _, tool := range []struct {
		name string
		args map[string]any
	}{
		{"get_memory", map[string]any{"id": id}},
		{"search_memory", map[string]any{"query": "deploy key"}},
		{"add_memory", map[string]any{"text": "a new note"}},
	} {
		msg := callTool(t, cs, tool.name, tool.args, nil)
		assert.True(t, strings.HasPrefix(msg, fmt.Sprintf("unavailable (retry in %d s): ", RetryAfter)), "%s: %s", tool.name, msg)
	}

	st.down.Store(false)
	assert.Equal(t, http.StatusOK, ts.call(t, "GET", "/readyz", "", nil).status)
	assert.Equal(t, http.StatusOK, ts.call(t, "GET", "/v1/memories/"+id, "", nil).status)
	var stats Stats
	r = ts.call(t, "GET", "/v1/stats", "", nil)
	r.decode(t, &stats)
	assert.Equal(t, 1, stats.Memories)
	assert.Contains(t, string(ts.call(t, "GET", "/metrics", "", nil).body), "agentmem_store_memories 1")
}

// TestReadyz_NoToken: a load balancer asks /readyz without a token, as it
// asks /healthz.
func TestReadyz_NoToken(t *testing.T) {
	ts := start(t, nil, WithToken("secret-token", AllNamespaces))
	r := ts.call(t, "GET", "/readyz", "", nil)
	assert.Equal(t, http.StatusOK, r.status)
	assert.JSONEq(t, `{"status":"ready"}`, string(r.body))
}
