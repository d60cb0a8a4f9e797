package window

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentmem/agentmem/memory/window/tokens"
)

// Status is where a workflow step stands.
type Status string

// Step statuses.
const (
	InProgress Status = "in progress"
	Done       Status = "done"
	Failed     Status = "failed"
)

func (s Status) valid() bool { return s == InProgress || s == Done || s == Failed }

func (s Status) finished() bool { return s == Done || s == Failed }

// A Step is one step of the task on the workflow track.
type Step struct {
	ID     int       `json:"id"`               // assigned by the track, from 1
	Goal   string    `json:"goal"`             // what the step is for
	Action string    `json:"action,omitempty"` // what the agent does or did
	Result string    `json:"result,omitempty"` // what came of it
	Status Status    `json:"status"`
	Tried  []string  `json:"tried,omitempty"` // attempts so far, oldest first
	Time   time.Time `json:"time"`            // last change
}

func (s Step) clone() Step {
	s.Tried = slices.Clone(s.Tried)
	return s
}

// Earlier sums up the finished steps the track has collapsed.
type Earlier struct {
	Done   int      `json:"done"`
	Failed int      `json:"failed"`
	Goals  []string `json:"goals,omitempty"` // the most recent collapsed goals, failed ones marked "✗"
}

// keepGoals is how many collapsed goals the one-line summary names.
const keepGoals = 4

// Defaults for [NewTrack].
const (
	DefaultMaxSteps    = 8
	DefaultTrackTokens = 512
)

// A TrackOption configures a [Track].
type TrackOption func(*trackConfig) error

type trackConfig struct {
	maxSteps int
	budget   // window.go
}

// WithMaxSteps caps the steps the track lists one by one (default
// [DefaultMaxSteps]); older finished steps collapse into one line.
func WithMaxSteps(n int) TrackOption {
	return func(c *trackConfig) error { return setCount(&c.maxSteps, "track max steps", n) }
}

// WithTrackTokens caps the rendered summary at n tokens (default
// [DefaultTrackTokens], at least [MinTokens]).
func WithTrackTokens(n int) TrackOption {
	return func(c *trackConfig) error { return c.setTokens("track tokens", n) }
}

// WithTrackCounter sets the token counter (default [tokens.Default]).
func WithTrackCounter(tc tokens.Counter) TrackOption {
	return func(c *trackConfig) error { return c.setCounter("track: ", tc) }
}

// A Track is the workflow track beside the conversation window: the task,
// its steps with goal, action, result and status, what was tried, and where
// the agent stands. It is bounded on its own: past the step cap the oldest
// finished steps collapse into a one-line summary ([Earlier]) rather than
// vanish. It is safe for concurrent use by multiple goroutines; the zero
// value is not usable, call [NewTrack].
type Track struct {
	cfg trackConfig

	mu       sync.Mutex
	task     string
	position string
	steps    []Step // oldest first
	earlier  Earlier
	nextID   int
}

// NewTrack returns an empty track.
func NewTrack(opts ...TrackOption) (*Track, error) {
	cfg := trackConfig{maxSteps: DefaultMaxSteps, budget: budget{maxTokens: DefaultTrackTokens, counter: tokens.Default}}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	return &Track{cfg: cfg, nextID: 1}, nil
}

// SetTask sets the overall task the steps serve.
func (t *Track) SetTask(task string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.task = strings.TrimSpace(task)
}

// SetPosition records where the agent stands, e.g. "waiting for the user to
// confirm the schema".
func (t *Track) SetPosition(pos string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.position = strings.TrimSpace(pos)
}

// Begin adds a step in progress and returns its ID.
func (t *Track) Begin(goal, action string) (int, error) {
	return t.Add(Step{Goal: goal, Action: action, Status: InProgress})
}

// Add records a step (for example one already done) and returns its ID;
// the ID and, when zero, the Time are set by the track. A step needs a goal
// and a valid status (an empty status means [InProgress]); otherwise the
// error wraps [ErrInvalidStep]. When the step cap is reached and every
// listed step is still in progress, the error wraps [ErrTrackFull].
func (t *Track) Add(s Step) (int, error) {
	s.Goal = strings.TrimSpace(s.Goal)
	if s.Goal == "" {
		return 0, fmt.Errorf("%w: empty goal", ErrInvalidStep)
	}
	if s.Status == "" {
		s.Status = InProgress
	}
	if !s.Status.valid() {
		return 0, fmt.Errorf("%w: status %q, want %q, %q or %q", ErrInvalidStep, s.Status, InProgress, Done, Failed)
	}
	if s.Time.IsZero() {
		s.Time = time.Now()
	}
	s = s.clone()
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.steps) >= t.cfg.maxSteps && !slices.ContainsFunc(t.steps, func(s Step) bool { return s.Status.finished() }) {
		return 0, fmt.Errorf("%w: %d steps in progress; finish one first", ErrTrackFull, len(t.steps))
	}
	s.ID = t.nextID
	t.nextID++
	t.steps = append(t.steps, s)
	t.collapse(t.cfg.maxSteps)
	return s.ID, nil
}

// Try records an attempt on a step.
func (t *Track) Try(id int, attempt string) error {
	attempt = strings.TrimSpace(attempt)
	if attempt == "" {
		return fmt.Errorf("%w: empty attempt", ErrInvalidStep)
	}
	return t.update(id, func(s *Step) { s.Tried = append(s.Tried, attempt) })
}

// Finish marks a step [Done] or [Failed] with its result.
func (t *Track) Finish(id int, status Status, result string) error {
	if !status.finished() {
		return fmt.Errorf("%w: finish with status %q, want %q or %q", ErrInvalidStep, status, Done, Failed)
	}
	return t.update(id, func(s *Step) {
		s.Status = status
		s.Result = strings.TrimSpace(result)
	})
}

func (t *Track) update(id int, fn func(*Step)) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	i := slices.IndexFunc(t.steps, func(s Step) bool { return s.ID == id })
	if i < 0 {
		return fmt.Errorf("%w: %d (collapsed or never added)", ErrUnknownStep, id)
	}
	fn(&t.steps[i])
	t.steps[i].Time = time.Now()
	t.collapse(t.cfg.maxSteps)
	return nil
}

// collapse folds the oldest finished steps into t.earlier until at most
// limit steps are listed. t.mu must be held.
func (t *Track) collapse(limit int) {
	for len(t.steps) > limit {
		i := slices.IndexFunc(t.steps, func(s Step) bool { return s.Status.finished() })
		if i < 0 {
			return // steps in progress never collapse
		}
		s := t.steps[i]
		t.steps = slices.Delete(t.steps, i, i+1)
		goal := s.Goal
		if s.Status == Failed {
			t.earlier.Failed++
			goal += " ✗"
		} else {
			t.earlier.Done++
		}
		t.earlier.Goals = append(t.earlier.Goals, goal)
		if len(t.earlier.Goals) > keepGoals {
			t.earlier.Goals = slices.Delete(t.earlier.Goals, 0, len(t.earlier.Goals)-keepGoals)
		}
	}
}

// Steps returns a copy of the listed steps, oldest first.
func (t *Track) Steps() []Step {
	t.mu.Lock()
	defer t.mu.Unlock()
	return clones(t.steps, Step.clone)
}

// Empty reports whether the track has nothing to say.
func (t *Track) Empty() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.task == "" && t.position == "" && len(t.steps) == 0 && t.earlier.Done+t.earlier.Failed == 0
}

// Summary renders the track for a prompt, within the track's token cap:
//
//	Task: migrate the users table
//	Earlier: 3 done, 1 failed (add columns; backfill ✗; …)
//	#5 [done] switch reads — flag on → error rate flat
//	#6 [in progress] drop old columns — wait for release (tried: …)
//	Now: waiting for the release train
//
// If the rendering is over the cap, more finished steps collapse; if it is
// still over, the text is cut with a marker. An empty track renders "".
func (t *Track) Summary() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := t.render()
	for t.cfg.counter.Count(out) > t.cfg.maxTokens {
		n := len(t.steps)
		t.collapse(n - 1)
		if len(t.steps) == n {
			break
		}
		out = t.render()
	}
	out, _ = tokens.Truncate(t.cfg.counter, out, t.cfg.maxTokens)
	return out
}

func (t *Track) render() string {
	var b strings.Builder
	if t.task != "" {
		fmt.Fprintf(&b, "Task: %s\n", t.task)
	}
	if e := t.earlier; e.Done+e.Failed > 0 {
		fmt.Fprintf(&b, "Earlier: %d done, %d failed", e.Done, e.Failed)
		if len(e.Goals) > 0 {
			more := ""
			if e.Done+e.Failed > len(e.Goals) {
				more = "…; "
			}
			fmt.Fprintf(&b, " (%s%s)", more, strings.Join(e.Goals, "; "))
		}
		b.WriteByte('\n')
	}
	for _, s := range t.steps {
		fmt.Fprintf(&b, "#%d [%s] %s", s.ID, s.Status, s.Goal)
		if s.Action != "" {
			fmt.Fprintf(&b, " — %s", s.Action)
		}
		if s.Result != "" {
			fmt.Fprintf(&b, " → %s", s.Result)
		}
		if len(s.Tried) > 0 {
			fmt.Fprintf(&b, " (tried: %s)", strings.Join(s.Tried, "; "))
		}
		b.WriteByte('\n')
	}
	if t.position != "" {
		fmt.Fprintf(&b, "Now: %s\n", t.position)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// TrackState is a track's contents, for saving and restoring.
type TrackState struct {
	Task     string  `json:"task,omitempty"`
	Position string  `json:"position,omitempty"`
	Steps    []Step  `json:"steps,omitempty"`
	Earlier  Earlier `json:"earlier"`
	NextID   int     `json:"next_id"`
}

// State returns a copy of the track's contents.
func (t *Track) State() TrackState {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := TrackState{Task: t.task, Position: t.position, NextID: t.nextID, Earlier: t.earlier}
	s.Earlier.Goals = slices.Clone(t.earlier.Goals)
	for _, st := range t.steps {
		s.Steps = append(s.Steps, st.clone())
	}
	return s
}

// Restore replaces the track's contents with s, collapsing steps past the
// track's own cap. A step without a goal, with an unknown status or a
// duplicate ID is an error wrapping [ErrInvalidStep] and leaves the track
// unchanged.
func (t *Track) Restore(s TrackState) error {
	seen := map[int]bool{}
	next := max(s.NextID, 1)
	for _, st := range s.Steps {
		if strings.TrimSpace(st.Goal) == "" || !st.Status.valid() || st.ID <= 0 || seen[st.ID] {
			return fmt.Errorf("%w: restored step %d", ErrInvalidStep, st.ID)
		}
		seen[st.ID] = true
		next = max(next, st.ID+1)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.task, t.position, t.nextID = s.Task, s.Position, next
	t.earlier = s.Earlier
	t.earlier.Goals = slices.Clone(s.Earlier.Goals)
	t.steps = t.steps[:0:0]
	for _, st := range s.Steps {
		t.steps = append(t.steps, st.clone())
	}
	t.collapse(t.cfg.maxSteps)
	return nil
}
