package server

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	_ "embed"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// openAPI is the OpenAPI 3.1 document of the HTTP API, served at
// /openapi.json (TestOpenAPIMatchesRoutes keeps it in step with routes).
//
//go:embed openapi.json
var openAPI []byte

// apiRoutes are the routes of the JSON API, method and pattern, as
// registered; the OpenAPI document describes exactly these.
var apiRoutes = []string{
	"POST /v1/memories",
	"GET /v1/memories",
	"GET /v1/memories/{id}",
	"PUT /v1/memories/{id}",
	"GET /v1/memories/{id}/history",
	"DELETE /v1/memories/{id}",
	"POST /v1/search",
	"GET /v1/stats",
	"GET /healthz",
	"GET /readyz",
	"GET /openapi.json",
	"GET /metrics",
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	api := func(pattern string, h http.HandlerFunc) {
		mux.Handle(pattern, s.requireToken(h))
	}
	api("POST /v1/memories", s.handleAdd)
	api("GET /v1/memories", s.handleList)
	api("GET /v1/memories/{id}", s.handleGet)
	api("PUT /v1/memories/{id}", s.handleUpdate)
	api("GET /v1/memories/{id}/history", func(w http.ResponseWriter, r *http.Request) {
		res, err := s.history(r.Context(), principalFrom(r.Context()), r.PathValue("id"))
		s.respond(w, r, res, err)
	})
	api("DELETE /v1/memories/{id}", s.handleDelete)
	api("POST /v1/search", s.handleSearch)
	api("GET /v1/stats", s.handleStats)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		// A store that refuses writes after a failure it cannot undo
		// (longterm.Memory.Err: a write panicked) makes the server unfit
		// to live: restarting reopens the store from its log.
		if f, ok := s.store.(failer); ok {
			if err := f.Err(); err != nil {
				writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "failed", "error": err.Error()})
				return
			}
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", s.handleReady)
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(openAPI)
	})
	mux.Handle("GET /metrics", s.requireToken(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !principalFrom(r.Context()).unpinned() {
			s.writeError(w, r, errForbidden)
			return
		}
		promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	})))

	// MCP, streamable HTTP, stateless: every POST is a whole exchange, so
	// any number of clients and server replicas need no session state.
	var mcpHandler http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcpHTTP },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, MaxRequestBodyBytes: s.maxBody, Logger: s.log})
	fallback := anyone
	if len(s.tokens) > 0 {
		fallback = nil // every call must carry a token's principal
		inner := auth.RequireBearerToken(s.verifyMCP, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(mcpHandler)
		// The SDK's middleware answers 401 without a challenge: say, as
		// the API does, which scheme the client must use.
		mcpHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if s.lookup(bearer(r)) == nil {
				w.Header().Set("WWW-Authenticate", `Bearer realm="agentmem"`)
				s.writeError(w, r, &apiError{http.StatusUnauthorized, CodeUnauthorized, "a valid bearer token is required (Authorization: Bearer …)"})
				return
			}
			inner.ServeHTTP(w, r)
		})
	}
	s.mcpHTTP = s.mcpServer(fallback)
	mux.Handle("/mcp", mcpHandler)

	// Everything else: a JSON 404, or 405 for a known path.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if allow := allowed(r.URL.Path); allow != "" {
			w.Header().Set("Allow", allow)
			s.writeError(w, r, &apiError{http.StatusMethodNotAllowed, CodeMethodNotAllowed, fmt.Sprintf("%s %s: allowed: %s", r.Method, r.URL.Path, allow)})
			return
		}
		s.writeError(w, r, &apiError{http.StatusNotFound, CodeNotFound, "no route " + r.URL.Path})
	})
	return s.instrument(mux)
}

// allowed returns the methods the API serves path with ("" if none).
func allowed(path string) string {
	var methods []string
	for _, rt := range apiRoutes {
		method, pattern, _ := strings.Cut(rt, " ")
		if matchPattern(pattern, path) {
			methods = append(methods, method)
		}
	}
	return strings.Join(methods, ", ")
}

// matchPattern matches path against a route pattern whose wildcards are
// whole segments.
func matchPattern(pattern, path string) bool {
	ps, qs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(qs) {
		return false
	}
	for i := range ps {
		if strings.HasPrefix(ps[i], "{") {
			if qs[i] == "" {
				return false
			}
		} else if ps[i] != qs[i] {
			return false
		}
	}
	return true
}

// statusWriter records the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// instrument counts and times every request by route pattern, and logs it
// at Debug.
func (s *Server) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		route := r.Pattern
		if route == "" || route == "/" {
			route = "other" // unknown paths must not blow up the label set
		}
		status := cmp.Or(sw.status, http.StatusOK)
		d := time.Since(start)
		s.metrics.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
		s.metrics.latency.WithLabelValues(route).Observe(d.Seconds())
		s.log.Debug("request", "method", r.Method, "route", route, "status", status, "duration", d)
	})
}

// decode reads r's JSON body into v: at most the server's body limit, one
// JSON value, no unknown fields.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) error {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return fmt.Errorf("server: request body over %d bytes: %w", mbe.Limit, err)
		}
		return &apiError{http.StatusBadRequest, CodeBadJSON, "reading the request body: " + err.Error()}
	}
	return decodeJSON(data, v)
}

// decodeRequest decodes the request body into a T (decode); on an error it
// writes the error response and reports false.
func decodeRequest[T any](s *Server, w http.ResponseWriter, r *http.Request) (T, bool) {
	var req T
	if err := s.decode(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return req, false
	}
	return req, true
}

// decodeJSON decodes the JSON object in data into v, refusing invalid
// UTF-8 (which encoding/json would silently replace, and the store refuses
// rather than repairs), unknown fields and trailing data, with errors that
// say what was wrong.
func decodeJSON(data []byte, v any) error {
	if !utf8.Valid(data) {
		return invalid("the request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return &apiError{http.StatusBadRequest, CodeBadJSON, "empty body: want a JSON object"}
		}
		return &apiError{http.StatusBadRequest, CodeBadJSON, "request body: " + err.Error()}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &apiError{http.StatusBadRequest, CodeBadJSON, "request body: data after the JSON object"}
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// writeError answers with err as JSON, its status and code decided by
// classify; internal errors are logged (their text may name files).
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, code := classify(err)
	msg := err.Error()
	var ae *apiError
	if errors.As(err, &ae) {
		msg = ae.msg
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(RetryAfter))
	}
	if status >= 500 && status != http.StatusServiceUnavailable && status != http.StatusNotImplemented {
		s.log.Error("request failed", "method", r.Method, "route", r.Pattern, "err", err)
		msg = "internal error (see the server log)"
	}
	writeJSON(w, status, errorBody{Error{Code: code, Message: msg}})
}

func (s *Server) handleAdd(w http.ResponseWriter, r *http.Request) {
	req, ok := decodeRequest[AddRequest](s, w, r)
	if !ok {
		return
	}
	res, err := s.add(r.Context(), principalFrom(r.Context()), &req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/memories/"+url.PathEscape(res.ID))
	status := http.StatusCreated
	if res.Duplicate {
		status = http.StatusOK // stored already: nothing was created
	}
	writeJSON(w, status, res)
}

func (s *Server) handleGet(w http.ResponseWriter, r *http.Request) {
	m, err := s.get(r.Context(), principalFrom(r.Context()), r.PathValue("id"))
	s.respond(w, r, m, err)
}

// respond writes a handler's result, res with status 200 OK, or its error.
func (s *Server) respond(w http.ResponseWriter, r *http.Request, res any, err error) {
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) handleUpdate(w http.ResponseWriter, r *http.Request) {
	req, ok := decodeRequest[UpdateRequest](s, w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	if bodyID := cmp.Or(req.ID, req.MemoryID); bodyID != "" && bodyID != id {
		s.writeError(w, r, invalid(fmt.Sprintf("the body's id %q is not the path's %q", bodyID, id)))
		return
	}
	m, err := s.update(r.Context(), principalFrom(r.Context()), id, &req)
	s.respond(w, r, m, err)
}

func (s *Server) handleDelete(w http.ResponseWriter, r *http.Request) {
	if err := s.delete(r.Context(), principalFrom(r.Context()), r.PathValue("id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) {
	req, ok := decodeRequest[SearchRequest](s, w, r)
	if !ok {
		return
	}
	res, err := s.search(r.Context(), principalFrom(r.Context()), &req)
	s.respond(w, r, res, err)
}

func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	req, err := listRequestFromQuery(r.URL.Query())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	res, err := s.list(r.Context(), principalFrom(r.Context()), &req)
	s.respond(w, r, res, err)
}

// listQueryParams are the query parameters GET /v1/memories takes.
var listQueryParams = []string{"namespace", "user_id", "agent_id", "from", "to", "offset", "limit", "page_size"}

// listRequestFromQuery reads a ListRequest from query parameters; an
// unknown parameter or a malformed number is invalid.
func listRequestFromQuery(q url.Values) (ListRequest, error) {
	for k := range q {
		if !slices.Contains(listQueryParams, k) {
			return ListRequest{}, invalid(fmt.Sprintf("unknown query parameter %q (known: %s)", k, strings.Join(listQueryParams, ", ")))
		}
	}
	req := ListRequest{Scope: Scope{Namespace: q.Get("namespace"), UserID: q.Get("user_id"), AgentID: q.Get("agent_id")},
		From: q.Get("from"), To: q.Get("to")}
	for _, f := range []struct {
		name string
		dst  *int
	}{{"offset", &req.Offset}, {"limit", &req.Limit}, {"page_size", &req.PageSize}} {
		if v := q.Get(f.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return req, invalid(fmt.Sprintf("%s %q: want an integer", f.name, v))
			}
			*f.dst = n
		}
	}
	return req, nil
}

func (s *Server) handleStats(w http.ResponseWriter, r *http.Request) {
	st, err := s.stats(r.Context(), principalFrom(r.Context()))
	s.respond(w, r, st, err)
}
