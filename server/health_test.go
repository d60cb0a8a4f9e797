package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory/longterm"
	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/inmem"
)

func init() {
	// "test-panicking" is a vector backend whose Add panics in namespace
	// "boom", as a backend with a bug would.
	vdb.Register("test-panicking", func(_ context.Context, cfg vdb.Config) (vdb.VectorDatabase, error) {
		db, err := inmem.New(cfg.Dim)
		if cfg.Namespace == "boom" {
			return panickingDB{db}, err
		}
		return db, err
	})
}

type panickingDB struct{ *inmem.DB }

func (panickingDB) Add(context.Context, []int64, [][]float32) error { panic("backend bug") }

// TestHealthz_FailedStore: a write that panics in the store's backend
// leaves the server up (net/http recovers the request) but its store
// refuses writes; /healthz then answers 503 with the reason, so that an
// orchestrator restarts the server, which reopens the store from its log.
func TestHealthz_FailedStore(t *testing.T) {
	ts := start(t, newMemory(t, longterm.WithBackend("test-panicking")))
	r := ts.call(t, "GET", "/healthz", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	assert.JSONEq(t, `{"status":"ok"}`, string(r.body))
	require.Equal(t, http.StatusCreated, ts.call(t, "POST", "/v1/memories", "", AddRequest{Text: "fine", Scope: Scope{Namespace: "ok"}}).status)

	body, err := json.Marshal(AddRequest{Text: "this write panics", Scope: Scope{Namespace: "boom"}})
	require.NoError(t, err)
	resp, err := http.Post(ts.url+"/v1/memories", "application/json", bytes.NewReader(body))
	if err == nil { // the server answered rather than dropping the connection
		resp.Body.Close()
		assert.GreaterOrEqual(t, resp.StatusCode, 500)
	}

	r = ts.call(t, "GET", "/healthz", "", nil)
	assert.Equal(t, http.StatusServiceUnavailable, r.status)
	var h struct{ Status, Error string }
	r.decode(t, &h)
	assert.Equal(t, "failed", h.Status)
	assert.Contains(t, h.Error, "a write panicked (backend bug)")

	r = ts.call(t, "POST", "/v1/memories", "", AddRequest{Text: "refused", Scope: Scope{Namespace: "ok"}})
	assert.GreaterOrEqual(t, r.status, 500, "writes are refused: %s", r.body)
	r = ts.call(t, "POST", "/v1/search", "", SearchRequest{Query: "fine"})
	assert.Equal(t, http.StatusOK, r.status, "reads go on: %s", r.body)
}
