package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bearerTransport adds a bearer token to every request.
type bearerTransport struct{ tok string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

// connectHTTP connects the go-sdk's client to ts's /mcp over streamable
// HTTP, with the bearer token tok ("" for none).
func connectHTTP(t testing.TB, ts *testServer, tok string) (*mcp.ClientSession, error) {
	t.Helper()
	hc := &http.Client{}
	if tok != "" {
		hc.Transport = bearerTransport{tok}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "agentmem-test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.url + "/mcp", HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// connectPipe serves srv over an in-process pipe with ServeStdio and
// connects the go-sdk's client to it.
func connectPipe(t testing.TB, srv *Server) *mcp.ClientSession {
	t.Helper()
	cr, sw := io.Pipe() // server → client
	sr, cw := io.Pipe() // client → server
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(ctx, sr, sw) }()
	c := mcp.NewClient(&mcp.Implementation{Name: "agentmem-test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		cs.Close()
		cancel()
		assert.NoError(t, <-done)
	})
	return cs
}

// callTool calls a tool and decodes its structured result into out; it
// returns the tool error text ("" for success).
func callTool(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any, out any) string {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, "protocol error calling %s", name)
	if res.IsError {
		require.NotEmpty(t, res.Content)
		return res.Content[0].(*mcp.TextContent).Text
	}
	if out != nil {
		data, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, out), "%s", data)
	}
	return ""
}

// exerciseMCP runs the tools end to end over cs, against the store behind ts.
func exerciseMCP(t *testing.T, cs *mcp.ClientSession) {
	tools, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		assert.NotEmpty(t, tool.Description, tool.Name)
		schema, _ := json.Marshal(tool.InputSchema)
		assert.Contains(t, string(schema), `"description"`, "%s: arguments are described", tool.Name)
	}
	assert.ElementsMatch(t, []string{"add_memory", "search_memory", "get_memory", "list_memories", "memory_history", "update_memory", "delete_memory"}, names)

	var added AddResult
	require.Empty(t, callTool(t, cs, "add_memory", map[string]any{"text": "The deploy key rotates every 90 days; ticket OPS-1182", "user_id": "ana", "speaker": "ana", "time": "2024-03-01"}, &added))
	require.NotEmpty(t, added.ID)
	var batch AddResult
	require.Empty(t, callTool(t, cs, "add_memory", map[string]any{"namespace": "user:ana", "messages": []map[string]string{
		{"role": "user", "content": "I prefer tea to coffee"}, {"role": "assistant", "content": "Tea it is"}}}, &batch))
	require.Len(t, batch.IDs, 2)

	var sr SearchResult
	require.Empty(t, callTool(t, cs, "search_memory", map[string]any{"q": "OPS-1182", "user_id": "ana", "limit": 1}, &sr))
	require.Len(t, sr.Hits, 1)
	assert.Equal(t, added.ID, sr.Hits[0].ID)
	assert.Equal(t, "user:ana", sr.Hits[0].Namespace)
	assert.Equal(t, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), sr.Hits[0].Time)
	assert.NotEmpty(t, sr.Hits[0].Snippets)

	var m Memory
	require.Empty(t, callTool(t, cs, "get_memory", map[string]any{"memory_id": added.ID}, &m))
	assert.Equal(t, "ana", m.Speaker)
	require.Empty(t, callTool(t, cs, "update_memory", map[string]any{"id": added.ID, "text": "The deploy key rotates every 30 days; ticket OPS-1182"}, &m))
	assert.Equal(t, "The deploy key rotates every 30 days; ticket OPS-1182", m.Text)
	assert.Equal(t, "ana", m.Speaker)
	assert.Equal(t, added.ID, m.Supersedes, "an update is a new version")
	var hr HistoryResult
	require.Empty(t, callTool(t, cs, "memory_history", map[string]any{"id": m.ID}, &hr))
	require.Len(t, hr.Versions, 2)
	assert.Equal(t, added.ID, hr.Versions[0].ID, "oldest first")
	assert.Equal(t, m.ID, hr.Versions[0].SupersededBy)
	require.Empty(t, callTool(t, cs, "search_memory", map[string]any{"query": "deploy key rotates", "user_id": "ana", "min_relevance": -1}, &sr))
	for _, h := range sr.Hits {
		assert.NotEqual(t, added.ID, h.ID, "the old version is not current")
	}
	msg := callTool(t, cs, "update_memory", map[string]any{"id": added.ID, "text": "every 60 days"}, nil)
	assert.True(t, strings.HasPrefix(msg, CodeSuperseded+": "), msg)

	// The same text again is stored once.
	var again AddResult
	require.Empty(t, callTool(t, cs, "add_memory", map[string]any{"user_id": "ana", "text": "the deploy key rotates every 30 days; ticket OPS-1182."}, &again))
	assert.True(t, again.Duplicate)
	assert.Equal(t, m.ID, again.ID)

	var lr ListResult
	require.Empty(t, callTool(t, cs, "list_memories", map[string]any{"namespace": "user:ana", "limit": 10}, &lr))
	assert.Equal(t, 4, lr.Total, "the old version is listed too, as history")
	require.Len(t, lr.Memories, 4)
	assert.Equal(t, added.ID, lr.Memories[0].ID, "oldest first")

	var del DeleteResult
	require.Empty(t, callTool(t, cs, "delete_memory", map[string]any{"id": added.ID}, &del))
	assert.Equal(t, added.ID, del.Deleted)

	// Errors are tool errors starting with the stable code.
	for _, tc := range []struct {
		tool string
		args map[string]any
		code string
	}{
		{"get_memory", map[string]any{"id": added.ID}, CodeNotFound},
		{"delete_memory", map[string]any{"id": added.ID}, CodeNotFound},
		{"update_memory", map[string]any{"id": "nope", "text": "x"}, CodeNotFound},
		{"get_memory", map[string]any{}, CodeInvalidArgument},
		{"add_memory", map[string]any{"text": "!!"}, CodeInvalidArgument},
		{"add_memory", map[string]any{}, CodeInvalidArgument},
		{"search_memory", map[string]any{"query": "x", "mode": "fuzzy"}, CodeInvalidArgument},
		{"search_memory", map[string]any{"query": "x", "k": 5000}, CodeInvalidArgument},
		{"list_memories", map[string]any{"from": "last week"}, CodeInvalidArgument},
	} {
		msg := callTool(t, cs, tc.tool, tc.args, nil)
		assert.True(t, strings.HasPrefix(msg, tc.code+": "), "%s %v: %q", tc.tool, tc.args, msg)
	}
	// Arguments of the wrong type are refused by the schema.
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "search_memory", Arguments: map[string]any{"query": "x", "k": "five"}})
	if err == nil {
		assert.True(t, res.IsError)
	}
}

func TestMCP_StreamableHTTP(t *testing.T) {
	ts := start(t, nil)
	cs, err := connectHTTP(t, ts, "")
	require.NoError(t, err)
	exerciseMCP(t, cs)
	assert.Equal(t, 3, ts.mem.Len(), "two messages and the updated memory's new version")

	r := ts.call(t, "GET", "/metrics", "", nil)
	assert.Contains(t, string(r.body), `agentmem_mcp_tool_calls_total{outcome="ok",tool="add_memory"} 3`)
	assert.Contains(t, string(r.body), `agentmem_mcp_tool_calls_total{outcome="not_found",tool="get_memory"} 1`)
}

func TestMCP_Stdio(t *testing.T) {
	mem := newMemory(t)
	srv, err := New(mem, WithLogger(quiet))
	require.NoError(t, err)
	exerciseMCP(t, connectPipe(t, srv))
	assert.Equal(t, 3, mem.Len(), "two messages and the updated memory's new version")
}

func TestMCP_ReadOnlyOffersOnlyReads(t *testing.T) {
	srv, err := New(newMemory(t), WithLogger(quiet), WithReadOnly())
	require.NoError(t, err)
	tools, err := connectPipe(t, srv).ListTools(t.Context(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		require.NotNil(t, tool.Annotations, tool.Name)
		assert.True(t, tool.Annotations.ReadOnlyHint, tool.Name)
		assert.True(t, tool.Annotations.IdempotentHint, "%s: a read may be repeated", tool.Name)
	}
	assert.ElementsMatch(t, []string{"search_memory", "get_memory", "list_memories", "memory_history"}, names)
}

// TestMCP_EveryToolAnnotated: every tool says whether it writes, destroys
// and may be repeated, and that it acts on this memory only.
func TestMCP_EveryToolAnnotated(t *testing.T) {
	srv, err := New(newMemory(t), WithLogger(quiet))
	require.NoError(t, err)
	tools, err := connectPipe(t, srv).ListTools(t.Context(), nil)
	require.NoError(t, err)
	for _, tool := range tools.Tools {
		a := tool.Annotations
		require.NotNil(t, a, tool.Name)
		require.NotNil(t, a.OpenWorldHint, tool.Name)
		assert.False(t, *a.OpenWorldHint, tool.Name)
		if !a.ReadOnlyHint {
			require.NotNil(t, a.DestructiveHint, tool.Name)
		}
	}
}

func TestMCP_AuthAndPinning(t *testing.T) {
	ts := start(t, nil, WithToken("admin", "*"), WithToken("bob-token", "user:bob"))
	res, err := http.Post(ts.url+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
	assert.Equal(t, `Bearer realm="agentmem"`, res.Header.Get("WWW-Authenticate"), "a 401 says which scheme to use")
	_, err = connectHTTP(t, ts, "")
	assert.Error(t, err, "no token: the connection is refused")
	_, err = connectHTTP(t, ts, "guess")
	assert.Error(t, err, "a wrong token is refused")

	admin, err := connectHTTP(t, ts, "admin")
	require.NoError(t, err)
	var alice AddResult
	require.Empty(t, callTool(t, admin, "add_memory", map[string]any{"text": "alice's locker code is 4417", "user_id": "alice"}, &alice))

	bob, err := connectHTTP(t, ts, "bob-token")
	require.NoError(t, err)
	var mine AddResult
	require.Empty(t, callTool(t, bob, "add_memory", map[string]any{"text": "bob's locker code is 9902"}, &mine))
	rec, _ := ts.mem.Get(mine.ID)
	assert.Equal(t, "user:bob", rec.Namespace, "a pinned token writes into its namespace")

	var sr SearchResult
	require.Empty(t, callTool(t, bob, "search_memory", map[string]any{"query": "locker code", "k": 10}, &sr))
	require.Len(t, sr.Hits, 1)
	assert.Equal(t, mine.ID, sr.Hits[0].ID)
	for _, tc := range []struct {
		tool string
		args map[string]any
		code string
	}{
		{"search_memory", map[string]any{"query": "locker", "user_id": "alice"}, CodeForbidden},
		{"add_memory", map[string]any{"text": "x", "namespace": "user:alice"}, CodeForbidden},
		{"list_memories", map[string]any{"namespace": "user:alice"}, CodeForbidden},
		{"get_memory", map[string]any{"id": alice.ID}, CodeNotFound},
		{"update_memory", map[string]any{"id": alice.ID, "text": "x"}, CodeNotFound},
		{"delete_memory", map[string]any{"id": alice.ID}, CodeNotFound},
	} {
		msg := callTool(t, bob, tc.tool, tc.args, nil)
		assert.True(t, strings.HasPrefix(msg, tc.code+": "), "%s %v: %q", tc.tool, tc.args, msg)
	}
	rec, ok := ts.mem.Get(alice.ID)
	require.True(t, ok)
	assert.Equal(t, "alice's locker code is 4417", rec.Text)
}

// buildAgentmem builds ./cmd/agentmem once per test binary, into
// builtDir, which TestMain removes after the tests (every test that uses
// the binary, in every run of -count).
var buildAgentmem = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "agentmem-server-test-")
	if err != nil {
		return "", err
	}
	builtDir = dir
	bin := filepath.Join(dir, "agentmem")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/agentmem").CombinedOutput()
	if err != nil {
		return "", &buildError{string(out), err}
	}
	return bin, nil
})

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string {
	return "go build ./cmd/agentmem: " + e.err.Error() + "\n" + e.out
}

// agentmemBinary returns the built CLI, failing the test if the build has
// no serve command: the MCP server is reached through it.
func agentmemBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the CLI")
	}
	bin, err := buildAgentmem()
	require.NoError(t, err)
	out, err := exec.Command(bin, "serve", "--help").CombinedOutput()
	require.NoError(t, err, "agentmem serve --help: %s", out)
	return bin
}

func TestMCP_StdioSubprocess(t *testing.T) {
	bin := agentmemBinary(t)
	store := filepath.Join(t.TempDir(), "mem")
	c := mcp.NewClient(&mcp.Implementation{Name: "agentmem-test", Version: "1"}, nil)
	cmd := exec.Command(bin, "serve", "--stdio", "--store", store)
	cs, err := c.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	var added AddResult
	require.Empty(t, callTool(t, cs, "add_memory", map[string]any{"text": "the spare key is under the blue pot", "user_id": "kim"}, &added))
	var sr SearchResult
	require.Empty(t, callTool(t, cs, "search_memory", map[string]any{"query": "spare key", "user_id": "kim"}, &sr))
	require.NotEmpty(t, sr.Hits)
	assert.Equal(t, added.ID, sr.Hits[0].ID)
	require.NoError(t, cs.Close()) // closes stdin: the server stops and closes the store

	// The write is durable: a second process finds it.
	cmd = exec.Command(bin, "serve", "--stdio", "--store", store)
	cs, err = c.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs.Close()
	var m Memory
	require.Empty(t, callTool(t, cs, "get_memory", map[string]any{"id": added.ID}, &m))
	assert.Equal(t, "the spare key is under the blue pot", m.Text)
}
