package ollama_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/agent"
	"github.com/agentmem/agentmem/agent/ollama"
	"github.com/agentmem/agentmem/internal/ollamatest"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/window"
)

// fakeOllama is ollamatest's server speaking Ollama's real /api/chat
// protocol. The tests that use it have OllamaHTTP in their names.
type fakeOllama struct {
	*ollamatest.Server
	t *testing.T
}

func newFakeOllama(t *testing.T, reply ollamatest.Reply) *fakeOllama {
	t.Helper()
	return &fakeOllama{ollamatest.New(t, reply), t}
}

// model returns the adapter for the model called name on the server.
func (f *fakeOllama) model(name string, opts ...ollama.Option) *ollama.Model {
	m, err := ollama.New(f.APIClient(), name, opts...)
	require.NoError(f.t, err)
	return m
}

// fakeMemory is a memory.Memory that records segments and returns fixed hits.
type fakeMemory struct {
	mu       sync.Mutex
	segments []string
	hits     []memory.Hit
	failSrch error
	failUpd  error
}

func (m *fakeMemory) Update(_ context.Context, s string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failUpd != nil {
		return m.failUpd
	}
	m.segments = append(m.segments, s)
	return nil
}

func (m *fakeMemory) Search(context.Context, string) ([]memory.Hit, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hits, m.failSrch
}

func (m *fakeMemory) all() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.segments...)
}

func TestChat_OllamaHTTP_StreamsAndRemembers(t *testing.T) {
	f := newFakeOllama(t, ollamatest.Echo)
	mem := &fakeMemory{}
	w, err := window.New(window.WithMaxRounds(1), window.WithEvictTo(mem))
	require.NoError(t, err)
	var out bytes.Buffer
	a, err := agent.New(f.model("llama3.2", ollama.WithOptions(map[string]any{"temperature": 0.0})),
		agent.WithSystem("Be brief."), agent.WithWindow(w), agent.WithMemory(mem), agent.WithStream(&out))
	require.NoError(t, err)

	answer, err := a.Chat(t.Context(), "hello")
	require.NoError(t, err)
	assert.Equal(t, "You said: hello", answer)
	assert.Equal(t, "You said: hello\n", out.String(), "streamed as it arrived")

	answer, err = a.Chat(t.Context(), "and again")
	require.NoError(t, err)
	assert.Equal(t, "You said: and again", answer)

	reqs := f.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, "llama3.2", reqs[0].Model)
	require.NotNil(t, reqs[0].Stream)
	assert.True(t, *reqs[0].Stream)
	assert.Equal(t, map[string]any{"temperature": 0.0}, reqs[0].Options)
	assert.Equal(t, []api.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "hello"}}, reqs[0].Messages)
	assert.Equal(t, []api.Message{
		{Role: "system", Content: "Be brief."},
		{Role: "user", Content: "hello"}, {Role: "assistant", Content: "You said: hello"},
		{Role: "user", Content: "and again"},
	}, reqs[1].Messages, "the window's round goes into the next prompt")

	rs := w.Rounds()
	require.Len(t, rs, 1)
	assert.Equal(t, "and again", rs[0].User)
	assert.Equal(t, []string{"User: hello\nAssistant: You said: hello"}, mem.all(), "the evicted round settled into long-term memory")
}

func TestChat_OllamaHTTP_RecalledMemoriesInPrompt(t *testing.T) {
	f := newFakeOllama(t, ollamatest.Echo)
	stored := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	mem := &fakeMemory{hits: []memory.Hit{{Text: "User: my project is Falcon\nAssistant: Noted.", Time: stored, Score: 0.8}}}
	a, err := agent.New(f.model("m"), agent.WithMemory(mem))
	require.NoError(t, err)
	_, err = a.Chat(t.Context(), "what is my project?")
	require.NoError(t, err)
	sys := f.Requests()[0].Messages[0]
	assert.Equal(t, "system", sys.Role)
	assert.Contains(t, sys.Content, "Recalled from long-term memory")
	assert.Contains(t, sys.Content, "- [2026-11-29 08:00 UTC] User: my project is Falcon Assistant: Noted.")
}

func TestChat_OllamaHTTP_WriteEachRound(t *testing.T) {
	f := newFakeOllama(t, ollamatest.Echo)
	mem := &fakeMemory{}
	a, err := agent.New(f.model("m"), agent.WithMemory(mem), agent.WithWriteEachRound())
	require.NoError(t, err)
	for _, q := range []string{"one", "two"} {
		_, err := a.Chat(t.Context(), q)
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"User: one\nAssistant: You said: one", "User: two\nAssistant: You said: two"}, mem.all())
	assert.Equal(t, 2, a.Window().Len())
}

// TestChat_OllamaHTTP_FailedRoundsWriteNothing covers each way a round can
// fail: nothing reaches the window, the memory or the state file.
func TestChat_OllamaHTTP_FailedRoundsWriteNothing(t *testing.T) {
	tests := []struct {
		name  string
		reply func(w http.ResponseWriter, r *http.Request, req api.ChatRequest)
		want  error
	}{
		{"server error", func(w http.ResponseWriter, _ *http.Request, _ api.ChatRequest) {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"error":"model crashed"}`))
		}, agent.ErrModel},
		{"model not found", func(w http.ResponseWriter, _ *http.Request, req api.ChatRequest) {
			w.WriteHeader(http.StatusNotFound)
			_, _ = fmt.Fprintf(w, `{"error":"model '%s' not found"}`, req.Model)
		}, agent.ErrModelNotFound},
		{"error mid-stream", func(w http.ResponseWriter, _ *http.Request, req api.ChatRequest) {
			ollamatest.Stream(w, req.Model, []string{"partial "}, false)
			_, _ = w.Write([]byte(`{"error":"out of memory"}` + "\n"))
		}, agent.ErrModel},
		{"empty answer", func(w http.ResponseWriter, _ *http.Request, req api.ChatRequest) {
			ollamatest.Stream(w, req.Model, []string{"", "  \n"}, true)
		}, agent.ErrEmptyAnswer},
		{"stream ends without done", func(w http.ResponseWriter, _ *http.Request, req api.ChatRequest) {
			ollamatest.Stream(w, req.Model, []string{"half an ans"}, false)
		}, agent.ErrIncomplete},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeOllama(t, tt.reply)
			mem := &fakeMemory{}
			w, err := window.New(window.WithMaxRounds(1), window.WithEvictTo(mem))
			require.NoError(t, err)
			require.NoError(t, w.Append(t.Context(), window.Round{User: "earlier", Assistant: "yes"}))
			state := filepath.Join(t.TempDir(), "state.json")
			a, err := agent.New(f.model("m"), agent.WithWindow(w), agent.WithMemory(mem),
				agent.WithWriteEachRound(), agent.WithStateFile(state))
			require.NoError(t, err)

			answer, err := a.Chat(t.Context(), "question")
			require.ErrorIs(t, err, tt.want)
			assert.Empty(t, answer)
			assert.Empty(t, mem.all(), "no memory write")
			assert.Equal(t, []string{"earlier"}, users(w.Rounds()), "no window append, no eviction")
			assert.NoFileExists(t, state, "no state saved")
		})
	}
}

func users(rs []window.Round) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.User)
	}
	return out
}

func TestChat_OllamaHTTP_CancelledMidStream(t *testing.T) {
	release := make(chan struct{})
	f := newFakeOllama(t, func(w http.ResponseWriter, r *http.Request, req api.ChatRequest) {
		ollamatest.Stream(w, req.Model, []string{"The answer is "}, false)
		select { // hold the stream open until the client goes away
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	mem := &fakeMemory{}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// Cancel as soon as the first chunk has been streamed.
	out := writerFunc(func(p []byte) (int, error) { cancel(); return len(p), nil })
	a, err := agent.New(f.model("m"), agent.WithMemory(mem), agent.WithWriteEachRound(), agent.WithStream(out))
	require.NoError(t, err)
	answer, err := a.Chat(ctx, "question")
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, answer)
	assert.Zero(t, a.Window().Len())
	assert.Empty(t, mem.all())
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestChat_OllamaClient_Unreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close()) // nothing listens there now
	u, _ := url.Parse("http://" + addr)
	m, err := ollama.New(api.NewClient(u, http.DefaultClient), "m")
	require.NoError(t, err)
	a, err := agent.New(m)
	require.NoError(t, err)
	_, err = a.Chat(t.Context(), "hello")
	require.ErrorIs(t, err, agent.ErrUnreachable)
	assert.Contains(t, err.Error(), "ollama serve")
	assert.Contains(t, err.Error(), "OLLAMA_HOST")
	assert.Zero(t, a.Window().Len())
}

func TestChat_OllamaHTTP_BadInput(t *testing.T) {
	f := newFakeOllama(t, ollamatest.Echo)
	a, err := agent.New(f.model("m"), agent.WithSystem(strings.Repeat("rule ", 100)), agent.WithBudget(50))
	require.NoError(t, err)
	_, err = a.Chat(t.Context(), "  ")
	require.ErrorIs(t, err, agent.ErrEmptyInput)
	_, err = a.Chat(t.Context(), "hi")
	require.ErrorIs(t, err, agent.ErrBudget)
	assert.Empty(t, f.Requests(), "the model is not called")

	_, err = agent.New(nil)
	require.Error(t, err)
	_, err = ollama.New(f.APIClient(), " ")
	require.Error(t, err)
	_, err = ollama.New(nil, "m")
	require.Error(t, err)
	_, err = agent.New(f.model("m"), agent.WithBudget(0))
	require.ErrorIs(t, err, agent.ErrBudget)
	_, err = agent.New(f.model("m"), agent.WithShares(0, 0.5))
	require.Error(t, err)
}

func TestChat_OllamaHTTP_RecallFailure(t *testing.T) {
	f := newFakeOllama(t, ollamatest.Echo)
	down := errors.New("index offline")
	a, err := agent.New(f.model("m"), agent.WithMemory(&fakeMemory{failSrch: down}))
	require.NoError(t, err)
	_, err = a.Chat(t.Context(), "hi")
	require.ErrorIs(t, err, agent.ErrRecall)
	require.ErrorIs(t, err, down)
	assert.Empty(t, f.Requests())
}

func TestChat_OllamaHTTP_RememberFailureKeepsAnswer(t *testing.T) {
	f := newFakeOllama(t, ollamatest.Echo)
	down := errors.New("disk full")
	mem := &fakeMemory{failUpd: down}
	a, err := agent.New(f.model("m"), agent.WithMemory(mem), agent.WithWriteEachRound())
	require.NoError(t, err)
	answer, err := a.Chat(t.Context(), "hi")
	require.ErrorIs(t, err, agent.ErrRemember)
	require.ErrorIs(t, err, down)
	assert.Equal(t, "You said: hi", answer, "the round succeeded; the answer is not withheld")
}

func TestChat_OllamaHTTP_StateFileRestart(t *testing.T) {
	f := newFakeOllama(t, ollamatest.Echo)
	state := filepath.Join(t.TempDir(), "state.json")
	tr, err := window.NewTrack()
	require.NoError(t, err)
	a, err := agent.New(f.model("m"), agent.WithStateFile(state), agent.WithTrack(tr))
	require.NoError(t, err)
	tr.SetTask("plan the migration")
	for _, q := range []string{"first", "second"} {
		_, err := a.Chat(t.Context(), q)
		require.NoError(t, err)
	}
	require.FileExists(t, state)

	// A new process: a new agent over the same state file.
	tr2, err := window.NewTrack()
	require.NoError(t, err)
	b, err := agent.New(f.model("m"), agent.WithStateFile(state), agent.WithTrack(tr2))
	require.NoError(t, err)
	assert.Equal(t, []string{"first", "second"}, users(b.Window().Rounds()))
	_, err = b.Chat(t.Context(), "third")
	require.NoError(t, err)
	msgs := f.Requests()[2].Messages
	assert.Contains(t, msgs[0].Content, "Task: plan the migration", "the workflow track came back too")
	assert.Equal(t, "first", msgs[1].Content, "the conversation continues")

	// A corrupt state file is an error, not a silent fresh start.
	require.NoError(t, os.WriteFile(state, []byte("{"), 0o600))
	_, err = agent.New(f.model("m"), agent.WithStateFile(state))
	require.ErrorIs(t, err, window.ErrCorrupt)
}

func TestChat_OllamaHTTP_Concurrent(t *testing.T) {
	f := newFakeOllama(t, ollamatest.Echo)
	w, err := window.New(window.WithMaxRounds(100))
	require.NoError(t, err)
	a, err := agent.New(f.model("m"), agent.WithWindow(w))
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 5 {
				_, err := a.Chat(t.Context(), fmt.Sprintf("q%d-%d", g, i))
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	rs := w.Rounds()
	require.Len(t, rs, 20)
	for _, r := range rs {
		assert.Equal(t, "You said: "+r.User, r.Assistant, "rounds are not mixed up")
	}
}

func TestPrompt_OllamaHTTP_DryRunCallsNoModel(t *testing.T) {
	f := newFakeOllama(t, ollamatest.Echo)
	a, err := agent.New(f.model("m"), agent.WithMemory(&fakeMemory{hits: []memory.Hit{{Text: "fact"}}}))
	require.NoError(t, err)
	p, err := a.Prompt(t.Context(), "q")
	require.NoError(t, err)
	assert.Equal(t, 1, p.Recalled)
	assert.Empty(t, f.Requests())
}
