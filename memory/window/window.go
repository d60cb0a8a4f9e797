// Package window is an agent's short-term memory: a sliding window over the
// most recent rounds of conversation, and beside it a workflow [Track] of the
// task's steps — the "two-track window" (双轨窗口) of the design.
//
// The [Window] keeps rounds under two caps, a round count and a token
// budget. When a cap is exceeded it forgets smoothly: the oldest whole
// rounds leave, never half a round. A round that leaves is handed to an
// eviction callback if the window has one: [WithEvictTo] settles it into a
// long-term memory with [memory.Memory.Update], so nothing said is lost, only
// moved; [WithOnEvict] hands it to any function. Without either, a round that
// leaves is forgotten. The callback runs after the window's lock is released
// (as in golang-lru), so it may be slow or call back into the window.
//
// Token counts come from a pluggable [tokens.Counter]; the default is
// [tokens.Estimate]. A message costs its content plus
// [tokens.MessageOverhead], so a round costs two messages.
//
// [SaveFile] and [LoadFile] persist a window and a track in one JSON file,
// written atomically, so a restarted agent continues the conversation.
package window

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/agentmem/agentmem/internal/errs"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/window/tokens"
)

// Errors returned by this package. Callers test them with errors.Is; the
// returned errors wrap them with the facts.
//
// ErrEmptyRound, ErrInvalidOption, ErrVersion and ErrCorrupt are agentmem's
// shared sentinels (the same values as embed.ErrEmptyText, vdb.ErrCorrupt,
// …), so an error from any layer matches them.
var (
	// ErrEmptyRound: a round without user input or without an answer.
	ErrEmptyRound = errs.EmptyInput
	// ErrEvict: the eviction callback failed. The rounds it did not take stay
	// pending and are offered again by the next Append or Settle.
	ErrEvict = errors.New("window: evicted round not settled")
	// ErrInvalidOption: an option value out of range.
	ErrInvalidOption = errs.InvalidArgument
	// ErrUnknownStep: a workflow step ID the track does not hold.
	ErrUnknownStep = errors.New("window: unknown workflow step")
	// ErrInvalidStep: a step without a goal or with an unknown status.
	ErrInvalidStep = errors.New("window: invalid workflow step")
	// ErrTrackFull: more steps in progress than the track may hold.
	ErrTrackFull = errors.New("window: workflow track full")
	// ErrVersion: a state file written by a newer format version.
	ErrVersion = errs.Version
	// ErrCorrupt: a state file that cannot be decoded.
	ErrCorrupt = errs.Corrupt
)

// Defaults for [New].
const (
	DefaultMaxRounds = 20
	DefaultMaxTokens = 4096
	// MinTokens is the smallest token budget New accepts: room for a round
	// of two short messages with truncation markers.
	MinTokens = 64
)

// A Round is one exchange: the user's input and the assistant's final answer.
type Round struct {
	User      string            `json:"user"`
	Assistant string            `json:"assistant"`
	Time      time.Time         `json:"time"`           // when the round ended
	Meta      map[string]string `json:"meta,omitempty"` // optional caller data, copied
	// Truncated is how many tokens the window cut from this round to fit
	// it into its budget; 0 for a whole round. The cut is marked in the text
	// (see [tokens.Marker]) and the whole round went to the eviction
	// callback when it was appended.
	Truncated int `json:"truncated,omitempty"`
}

// Text renders the round as one memory segment:
//
//	User: …
//	Assistant: …
func (r Round) Text() string {
	return "User: " + r.User + "\nAssistant: " + r.Assistant
}

// Cost returns what the round costs in a prompt under c: two messages.
func (r Round) Cost(c tokens.Counter) int {
	return tokens.Message(c, r.User) + tokens.Message(c, r.Assistant)
}

func (r Round) clone() Round {
	r.Meta = maps.Clone(r.Meta)
	return r
}

// EvictFunc receives a round that left the window, oldest first. Returning
// an error keeps the round (and those after it) pending for a later retry.
// It is called without the window's lock held, never concurrently with
// itself for the same window.
type EvictFunc func(ctx context.Context, r Round) error

// An Option configures a [Window].
type Option func(*config) error

type config struct {
	maxRounds int
	budget
	onEvict EvictFunc
}

// budget is what bounds a window and a track alike: a number of entries
// (rounds, steps), a token cap and the counter that measures it. Its
// setters check the values their options give; what names the setting in
// the error ("max rounds", "track tokens").
type budget struct {
	maxTokens int
	counter   tokens.Counter
}

// setCount sets *n to v, which must be positive.
func setCount(n *int, what string, v int) error {
	if v <= 0 {
		return fmt.Errorf("window: %s %d, want > 0: %w", what, v, ErrInvalidOption)
	}
	*n = v
	return nil
}

// setTokens sets the token cap to n, at least [MinTokens].
func (b *budget) setTokens(what string, n int) error {
	if n < MinTokens {
		return fmt.Errorf("window: %s %d, want ≥ %d: %w", what, n, MinTokens, ErrInvalidOption)
	}
	b.maxTokens = n
	return nil
}

// setCounter sets the token counter, which must not be nil; in prefixes
// the error's "nil counter" ("track: ").
func (b *budget) setCounter(in string, tc tokens.Counter) error {
	if tc == nil {
		return fmt.Errorf("window: %snil counter: %w", in, ErrInvalidOption)
	}
	b.counter = tc
	return nil
}

// WithMaxRounds caps the window at n rounds (default [DefaultMaxRounds]).
func WithMaxRounds(n int) Option {
	return func(c *config) error { return setCount(&c.maxRounds, "max rounds", n) }
}

// WithMaxTokens caps the window at n tokens (default [DefaultMaxTokens],
// at least [MinTokens]).
func WithMaxTokens(n int) Option {
	return func(c *config) error { return c.setTokens("max tokens", n) }
}

// WithCounter sets the token counter (default [tokens.Default]).
func WithCounter(tc tokens.Counter) Option {
	return func(c *config) error { return c.setCounter("", tc) }
}

// WithOnEvict sets the callback that receives evicted rounds. Without one
// (and without [WithEvictTo]) evicted rounds are forgotten.
func WithOnEvict(fn EvictFunc) Option {
	return func(c *config) error {
		c.onEvict = fn
		return nil
	}
}

// WithEvictTo settles evicted rounds into m: each becomes one segment,
// [Round.Text], written with m.Update.
func WithEvictTo(m memory.Memory) Option {
	return func(c *config) error {
		if m == nil {
			return fmt.Errorf("window: nil memory: %w", ErrInvalidOption)
		}
		c.onEvict = func(ctx context.Context, r Round) error { return m.Update(ctx, r.Text()) }
		return nil
	}
}

// entry is a round in the window with its cached cost.
type entry struct {
	Round
	cost    int
	settled bool // the whole round already went to the eviction callback
}

// A Window holds the most recent rounds of a conversation under a round cap
// and a token budget. It is safe for concurrent use by multiple goroutines.
// The zero value is not usable; call [New].
type Window struct {
	cfg config

	mu      sync.Mutex // guards rounds, cost, pending
	rounds  []entry    // oldest first
	cost    int        // sum of rounds' cost
	pending []Round    // evicted, not yet taken by cfg.onEvict

	settleMu sync.Mutex // serializes calls of cfg.onEvict; never held with mu while calling out
}

// New returns an empty window.
func New(opts ...Option) (*Window, error) {
	cfg := config{maxRounds: DefaultMaxRounds, budget: budget{maxTokens: DefaultMaxTokens, counter: tokens.Default}}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	return &Window{cfg: cfg}, nil
}

// MaxRounds returns the window's round cap.
func (w *Window) MaxRounds() int { return w.cfg.maxRounds }

// MaxTokens returns the window's token budget.
func (w *Window) MaxTokens() int { return w.cfg.maxTokens }

// Counter returns the window's token counter.
func (w *Window) Counter() tokens.Counter { return w.cfg.counter }

// Append adds a round at the end of the window and evicts the oldest whole
// rounds while a cap is exceeded; the newest round always stays, truncated
// with a visible marker if it alone exceeds the token budget (its whole text
// goes to the eviction callback at once, so it is not lost). A zero Time is
// set to now.
//
// Evicted rounds are handed to the eviction callback after the lock is
// released, before Append returns. If the callback fails, Append still has
// appended the round and returns an error wrapping [ErrEvict] and the
// callback's error; the rounds not taken stay pending (see [Window.Settle]).
func (w *Window) Append(ctx context.Context, r Round) error {
	if strings.TrimSpace(r.User) == "" || strings.TrimSpace(r.Assistant) == "" {
		return fmt.Errorf("window: append: user input and answer must both be non-empty: %w", ErrEmptyRound)
	}
	r = r.clone()
	r.Truncated = 0
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	w.mu.Lock()
	w.push(r)
	settle := len(w.pending) > 0
	w.mu.Unlock()
	if settle {
		return w.Settle(ctx)
	}
	return nil
}

// push appends r, truncating it if needed, and evicts. w.mu must be held.
func (w *Window) push(r Round) {
	e := entry{Round: r, cost: r.Cost(w.cfg.counter)}
	if e.cost > w.cfg.maxTokens {
		e = w.truncate(r)
		if w.cfg.onEvict != nil {
			w.pending = append(w.pending, r) // the whole round moves on now
		}
	}
	w.rounds = append(w.rounds, e)
	w.cost += e.cost
	w.evictLocked()
}

// truncate cuts r to fit the budget: the user input keeps up to half of the
// room (more if the answer is short), the answer the rest.
func (w *Window) truncate(r Round) entry {
	c := w.cfg.counter
	room := w.cfg.maxTokens - 2*tokens.MessageOverhead
	u, a := c.Count(r.User), c.Count(r.Assistant)
	userCap := min(u, max(room-a, room/2))
	var cutU, cutA int
	r.User, cutU = tokens.Truncate(c, r.User, userCap)
	r.Assistant, cutA = tokens.Truncate(c, r.Assistant, room-c.Count(r.User))
	r.Truncated = cutU + cutA
	return entry{Round: r, cost: r.Cost(c), settled: w.cfg.onEvict != nil}
}

// Settle hands the pending evicted rounds to the eviction callback, oldest
// first, and returns the first error wrapped in [ErrEvict]; that round and
// those after it stay pending. Append calls Settle itself; call it to retry
// after a failure, e.g. when the long-term memory is reachable again.
func (w *Window) Settle(ctx context.Context) error {
	w.settleMu.Lock()
	defer w.settleMu.Unlock()
	for {
		w.mu.Lock()
		if len(w.pending) == 0 || w.cfg.onEvict == nil {
			w.pending = nil
			w.mu.Unlock()
			return nil
		}
		r := w.pending[0]
		left := len(w.pending)
		w.mu.Unlock()
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%w: %d rounds pending: %w", ErrEvict, left, err)
		}
		if err := w.cfg.onEvict(ctx, r.clone()); err != nil {
			return fmt.Errorf("%w: round of %s (%d pending): %w", ErrEvict, r.Time.Format(time.RFC3339), left, err)
		}
		w.mu.Lock()
		// Only Settle removes from the front and settleMu is held, so the
		// front is still r.
		w.pending[0] = Round{}
		w.pending = w.pending[1:]
		w.mu.Unlock()
	}
}

// Rounds returns a copy of the rounds in the window, oldest first.
func (w *Window) Rounds() []Round {
	w.mu.Lock()
	defer w.mu.Unlock()
	return clones(w.rounds, entry.clone)
}

// clones returns the clones of s's elements.
func clones[E, R any](s []E, clone func(E) R) []R {
	out := make([]R, len(s))
	for i, e := range s {
		out[i] = clone(e)
	}
	return out
}

// Len returns the number of rounds in the window.
func (w *Window) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.rounds)
}

// Tokens returns what the rounds in the window cost, in tokens.
func (w *Window) Tokens() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cost
}

// Pending returns the number of evicted rounds the callback has not taken.
func (w *Window) Pending() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending)
}

// State is a window's contents, for saving and restoring.
type State struct {
	Rounds  []Round `json:"rounds"`            // oldest first
	Pending []Round `json:"pending,omitempty"` // evicted, not yet settled
}

// State returns a copy of the window's contents.
func (w *Window) State() State {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := State{Rounds: clones(w.rounds, entry.clone)}
	for _, r := range w.pending {
		s.Pending = append(s.Pending, r.clone())
	}
	return s
}

// Restore replaces the window's contents with s. Rounds are appended in
// order under the window's own caps, so a state saved by a larger window
// evicts its oldest rounds into the pending queue; call [Window.Settle] to
// hand them on. Saved pending rounds are kept only if the window has an
// eviction callback. A round with empty text is an error wrapping
// [ErrEmptyRound] and leaves the window unchanged.
func (w *Window) Restore(s State) error {
	for i, r := range s.Rounds {
		if strings.TrimSpace(r.User) == "" || strings.TrimSpace(r.Assistant) == "" {
			return fmt.Errorf("window: restore: round %d has no user input or no answer: %w", i, ErrEmptyRound)
		}
	}
	w.settleMu.Lock() // no Settle in flight while pending is replaced
	defer w.settleMu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rounds, w.cost, w.pending = nil, 0, nil
	if w.cfg.onEvict != nil {
		for _, r := range s.Pending {
			w.pending = append(w.pending, r.clone())
		}
	}
	for _, r := range s.Rounds {
		r = r.clone()
		if r.Truncated > 0 {
			// Already cut (and its whole text already handed on) when it was
			// first appended: keep it as it is.
			e := entry{Round: r, cost: r.Cost(w.cfg.counter), settled: true}
			if e.cost <= w.cfg.maxTokens {
				w.rounds = append(w.rounds, e)
				w.cost += e.cost
				w.evictLocked()
				continue
			}
			r.Truncated = 0
		}
		w.push(r)
	}
	return nil
}

// evictLocked drops the oldest rounds while a cap is exceeded; w.mu held.
func (w *Window) evictLocked() {
	for len(w.rounds) > 1 && (len(w.rounds) > w.cfg.maxRounds || w.cost > w.cfg.maxTokens) {
		old := w.rounds[0]
		w.rounds[0] = entry{} // let the strings go
		w.rounds = w.rounds[1:]
		w.cost -= old.cost
		if w.cfg.onEvict != nil && !old.settled {
			w.pending = append(w.pending, old.Round)
		}
	}
}
