package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// toolsListBefore is the size of tools/list's result (JSON, compact) at
// 07982cc, before aliases left the published schemas (6 tools, 1,943
// bytes a tool); toolsListMax bounds it now: 7 tools (memory_history came
// with facts that change, and validity fields with it), 14,126 bytes
// measured.
const (
	toolsListBefore = 11656
	toolsListMax    = 15000
)

// TestMCP_ToolSchemas: the published input schemas mark the required
// arguments, leave the aliases out, give every property one type (no
// ["null", "array"]), and tools/list stays small.
func TestMCP_ToolSchemas(t *testing.T) {
	cs := connectPipe(t, mustServer(t))
	res, err := cs.ListTools(t.Context(), &mcp.ListToolsParams{})
	require.NoError(t, err)
	b, err := json.Marshal(res)
	require.NoError(t, err)
	t.Logf("tools/list: %d bytes for %d tools (%d for 6 before aliases left)", len(b), len(res.Tools), toolsListBefore)
	assert.Less(t, len(b), toolsListMax)
	assert.NotContains(t, string(b), `"null"`, "one type per property")
	require.Len(t, res.Tools, len(toolArgs))
	for _, tool := range res.Tools {
		var s struct {
			Properties map[string]any `json:"properties"`
			Required   []string       `json:"required"`
		}
		sb, err := json.Marshal(tool.InputSchema)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(sb, &s))
		args := toolArgs[tool.Name]
		assert.ElementsMatch(t, args.required, s.Required, tool.Name)
		for _, a := range args.aliases {
			assert.NotContains(t, s.Properties, a, "%s publishes alias %s", tool.Name, a)
		}
	}
}

// TestMCP_LenientArguments: aliases are still accepted, a number where an
// id or namespace string is meant is its text (user_id: 42), a numeric
// string where a number is meant is the number, and what does not fit is
// an invalid_argument error that names the argument and what it wants
// (k: "notanumber" said "type: <invalid reflect.Value> has type null").
func TestMCP_LenientArguments(t *testing.T) {
	cs := connectPipe(t, mustServer(t))
	var added AddResult
	require.Empty(t, callTool(t, cs, "add_memory", map[string]any{"content": "Badge number NW-20417", "user_id": 42}, &added))
	var m Memory
	require.Empty(t, callTool(t, cs, "get_memory", map[string]any{"memory_id": added.ID}, &m))
	assert.Equal(t, "user:42", m.Namespace)
	assert.Equal(t, "Badge number NW-20417", m.Text)

	var sr SearchResult
	require.Empty(t, callTool(t, cs, "search_memory", map[string]any{"q": "badge", "user_id": 42, "k": "3", "min_score": nil}, &sr))
	require.Len(t, sr.Hits, 1)
	assert.Equal(t, added.ID, sr.Hits[0].ID)

	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"query": "x", "k": "notanumber"}, `invalid_argument: server: k: want an integer, got string "notanumber"`},
		{map[string]any{"query": "x", "explain": "yes"}, `explain: want true or false`},
		{map[string]any{"query": "x", "tags": "a"}, `tags: want an array`},
		{map[string]any{"query": "x", "colour": "red"}, `unknown argument "colour" (known: `},
	} {
		msg := callTool(t, cs, "search_memory", tc.args, nil)
		assert.True(t, strings.HasPrefix(msg, CodeInvalidArgument+": "), "%v: %q", tc.args, msg)
		assert.Contains(t, msg, tc.want, "%v", tc.args)
	}
}

func mustServer(t *testing.T) *Server {
	t.Helper()
	srv, err := New(newMemory(t))
	require.NoError(t, err)
	return srv
}
