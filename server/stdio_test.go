package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMCP_StdioTooLargeMessage: a tools/call over stdio larger than
// MaxStdioMessage is answered with a too_large tool error for that call
// only, wherever its id stands in it, and the session goes on (it ended
// the session); a too large request of another method gets a JSON-RPC
// error with the same code.
func TestMCP_StdioTooLargeMessage(t *testing.T) {
	srv := mustServer(t)
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(ctx, sr, sw) }()
	t.Cleanup(func() {
		cw.Close()
		cancel()
		assert.NoError(t, <-done)
	})
	lines := bufio.NewReader(cr)
	send := func(msg string) {
		t.Helper()
		_, err := io.WriteString(cw, msg+"\n")
		require.NoError(t, err)
	}
	recv := func() map[string]any {
		t.Helper()
		type result struct {
			line string
			err  error
		}
		ch := make(chan result, 1)
		go func() { l, err := lines.ReadString('\n'); ch <- result{l, err} }()
		select {
		case r := <-ch:
			require.NoError(t, r.err)
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(r.line), &m), r.line)
			return m
		case <-time.After(20 * time.Second):
			t.Fatal("no answer")
			return nil
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	recv()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	huge := strings.Repeat("a", MaxStdioMessage+10)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_memory","arguments":{"text":"` + huge + `"}}}`)
	m := recv()
	assert.EqualValues(t, 2, m["id"])
	res := m["result"].(map[string]any)
	assert.Equal(t, true, res["isError"])
	text := res["content"].([]any)[0].(map[string]any)["text"].(string)
	assert.True(t, strings.HasPrefix(text, CodeTooLarge+": "), text)

	// The id after the payload, a string id.
	send(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"add_memory","arguments":{"text":"` + huge + `\"}"}},"id":"late"}`)
	m = recv()
	assert.Equal(t, "late", m["id"])
	assert.Equal(t, true, m["result"].(map[string]any)["isError"])

	send(`{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":"` + huge + `"}}`)
	m = recv()
	assert.EqualValues(t, 3, m["id"])
	assert.Contains(t, fmt.Sprint(m["error"]), CodeTooLarge)

	// The session goes on.
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add_memory","arguments":{"text":"still here"}}}`)
	m = recv()
	assert.EqualValues(t, 4, m["id"])
	assert.NotEqual(t, true, m["result"].(map[string]any)["isError"], m)
}
