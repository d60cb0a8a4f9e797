// Package server serves an agentmem long-term memory to many clients at
// once: one process owns the store and answers over MCP (the Model Context
// Protocol, for LLM clients) and a JSON HTTP API.
//
//	srv, err := server.New(mem, server.WithTokens(toks))
//	err = srv.ListenAndServe(ctx, "127.0.0.1:7437", 30*time.Second) // until ctx is done
//	err = mem.Close()                                                // then close the store
//
// # Transports
//
// One HTTP listener serves the JSON API under /v1, MCP over streamable HTTP
// at /mcp (stateless: every POST is a whole exchange), Prometheus metrics at
// /metrics, liveness at /healthz (503 once the store refuses writes for
// good, see longterm.Memory.Err), readiness at /readyz (503 while the
// store's database cannot be reached as well) and the API's OpenAPI 3.1
// document at /openapi.json. While a PostgreSQL store's database cannot be
// reached, every call that needs it answers 503 unavailable with
// Retry-After (an MCP tool's error starts "unavailable (retry in N s)"),
// /v1/stats included, and the server recovers by itself when the database
// is back. Server.ServeStdio serves MCP over a pipe, for MCP clients
// that spawn their servers ("agentmem serve --stdio").
//
// # Tools and routes
//
//	MCP tool        HTTP route                      what
//	add_memory      POST   /v1/memories             remember a text, or messages (one memory each, atomically)
//	search_memory   POST   /v1/search               hybrid search: query, namespace, k, mode, time range, tags/metadata
//	get_memory      GET    /v1/memories/{id}        one memory
//	list_memories   GET    /v1/memories             a page of memories in time order (namespace, from, to, offset, limit)
//	update_memory   PUT    /v1/memories/{id}        replace the fields given, keep the others
//	delete_memory   DELETE /v1/memories/{id}        forget
//	                GET    /v1/stats                store size
//
// Requests take the argument names models commonly guess as well as the
// documented ones: q for query, limit and top_k for k, content for text,
// memory_id for id, user_id and agent_id for the namespaces "user:ID" and
// "agent:ID". Metadata {"k": "v"} is stored as the tag "k=v" and read back
// from tags of that form; a search that filters by tags or metadata asks the
// store for 5×k memories and keeps the first k that match, so it can return
// fewer than k when matching memories rank low.
//
// # Errors
//
// Every HTTP error is JSON, {"error": {"code": "not_found", "message": "…"}},
// with a stable code decided by the library's sentinels (errors.Is): not
// found → 404 not_found; invalid input (empty text, bad UTF-8, k out of
// range, malformed time) → 400 invalid_argument; a body that is not the
// route's JSON (unknown field, wrong type, trailing data) → 400 bad_json; a
// body over the limit → 413 too_large; a closed store, or one whose
// database cannot be reached (memory.ErrUnavailable) → 503 unavailable
// with Retry-After; no
// or an unknown token → 401 unauthorized; a namespace the token is not
// pinned to → 403 forbidden; a write to a read-only server → 403 read_only;
// anything else → 500 internal (logged, not echoed). MCP tool errors are
// tool results with IsError set and text starting with the same code.
//
// # Security
//
// ListenAndServe binds loopback (DefaultAddr) unless told otherwise and
// refuses a non-loopback address without a bearer token (ErrInsecure).
// Tokens (WithToken, ParseTokens, EnvTokens) are compared in constant time
// by their SHA-256 and never logged; a token pinned to a namespace can
// neither read nor write outside it, over HTTP and MCP alike: a request
// without a namespace works in the pinned one, a request naming another is
// 403 forbidden, and another namespace's memory is 404 not_found by id
// (existence is not revealed). A pinned token adding a memory with an id
// of its choice may use one of its memories' ids or a new one under its
// namespace ("user:42/…"); any other id is 403 forbidden whether another
// namespace holds it or not. /v1/stats and /metrics need an unpinned
// token. The MCP endpoint has the SDK's DNS-rebinding protection.
//
// # Durability and concurrency
//
// A write is acknowledged only after the store made it durable (longterm
// fsyncs each Add; AddBatch once per batch). Serve shuts down gracefully
// when its context is done: it stops accepting, lets in-flight requests
// finish, and returns; the caller then closes the store. Searches run in
// parallel; writes are serialised by the store.
package server
