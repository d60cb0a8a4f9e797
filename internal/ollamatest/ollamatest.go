// Package ollamatest is an in-process stand-in for an Ollama server, for
// tests: an httptest server speaking Ollama's real chat wire protocol
// (github.com/ollama/ollama/api), so that a client under test goes through
// the same HTTP, JSON and NDJSON streaming it would against `ollama serve`.
// Tests that use it say so in their names (OllamaHTTP, FakeServer).
package ollamatest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
)

// Reply answers one decoded chat request, typically with Stream.
type Reply func(w http.ResponseWriter, r *http.Request, req api.ChatRequest)

// Server answers HEAD or GET / as Ollama's heartbeat does and POST
// /api/chat with its Reply; anything else is a 404. It records every chat
// request it decoded.
type Server struct {
	*httptest.Server
	mu    sync.Mutex
	reqs  []api.ChatRequest
	reply Reply
}

// New starts a server that answers chats with reply (Echo if nil), closed
// when the test ends.
func New(t testing.TB, reply Reply) *Server {
	t.Helper()
	if reply == nil {
		reply = Echo
	}
	s := &Server{reply: reply}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/" && (r.Method == http.MethodHead || r.Method == http.MethodGet):
		_, _ = w.Write([]byte("Ollama is running"))
	case r.URL.Path == "/api/chat" && r.Method == http.MethodPost:
		var req api.ChatRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, `{"error":"bad json"}`, http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, req)
		s.mu.Unlock()
		s.reply(w, r, req)
	default:
		http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
	}
}

// Requests returns the chat requests received so far, oldest first.
func (s *Server) Requests() []api.ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]api.ChatRequest(nil), s.reqs...)
}

// APIClient returns an Ollama client for the server.
func (s *Server) APIClient() *api.Client {
	u, err := url.Parse(s.URL)
	if err != nil {
		panic(err) // httptest's own URL
	}
	return api.NewClient(u, s.Client())
}

// Stream writes chunks as the real server does: one JSON object per line,
// each flushed, and (with done) a last one with Done set.
func Stream(w http.ResponseWriter, model string, chunks []string, done bool) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	for _, c := range chunks {
		_ = enc.Encode(api.ChatResponse{Model: model, CreatedAt: time.Now(), Message: api.Message{Role: "assistant", Content: c}})
		w.(http.Flusher).Flush()
	}
	if done {
		_ = enc.Encode(api.ChatResponse{Model: model, CreatedAt: time.Now(), Message: api.Message{Role: "assistant"}, Done: true, DoneReason: "stop"})
	}
}

// Echo answers "You said: <the last message>" in three chunks.
func Echo(w http.ResponseWriter, _ *http.Request, req api.ChatRequest) {
	in := ""
	if n := len(req.Messages); n > 0 {
		in = req.Messages[n-1].Content
	}
	Stream(w, req.Model, []string{"You ", "said: ", in}, true)
}
