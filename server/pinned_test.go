package server

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPinnedTokenCannotProbeIDs: a token pinned to a namespace that adds a
// memory with a chosen id gets the same answer whether the id is stored in
// another namespace or not stored at all (it was 403 for one and 201 for
// the other), and the stored memory is untouched; its own ids and new ones
// under its namespace ("user:42/…") work, over HTTP and MCP alike.
func TestPinnedTokenCannotProbeIDs(t *testing.T) {
	toks, err := ParseTokens("admin-secret=*, pinned-secret=user:42")
	require.NoError(t, err)
	ts := start(t, nil, WithTokens(toks))
	other := ts.add(t, "admin-secret", AddRequest{Text: "user 7's plan", ID: "plan-7", Scope: Scope{Namespace: "user:7"}})
	require.Equal(t, "plan-7", other)

	existing := ts.call(t, "POST", "/v1/memories", "pinned-secret", AddRequest{Text: "mine now", ID: "plan-7"})
	fresh := ts.call(t, "POST", "/v1/memories", "pinned-secret", AddRequest{Text: "mine now", ID: "plan-8"})
	assert.Equal(t, http.StatusForbidden, existing.status)
	assert.Equal(t, existing.status, fresh.status)
	assert.Equal(t, string(existing.body), string(fresh.body), "the same answer for a stored and a new id")
	rec, ok := ts.mem.Get("plan-7")
	require.True(t, ok)
	assert.Equal(t, "user:7", rec.Namespace)
	_, ok = ts.mem.Get("plan-8")
	assert.False(t, ok)

	r := ts.call(t, "POST", "/v1/memories", "pinned-secret", AddRequest{Text: "my plan", ID: "user:42/plan"})
	require.Equal(t, http.StatusCreated, r.status, string(r.body))
	r = ts.call(t, "POST", "/v1/memories", "pinned-secret", AddRequest{Text: "my plan, revised", ID: "user:42/plan"})
	assert.Equal(t, http.StatusCreated, r.status, "its own id: replaced")
	r = ts.call(t, "POST", "/v1/memories", "admin-secret", AddRequest{Text: "admin's own", ID: "anything"})
	assert.Equal(t, http.StatusCreated, r.status, "an unpinned token chooses any id")

	cs, err := connectHTTP(t, ts, "pinned-secret")
	require.NoError(t, err)
	a := callTool(t, cs, "add_memory", map[string]any{"text": "x", "id": "plan-7"}, nil)
	b := callTool(t, cs, "add_memory", map[string]any{"text": "x", "id": "plan-9"}, nil)
	assert.Equal(t, a, b)
	assert.Contains(t, a, CodeForbidden+": ")
}
