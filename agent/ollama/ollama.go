// Package ollama adapts an Ollama server (https://ollama.com) to
// [agent.Model], through Ollama's own client, github.com/ollama/ollama/api.
// It is the only part of the agent that knows Ollama's protocol.
//
//	a, err := ollama.NewAgent("llama3.2", agent.WithMemory(mem))
//
// is the short way; [New] takes an *api.Client of your own (another host, a
// custom HTTP client) and model options such as the context length.
package ollama

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/ollama/ollama/api"

	"github.com/agentmem/agentmem/agent"
	"github.com/agentmem/agentmem/internal/errs"
)

// ChatClient is the part of *api.Client the adapter uses; a test or another
// server speaking Ollama's API can provide its own.
type ChatClient interface {
	Chat(ctx context.Context, req *api.ChatRequest, fn api.ChatResponseFunc) error
}

var (
	_ ChatClient  = (*api.Client)(nil)
	_ agent.Model = (*Model)(nil)
)

// A Model is one Ollama model on one server, as an [agent.Model]. It is
// safe for concurrent use.
type Model struct {
	client  ChatClient
	name    string
	options map[string]any
}

// An Option configures a [Model].
type Option func(*Model) error

// WithOptions passes model options to Ollama with every request, e.g.
// {"temperature": 0.2, "num_ctx": 8192}. Ollama's default context is
// smaller than the agent's default budget, and Ollama cuts a longer prompt
// silently: give num_ctx room for the prompt and the answer.
func WithOptions(opts map[string]any) Option {
	return func(m *Model) error { m.options = opts; return nil }
}

// New returns the model called name (such as "llama3.2" or "qwen2.5:7b") on
// the server client talks to.
func New(client ChatClient, name string, opts ...Option) (*Model, error) {
	if client == nil {
		return nil, fmt.Errorf("ollama: nil chat client: %w", errs.InvalidArgument)
	}
	if strings.TrimSpace(name) == "" {
		return nil, fmt.Errorf("ollama: empty model name: %w", errs.InvalidArgument)
	}
	m := &Model{client: client, name: name}
	for _, o := range opts {
		if err := o(m); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// FromEnvironment returns the model called name on the server named by
// OLLAMA_HOST (default http://127.0.0.1:11434).
func FromEnvironment(name string, opts ...Option) (*Model, error) {
	c, err := api.ClientFromEnvironment()
	if err != nil {
		return nil, fmt.Errorf("ollama: %w", err)
	}
	return New(c, name, opts...)
}

// NewAgent returns an agent over the model called name on the server named
// by OLLAMA_HOST: FromEnvironment, then [agent.New] with opts.
func NewAgent(name string, opts ...agent.Option) (*agent.Agent, error) {
	m, err := FromEnvironment(name)
	if err != nil {
		return nil, err
	}
	return agent.New(m, opts...)
}

// Name returns the model's name.
func (m *Model) Name() string { return m.name }

// Chat implements [agent.Model]: it sends msgs to /api/chat with streaming
// on and calls fn with each chunk of the answer. Errors wrap
// [agent.ErrModelNotFound] (the server does not have the model: pull it),
// [agent.ErrUnreachable] (no server answered), [agent.ErrIncomplete] (the
// stream ended before Ollama said done) or [agent.ErrModel] (anything else
// the server reported); an error from fn is returned as it is.
func (m *Model) Chat(ctx context.Context, msgs []agent.Message, fn func(chunk string) error) error {
	stream := true
	req := &api.ChatRequest{Model: m.name, Messages: toAPI(msgs), Stream: &stream, Options: m.options}
	done, received := false, 0
	var fnErr error
	err := m.client.Chat(ctx, req, func(r api.ChatResponse) error {
		if r.Message.Content != "" {
			received += len(r.Message.Content)
			if err := fn(r.Message.Content); err != nil {
				fnErr = err
				return err
			}
		}
		if r.Done {
			done = true
		}
		return nil
	})
	switch {
	case fnErr != nil:
		return fnErr
	case err != nil:
		return m.classify(err)
	case !done:
		return fmt.Errorf("ollama: %s sent %d bytes without done: %w", m.name, received, agent.ErrIncomplete)
	}
	return nil
}

// toAPI converts the agent's messages to Ollama's.
func toAPI(msgs []agent.Message) []api.Message {
	out := make([]api.Message, len(msgs))
	for i, m := range msgs {
		out[i] = api.Message{Role: m.Role, Content: m.Content}
	}
	return out
}

// classify wraps a chat error with the agent's sentinel that says what to do.
func (m *Model) classify(err error) error {
	var se api.StatusError
	if errors.As(err, &se) {
		if se.StatusCode == http.StatusNotFound {
			return fmt.Errorf("%w: %q (run `ollama pull %s`): %w", agent.ErrModelNotFound, m.name, m.name, err)
		}
		return fmt.Errorf("%w: %s: %w", agent.ErrModel, m.name, err)
	}
	var ne net.Error
	var oe *net.OpError
	if errors.As(err, &oe) || errors.As(err, &ne) {
		return fmt.Errorf("%w (is `ollama serve` running? set OLLAMA_HOST): %w", agent.ErrUnreachable, err)
	}
	return fmt.Errorf("%w: %s: %w", agent.ErrModel, m.name, err)
}
