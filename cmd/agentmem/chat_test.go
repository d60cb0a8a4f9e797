package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/agent"
	"github.com/agentmem/agentmem/internal/ollamatest"
	memstore "github.com/agentmem/agentmem/store"
)

// execChat runs `agentmem ARGS` with stdin on a fresh command tree and
// returns stdout, stderr and the error.
func execChat(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRootCmd(&out, &errOut)
	root.SetArgs(args)
	root.SetIn(strings.NewReader(stdin))
	err := root.ExecuteContext(t.Context())
	return out.String(), errOut.String(), err
}

// startFakeOllama starts ollamatest's server (answering "You said:
// <input>") and points OLLAMA_HOST at it.
func startFakeOllama(t *testing.T) *ollamatest.Server {
	f := ollamatest.New(t, ollamatest.Echo)
	t.Setenv("OLLAMA_HOST", f.URL)
	return f
}

func TestChatCmd_FakeServer_SessionContinuesAfterRestart(t *testing.T) {
	f := startFakeOllama(t)
	store := t.TempDir()
	out, _, err := execChat(t, "hello\n/task plan the migration\n\nsecond question\n", "chat", "--store", store, "--model", "m")
	require.NoError(t, err)
	assert.Equal(t, "You said: hello\nYou said: second question\n", out)
	require.FileExists(t, filepath.Join(store, chatStateFile))

	// A new session over the same store continues the conversation.
	out, _, err = execChat(t, "third\n/exit\nnot read\n", "chat", "--store", store, "--model", "m")
	require.NoError(t, err)
	assert.Equal(t, "You said: third\n", out)
	reqs := f.Requests()
	require.Len(t, reqs, 3)
	assert.EqualValues(t, 8192+8192/5+2048, reqs[0].Options["num_ctx"], "room for the budget and the answer")
	msgs := reqs[2].Messages
	assert.Equal(t, "system", msgs[0].Role)
	assert.Contains(t, msgs[0].Content, "Task: plan the migration")
	assert.Equal(t, []string{"hello", "You said: hello", "second question", "You said: second question", "third"},
		contents(msgs[1:]))
}

func contents(msgs []api.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Content)
	}
	return out
}

func TestChatCmd_DryRunShowsRecalledMemory(t *testing.T) {
	store := t.TempDir()
	mem, err := memstore.Open(t.Context(), store, memstore.Config{Create: true})
	require.NoError(t, err)
	require.NoError(t, mem.Update(t.Context(), "User: my project is called Falcon\nAssistant: Noted, your project is Falcon."))
	require.NoError(t, mem.Close())

	t.Setenv("OLLAMA_HOST", "http://127.0.0.1:1") // never contacted
	out, _, err := execChat(t, "", "chat", "--store", store, "--dry-run", "what is my project called?")
	require.NoError(t, err)
	assert.Contains(t, out, "── system ──")
	assert.Contains(t, out, "Recalled from long-term memory")
	assert.Contains(t, out, "Falcon")
	assert.True(t, strings.HasSuffix(out, "── user ──\nwhat is my project called?\n"), out)

	out, _, err = execChat(t, "", "chat", "--store", store, "--json", "--dry-run", "what is my project called?")
	require.NoError(t, err)
	var p agent.Prompt
	require.NoError(t, json.Unmarshal([]byte(out), &p))
	assert.Equal(t, 1, p.Recalled)
	assert.LessOrEqual(t, p.Tokens, p.Budget)
}

func TestChatCmd_NoServerGivesHint(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	t.Setenv("OLLAMA_HOST", "http://"+addr)
	_, _, err = execChat(t, "hello\n", "chat", "--store", t.TempDir(), "--model", "m")
	require.ErrorIs(t, err, agent.ErrUnreachable)
	assert.Contains(t, err.Error(), "is `ollama serve` running? set OLLAMA_HOST")
	assert.Contains(t, err.Error(), addr)
}

func TestChatCmd_BadUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"chat", "--store", t.TempDir()},                          // no --model
		{"chat", "--store", t.TempDir(), "--dry-run"},             // no input
		{"chat", "--store", t.TempDir(), "--model", "m", "stray"}, // argument without --dry-run
		{"chat", "--store", t.TempDir(), "--model", "m", "--budget", "0"},
	} {
		_, _, err := execChat(t, "", args...)
		var ue usageError
		assert.ErrorAs(t, err, &ue, "%v", args)
	}
}

func TestChatCmd_Cancelled(t *testing.T) {
	startFakeOllama(t)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	ctx, cancel := context.WithCancel(t.Context())
	root := newRootCmd(&bytes.Buffer{}, &bytes.Buffer{})
	root.SetArgs([]string{"chat", "--store", t.TempDir(), "--model", "m"})
	root.SetIn(r) // never written: the session waits for input
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
}
