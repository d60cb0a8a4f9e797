// Package agent is a chat agent that remembers. Each round it recalls what
// long-term memory holds about the new input, assembles a prompt under a
// token budget from the system prompt, the recalled memories, the workflow
// track and the conversation window ([Assembler]), asks a [Model] (package
// agent/ollama adapts an Ollama server), and — only when the round
// succeeded — appends it to the window, whose evicted rounds settle into
// long-term memory.
//
// The lifecycle follows the design's seed: read memory while building the
// prompt; write memory after a successful round only. A failed, empty,
// incomplete or cancelled round writes nothing anywhere.
package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/agentmem/agentmem/internal/errs"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/window"
	"github.com/agentmem/agentmem/memory/window/tokens"
)

// Errors returned by [Agent.Chat] besides those of [Assembler.Assemble].
// ErrModel, ErrUnreachable, ErrModelNotFound and ErrIncomplete come from the
// [Model]; its adapter wraps them with what went wrong and what to do.
var (
	// ErrModel: the model server answered with an error.
	ErrModel = errors.New("agent: model failed")
	// ErrUnreachable: no model server answered.
	ErrUnreachable = errors.New("agent: model server unreachable")
	// ErrModelNotFound: the server does not have the model.
	ErrModelNotFound = errors.New("agent: model not found")
	// ErrEmptyAnswer: the model finished without saying anything.
	ErrEmptyAnswer = errors.New("agent: empty answer")
	// ErrIncomplete: the stream ended before the model said it was done.
	ErrIncomplete = errors.New("agent: answer stream ended early")
	// ErrRecall: searching long-term memory for the input failed.
	ErrRecall = errors.New("agent: recall failed")
	// ErrRemember: the round succeeded (the answer is returned) but writing
	// it to memory or saving the state file failed. The round is in the
	// window; rounds the window could not settle stay pending
	// (see window.Window.Settle).
	ErrRemember = errors.New("agent: round not fully remembered")
)

// An Option configures an [Agent].
type Option func(*Agent) error

// WithSystem sets the system prompt.
func WithSystem(prompt string) Option {
	return func(a *Agent) error { a.system = prompt; return nil }
}

// WithWindow sets the conversation window. Without it the agent makes one
// with the window package's defaults whose evicted rounds settle into the
// memory given by [WithMemory].
func WithWindow(w *window.Window) Option {
	return func(a *Agent) error {
		if w == nil {
			return fmt.Errorf("agent: nil window: %w", errs.InvalidArgument)
		}
		a.win = w
		return nil
	}
}

// WithMemory sets the long-term memory that is searched for every input
// and, unless [WithWindow] gives a window wired otherwise, receives the
// rounds the window evicts.
func WithMemory(m memory.Memory) Option {
	return func(a *Agent) error {
		if m == nil {
			return fmt.Errorf("agent: nil memory: %w", errs.InvalidArgument)
		}
		a.mem = m
		return nil
	}
}

// WithWriteEachRound writes every successful round to long-term memory at
// once (as well as to the window), as the seed's agent does, instead of
// when the window evicts it. The agent's default window then evicts
// without writing, so no round is stored twice.
func WithWriteEachRound() Option {
	return func(a *Agent) error { a.writeEach = true; return nil }
}

// WithTrack sets the workflow track whose summary goes into every prompt.
func WithTrack(t *window.Track) Option {
	return func(a *Agent) error { a.track = t; return nil }
}

// WithBudget sets the prompt's token budget (default [DefaultBudget]).
func WithBudget(n int) Option {
	return func(a *Agent) error {
		if n <= 0 {
			return fmt.Errorf("%w: budget %d, want > 0", ErrBudget, n)
		}
		a.asm.Budget = n
		return nil
	}
}

// WithShares sets the largest shares of the budget that recalled memories
// and the workflow summary may take (defaults [DefaultRecallShare],
// [DefaultWorkflowShare]); each must be in (0, 1].
func WithShares(recall, workflow float64) Option {
	return func(a *Agent) error {
		if recall <= 0 || recall > 1 || workflow <= 0 || workflow > 1 {
			return fmt.Errorf("agent: shares %v and %v, want each in (0, 1]: %w", recall, workflow, errs.InvalidArgument)
		}
		a.asm.RecallShare, a.asm.WorkflowShare = recall, workflow
		return nil
	}
}

// WithCounter sets the token counter for the prompt (default
// [tokens.Default]). Give the window the same one.
func WithCounter(c tokens.Counter) Option {
	return func(a *Agent) error {
		if c == nil {
			return fmt.Errorf("agent: nil counter: %w", errs.InvalidArgument)
		}
		a.asm.Counter = c
		return nil
	}
}

// WithStream writes the answer to w as it arrives.
func WithStream(w io.Writer) Option {
	return func(a *Agent) error { a.stream = w; return nil }
}

// WithStateFile keeps the window and the workflow track in path: New
// restores them from it if it exists, and every successful round saves
// them, atomically, so a restarted agent continues the conversation.
func WithStateFile(path string) Option {
	return func(a *Agent) error { a.statePath = path; return nil }
}

// An Agent chats with a [Model] and remembers. It is safe for
// concurrent use by multiple goroutines; rounds take turns (a conversation
// has one turn at a time), and a Chat waiting for its turn gives up when its
// context ends.
type Agent struct {
	model     Model
	system    string
	win       *window.Window
	mem       memory.Memory
	writeEach bool
	track     *window.Track
	asm       Assembler
	stream    io.Writer
	statePath string

	turn chan struct{} // a one-slot semaphore: holds the turn
	now  func() time.Time
}

// counterCache is how many texts the agent's token counter remembers: the
// window's rounds (two texts each), recalled memories and the workflow.
const counterCache = 1024

// New returns an agent that asks model (for Ollama:
// ollama.New(client, "llama3.2"), or ollama.NewAgent for both at once).
func New(model Model, opts ...Option) (*Agent, error) {
	if model == nil {
		return nil, fmt.Errorf("agent: nil model: %w", errs.InvalidArgument)
	}
	a := &Agent{model: model, turn: make(chan struct{}, 1), now: time.Now}
	for _, o := range opts {
		if err := o(a); err != nil {
			return nil, err
		}
	}
	a.asm = a.asm.withDefaults()
	// Every turn prices the same window rounds again: count each text once.
	a.asm.Counter = tokens.Cached(a.asm.Counter, counterCache)
	if a.win == nil {
		wopts := []window.Option{window.WithCounter(a.asm.Counter)}
		if a.mem != nil && !a.writeEach {
			wopts = append(wopts, window.WithEvictTo(a.mem))
		}
		w, err := window.New(wopts...)
		if err != nil {
			return nil, err
		}
		a.win = w
	}
	if a.statePath != "" {
		err := window.LoadFile(a.statePath, a.win, a.track)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("agent: %w", err)
		}
	}
	return a, nil
}

// Window returns the agent's conversation window.
func (a *Agent) Window() *window.Window { return a.win }

// Track returns the agent's workflow track, nil if it has none.
func (a *Agent) Track() *window.Track { return a.track }

// Model returns the model the agent asks.
func (a *Agent) Model() Model { return a.model }

// Prompt recalls memories for input and assembles the prompt the next
// [Agent.Chat] would send, without calling the model.
func (a *Agent) Prompt(ctx context.Context, input string) (Prompt, error) {
	if strings.TrimSpace(input) == "" {
		return Prompt{}, errEmptyInput()
	}
	parts := Parts{System: a.system, Rounds: a.win.Rounds(), Input: input}
	if a.track != nil {
		parts.Workflow = a.track.Summary()
	}
	if a.mem != nil {
		hits, err := a.mem.Search(ctx, input)
		if err != nil {
			return Prompt{}, fmt.Errorf("%w: %w", ErrRecall, err)
		}
		parts.Recalled = hits
	}
	return a.asm.Assemble(parts)
}

// Chat runs one round: it assembles the prompt, asks the model (streaming
// the answer to the writer given by [WithStream]), and returns the answer.
//
// Only a successful round is remembered: it is appended to the window
// (whose evicted rounds settle into long-term memory), written to memory at
// once with [WithWriteEachRound], and saved with [WithStateFile]. A model
// error ([ErrModel], [ErrModelNotFound], [ErrUnreachable]), an empty answer
// ([ErrEmptyAnswer]), a stream that ends early ([ErrIncomplete]) or a
// context that ends before the answer is complete (the context's error)
// writes nothing. Once the answer is complete, remembering it is not
// interrupted by the context. If remembering fails, Chat returns the answer
// and an error wrapping [ErrRemember].
func (a *Agent) Chat(ctx context.Context, input string) (string, error) {
	if strings.TrimSpace(input) == "" {
		return "", errEmptyInput()
	}
	select {
	case a.turn <- struct{}{}:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	defer func() { <-a.turn }()

	p, err := a.Prompt(ctx, input)
	if err != nil {
		return "", err
	}
	answer, err := a.ask(ctx, p.Messages)
	if err != nil {
		return "", err
	}
	return answer, a.remember(context.WithoutCancel(ctx), window.Round{User: input, Assistant: answer, Time: a.now()})
}

// ask sends msgs and collects the streamed answer.
func (a *Agent) ask(ctx context.Context, msgs []Message) (string, error) {
	var b strings.Builder
	err := a.model.Chat(ctx, msgs, func(chunk string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if chunk == "" {
			return nil
		}
		b.WriteString(chunk)
		if a.stream != nil {
			if _, err := io.WriteString(a.stream, chunk); err != nil {
				return fmt.Errorf("agent: stream answer: %w", err)
			}
		}
		return nil
	})
	if a.stream != nil && b.Len() > 0 {
		_, _ = io.WriteString(a.stream, "\n")
	}
	if cerr := ctx.Err(); cerr != nil {
		return "", cerr // cancelled mid-stream: whatever arrived is dropped
	}
	if err != nil {
		return "", modelError(err)
	}
	answer := strings.TrimSpace(b.String())
	if answer == "" {
		return "", ErrEmptyAnswer
	}
	return answer, nil
}

// modelError returns err, which a Model returned, wrapped in [ErrModel]
// unless it already says which model failure it is.
func modelError(err error) error {
	for _, known := range []error{ErrModel, ErrModelNotFound, ErrUnreachable, ErrIncomplete} {
		if errors.Is(err, known) {
			return err
		}
	}
	return fmt.Errorf("%w: %w", ErrModel, err)
}

// remember stores a successful round.
func (a *Agent) remember(ctx context.Context, r window.Round) error {
	var errs []error
	if a.writeEach && a.mem != nil {
		if err := a.mem.Update(ctx, r.Text()); err != nil {
			errs = append(errs, fmt.Errorf("write memory: %w", err))
		}
	}
	if err := a.win.Append(ctx, r); err != nil {
		errs = append(errs, err)
	}
	if a.statePath != "" {
		if err := a.Save(a.statePath); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrRemember, errors.Join(errs...))
	}
	return nil
}

// Save writes the window and the workflow track to path, atomically.
func (a *Agent) Save(path string) error {
	return window.SaveFile(path, a.win, a.track)
}
