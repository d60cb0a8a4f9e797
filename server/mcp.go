package server

import (
	"cmp"
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpInstructions tell a model what the server is for.
const mcpInstructions = `agentmem is a long-term memory. Save facts, preferences, decisions and conversation turns with add_memory; before answering, look up what you may already know with search_memory (hybrid: meaning and exact words, so names, codes and numbers are found too). Scope everything with namespace (or user_id / agent_id). Ids come back from add_memory and search_memory; use them with get_memory, update_memory and delete_memory.`

// mcpServer returns an MCP server whose tools act as the call's principal:
// the bearer token's over HTTP with tokens, fallback otherwise (nil:
// refuse every call).
func (s *Server) mcpServer(fallback *principal) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "agentmem", Title: "agentmem memory", Version: s.version},
		&mcp.ServerOptions{Instructions: mcpInstructions, Logger: s.log, Capabilities: &mcp.ServerCapabilities{}})
	// Every tool acts on this memory only (a closed world); reads change
	// nothing and may be repeated.
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)}
	addTool(s, srv, fallback, &mcp.Tool{Name: "search_memory", Annotations: ro,
		Description: "Search the memory for what is relevant to a question or topic. Returns the best memories first, each with its id, text, relevance, time, namespace and the snippets that matched, or none with a reason: nothing is relevant, the namespace holds no memories (check namespace or user_id), or max_tokens is too small for any relevant memory. Use it before answering anything that may depend on what was said or learned earlier."},
		func(ctx context.Context, p *principal, in SearchRequest) (SearchResult, error) {
			return s.search(ctx, p, &in)
		})
	addTool(s, srv, fallback, &mcp.Tool{Name: "get_memory", Annotations: ro,
		Description: "Get one memory by its id."},
		func(ctx context.Context, p *principal, in IDRequest) (Memory, error) {
			return s.get(ctx, p, cmp.Or(in.ID, in.MemoryID))
		})
	addTool(s, srv, fallback, &mcp.Tool{Name: "memory_history", Annotations: ro,
		Description: "Get every version of a memory, oldest first."},
		func(ctx context.Context, p *principal, in IDRequest) (HistoryResult, error) {
			return s.history(ctx, p, cmp.Or(in.ID, in.MemoryID))
		})
	addTool(s, srv, fallback, &mcp.Tool{Name: "list_memories", Annotations: ro,
		Description: "List stored memories in time order (oldest first), optionally of one namespace and time range, one page at a time (offset, limit); total is how many match."},
		func(ctx context.Context, p *principal, in ListRequest) (ListResult, error) {
			return s.list(ctx, p, &in)
		})
	if s.readOnly {
		return srv
	}
	addTool(s, srv, fallback, &mcp.Tool{Name: "add_memory", Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
		Description: "Remember something: a fact, a preference, a decision, a note (text), or conversation turns (messages, each stored as its own memory). Returns the new memory ids; a text stored already is not stored twice (duplicate: true), and similar lists memories that say nearly the same. Give a namespace (or user_id / agent_id) to keep users and agents apart, and time when it was said if not now."},
		func(ctx context.Context, p *principal, in AddRequest) (AddResult, error) { return s.add(ctx, p, &in) })
	addTool(s, srv, fallback, &mcp.Tool{Name: "update_memory", Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: false, OpenWorldHint: ptr(false)},
		Description: "Change a memory when what it says changed (a move, a new job): stores a new version (the fields given, the others kept) and keeps the old one as history. Returns the new version, with a new id."},
		func(ctx context.Context, p *principal, in UpdateRequest) (Memory, error) {
			return s.update(ctx, p, cmp.Or(in.ID, in.MemoryID), &in)
		})
	addTool(s, srv, fallback, &mcp.Tool{Name: "delete_memory", Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: false, OpenWorldHint: ptr(false)},
		Description: "Forget a memory by its id, for good."},
		func(ctx context.Context, p *principal, in IDRequest) (DeleteResult, error) {
			id := cmp.Or(in.ID, in.MemoryID)
			return DeleteResult{Deleted: id}, s.delete(ctx, p, id)
		})
	return srv
}

// addTool adds a typed tool whose handler gets the call's principal, and
// whose errors start with their stable code; calls are counted and timed.
// Its input schema leaves out the aliases and marks the required
// arguments (toolArgs); its arguments are decoded leniently (decodeArgs).
func addTool[In, Out any](s *Server, srv *mcp.Server, fallback *principal, t *mcp.Tool,
	h func(context.Context, *principal, In) (Out, error)) {
	in, err := inputSchema[In](t.Name)
	if err != nil {
		panic(err) // a programming error, found by every test
	}
	out, err := outputSchema[Out]()
	if err != nil {
		panic(err)
	}
	tt := *t
	tt.InputSchema, tt.OutputSchema = in, out
	srv.AddTool(&tt, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := time.Now()
		var p *principal
		if req.Extra != nil {
			p = mcpPrincipal(req.Extra.TokenInfo, fallback)
		} else {
			p = fallback
		}
		var args In
		var res Out
		err := decodeArgs(req.Params.Arguments, &args)
		if err == nil {
			res, err = h(ctx, p, args)
		}
		outcome := "ok"
		var result mcp.CallToolResult
		if err == nil {
			var b []byte
			if b, err = json.Marshal(res); err == nil {
				result.StructuredContent = json.RawMessage(b)
				result.Content = []mcp.Content{&mcp.TextContent{Text: string(b)}}
			}
		}
		if err != nil {
			_, outcome = classify(err)
			result.SetError(toolError(err))
		}
		s.metrics.tool(t.Name, outcome, time.Since(start))
		return &result, nil
	})
}

func ptr[T any](v T) *T { return &v }
