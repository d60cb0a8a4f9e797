package agent

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentmem/agentmem/internal/errs"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/window"
	"github.com/agentmem/agentmem/memory/window/tokens"
)

// Errors returned while assembling a prompt.
var (
	// ErrEmptyInput: the user's input is empty or white space. It is
	// agentmem's shared empty-input sentinel (embed.ErrEmptyText and
	// window.ErrEmptyRound are the same value).
	ErrEmptyInput = errs.EmptyInput
	// ErrBudget: the token budget cannot hold the system prompt and the
	// new input, the two parts that are never cut.
	ErrBudget = errors.New("agent: token budget too small")
)

// Defaults for an [Assembler].
const (
	DefaultBudget        = 8192
	DefaultRecallShare   = 0.25
	DefaultWorkflowShare = 0.15
)

// Parts are what a prompt is assembled from.
type Parts struct {
	System   string         // the system prompt; never cut
	Recalled []memory.Hit   // memories retrieved for Input, best first
	Workflow string         // the workflow track's summary (window.Track.Summary)
	Rounds   []window.Round // the conversation window, oldest first
	Input    string         // the new user input; never cut
}

// An Assembler builds chat messages from [Parts] under a token budget. The
// zero value uses the defaults. An Assembler is a value without state: safe
// for concurrent use, deterministic for the same Parts.
//
// The budget is shared in this order, each part taking what it needs from
// what is left:
//
//  1. the system prompt and the new input, whole: if they do not fit, the
//     result is an error wrapping [ErrBudget];
//  2. the last round of the window, cut with a marker if it alone does not
//     fit — recalled memories never crowd it out;
//  3. the workflow summary, at most WorkflowShare of the budget;
//  4. recalled memories, best first, at most RecallShare of the budget,
//     each labelled with the time it was stored; hits that repeat a round
//     still in the window (the same [window.Round.Text]) are skipped;
//  5. older rounds of the window, newest first, whole rounds only, while
//     they fit — the oldest are the first left out.
//
// The messages are: one system message (system prompt, then the workflow
// and recalled sections), the included rounds as user/assistant pairs,
// oldest first, then the new input. A message costs its content plus
// [tokens.MessageOverhead]; the total never exceeds the budget.
//
// The budget is counted by Counter. With the default estimate, a model's
// own tokenizer may count up to about 15–20% more on some text (see
// package tokens), so give the model a context (Ollama's num_ctx) with that
// much headroom plus room for the answer.
type Assembler struct {
	Budget        int            // total tokens; 0 means DefaultBudget
	Counter       tokens.Counter // nil means tokens.Default; see tokens.Cached for repeated use
	RecallShare   float64        // share of Budget for recalled memories; 0 means DefaultRecallShare
	WorkflowShare float64        // share of Budget for the workflow summary; 0 means DefaultWorkflowShare
}

// Prompt is an assembled prompt.
type Prompt struct {
	Messages []Message
	Tokens   int  // what Messages cost; at most Budget
	Budget   int  // the budget it was assembled under
	Rounds   int  // window rounds included (the most recent ones)
	Recalled int  // recalled memories included
	Workflow bool // the workflow summary was included
}

// String renders the messages for people, e.g. for `agentmem chat --dry-run`:
// each message under a "── role ──" rule.
func (p Prompt) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %d messages, %d of %d tokens: %d rounds, %d recalled memories, workflow: %t\n",
		len(p.Messages), p.Tokens, p.Budget, p.Rounds, p.Recalled, p.Workflow)
	for _, m := range p.Messages {
		fmt.Fprintf(&b, "── %s ──\n%s\n", m.Role, m.Content)
	}
	return b.String()
}

// Section headers inside the system message.
const (
	workflowHeader = "Workflow (where the task stands):\n"
	recallHeader   = "Recalled from long-term memory (earlier conversation; use if relevant):\n"
	sectionSep     = "\n\n"
)

func (a Assembler) withDefaults() Assembler {
	if a.Budget == 0 {
		a.Budget = DefaultBudget
	}
	if a.Counter == nil {
		a.Counter = tokens.Default
	}
	if a.RecallShare <= 0 {
		a.RecallShare = DefaultRecallShare
	}
	if a.WorkflowShare <= 0 {
		a.WorkflowShare = DefaultWorkflowShare
	}
	return a
}

// errEmptyInput is the error for an input with nothing in it.
func errEmptyInput() error {
	return fmt.Errorf("agent: the input is empty or white space: %w", ErrEmptyInput)
}

// Assemble builds the prompt for p. See [Assembler] for how the budget is
// shared; each numbered rule there is one step below.
func (a Assembler) Assemble(p Parts) (Prompt, error) {
	a = a.withDefaults()
	if strings.TrimSpace(p.Input) == "" {
		return Prompt{}, errEmptyInput()
	}
	s, err := a.reserve(p)
	if err != nil {
		return Prompt{}, err
	}
	s.fitLastRound()
	s.fitWorkflow()
	s.fitRecalled()
	s.fitOlderRounds()
	return s.finish()
}

// assembly is one prompt being assembled: what each step chose so far and
// the tokens left.
type assembly struct {
	a      Assembler // with defaults
	c      tokens.Counter
	p      Parts
	system string // the trimmed system prompt
	inCost int    // what the input message costs
	left   int    // tokens not yet given to a part

	// sysOpen: the system message is open, so the next section costs its
	// text and a separator; otherwise the first section pays the message
	// overhead.
	sysOpen bool

	last       *window.Round // the last round, perhaps cut; nil if left out
	workflow   string        // the workflow section, "" if left out
	recalled   string        // the recalled-memories section, "" if left out
	nRecalled  int           // memories in recalled
	first      int           // p.Rounds[first:] are in the prompt (when last != nil)
	roundsCost int           // of the older rounds included, p.Rounds[first:len-1]
	costs      []int         // the cost of each older round included
}

// reserve is step 1: it sets aside the system prompt and the new input,
// whole, and fails with [ErrBudget] if they do not fit.
func (a Assembler) reserve(p Parts) (*assembly, error) {
	c := a.Counter
	if a.Budget < 0 {
		return nil, fmt.Errorf("%w: budget %d", ErrBudget, a.Budget)
	}
	system := strings.TrimSpace(p.System)
	sysCost := 0
	if system != "" {
		sysCost = tokens.Message(c, system)
	}
	if sysCost > a.Budget {
		return nil, fmt.Errorf("%w: the system prompt alone needs %d tokens, budget is %d", ErrBudget, sysCost, a.Budget)
	}
	inCost := tokens.Message(c, p.Input)
	if sysCost+inCost > a.Budget {
		return nil, fmt.Errorf("%w: system prompt (%d tokens) and input (%d tokens) need %d, budget is %d",
			ErrBudget, sysCost, inCost, sysCost+inCost, a.Budget)
	}
	return &assembly{
		a: a, c: c, p: p, system: system, inCost: inCost,
		left:    a.Budget - sysCost - inCost,
		sysOpen: system != "",
		first:   len(p.Rounds),
		costs:   make([]int, len(p.Rounds)),
	}, nil
}

// sectionCost is what text costs as the next section of the system message.
func (s *assembly) sectionCost(text string) int {
	if s.sysOpen {
		return s.c.Count(sectionSep + text)
	}
	return tokens.Message(s.c, text)
}

// fitLastRound is step 2: the window's last round goes in whole if it fits,
// cut with a marker if only a useful part of it fits. Recalled memories never
// crowd it out.
func (s *assembly) fitLastRound() {
	n := len(s.p.Rounds)
	if n == 0 {
		return
	}
	r := s.p.Rounds[n-1]
	if r.Cost(s.c) <= s.left {
		s.last = &r
	} else if cut, ok := cutRound(s.c, r, s.left); ok {
		s.last = &cut
	}
	if s.last != nil {
		s.left -= s.last.Cost(s.c)
		s.first = n - 1
	}
}

// fitWorkflow is step 3: the workflow summary, under its header, takes at
// most WorkflowShare of the budget; a summary too long is cut if a useful
// part fits.
func (s *assembly) fitWorkflow() {
	wf := strings.TrimSpace(s.p.Workflow)
	if wf == "" {
		return
	}
	limit := min(s.left, int(s.a.WorkflowShare*float64(s.a.Budget)))
	text := workflowHeader + wf
	cost := s.sectionCost(text)
	if cost > limit {
		room := limit - (cost - s.c.Count(wf)) // what the summary may cost
		if room >= minUseful {
			wf, _ = tokens.Truncate(s.c, wf, room)
			text = workflowHeader + wf
			cost = s.sectionCost(text)
		}
	}
	if cost <= limit {
		s.workflow = text
		s.left -= cost
		s.sysOpen = true
	}
}

// fitRecalled is step 4: recalled memories, best first, take at most
// RecallShare of the budget (see [recallLines]).
func (s *assembly) fitRecalled() {
	if len(s.p.Recalled) == 0 {
		return
	}
	limit := min(s.left, int(s.a.RecallShare*float64(s.a.Budget)))
	inWindow := make(map[string]bool, len(s.p.Rounds))
	for _, r := range s.p.Rounds {
		inWindow[r.Text()] = true
	}
	lines := recallLines(s.c, s.p.Recalled, inWindow, limit-s.sectionCost(recallHeader))
	if len(lines) == 0 {
		return
	}
	s.recalled = recallHeader + strings.TrimPrefix(strings.Join(lines, ""), "\n")
	s.nRecalled = len(lines)
	s.left -= s.sectionCost(s.recalled)
	s.sysOpen = true
}

// recallLines returns the list lines ("\n- [time] speaker: text": said) for hits, best
// first, that cost at most room under c. Hits with no text, or that repeat a
// round still in the window (inWindow holds their [window.Round.Text]), are
// skipped. The first hit that does not fit whole is cut if a useful part
// fits, and the list stops there, keeping the best-first order. Lines are
// priced one by one; [assembly.finish] checks the whole prompt in case the
// counter is not additive.
func recallLines(c tokens.Counter, hits []memory.Hit, inWindow map[string]bool, room int) []string {
	var lines []string
	used := 0
	for _, h := range hits {
		text := strings.TrimSpace(h.Text)
		if text == "" || inWindow[text] {
			continue
		}
		label := "\n- [" + stamp(h.Time) + "] " + said(h.Speaker, text)
		body := oneLine(text)
		if cost := c.Count(label + body); used+cost <= room {
			lines = append(lines, label+body)
			used += cost
			continue
		}
		if rest := room - used - c.Count(label); rest >= minUseful {
			if cut, _ := tokens.Truncate(c, body, rest); cut != "" {
				lines = append(lines, label+cut)
			}
		}
		break
	}
	return lines
}

// fitOlderRounds is step 5: the rounds before the last one, newest first,
// whole rounds only, while they fit. Without the last round there are none.
func (s *assembly) fitOlderRounds() {
	if s.last == nil {
		return
	}
	for s.first > 0 {
		cost := s.p.Rounds[s.first-1].Cost(s.c)
		if cost > s.left {
			break
		}
		s.costs[s.first-1] = cost
		s.roundsCost += cost
		s.left -= cost
		s.first--
	}
}

// prompt builds the messages of what the steps chose. Round messages were
// priced exactly (each message on its own), so only the system message,
// built from several parts, is priced again whole.
func (s *assembly) prompt() Prompt {
	pr := Prompt{Budget: s.a.Budget, Tokens: s.inCost, Recalled: s.nRecalled, Workflow: s.workflow != ""}
	head := s.system
	for _, sec := range []string{s.workflow, s.recalled} {
		if sec != "" {
			head += sectionSep + sec
		}
	}
	if head = strings.TrimLeft(head, "\n"); strings.TrimSpace(head) != "" {
		pr.Messages = append(pr.Messages, Message{Role: RoleSystem, Content: head})
		pr.Tokens += tokens.Message(s.c, head)
	}
	if s.last != nil {
		rs := s.p.Rounds
		for _, r := range rs[s.first : len(rs)-1] {
			pr.Messages = append(pr.Messages, Message{Role: RoleUser, Content: r.User}, Message{Role: RoleAssistant, Content: r.Assistant})
		}
		pr.Messages = append(pr.Messages, Message{Role: RoleUser, Content: s.last.User}, Message{Role: RoleAssistant, Content: s.last.Assistant})
		pr.Rounds = len(rs) - s.first
		pr.Tokens += s.roundsCost + s.last.Cost(s.c)
	}
	pr.Messages = append(pr.Messages, Message{Role: RoleUser, Content: s.p.Input})
	return pr
}

// finish builds the prompt and keeps the budget's promise: the parts were
// priced one by one, and a counter that is not additive could make the whole
// dearer, so it gives back room, least important first (the oldest round,
// then recalled memories, then the workflow, then the last round), until
// the prompt fits.
func (s *assembly) finish() (Prompt, error) {
	for {
		pr := s.prompt()
		if pr.Tokens <= s.a.Budget {
			return pr, nil
		}
		switch {
		case s.last != nil && s.first < len(s.p.Rounds)-1:
			s.roundsCost -= s.costs[s.first]
			s.first++
		case s.recalled != "":
			s.recalled, s.nRecalled = "", 0
		case s.workflow != "":
			s.workflow = ""
		case s.last != nil:
			s.last = nil
			s.first = len(s.p.Rounds)
		default:
			return Prompt{}, fmt.Errorf("%w: system prompt and input need %d tokens, budget is %d", ErrBudget, pr.Tokens, s.a.Budget)
		}
	}
}

// minUseful is the fewest tokens worth giving to a cut section or memory.
const minUseful = 24

// Cost returns what msgs cost under c: each message's content plus
// [tokens.MessageOverhead].
func Cost(c tokens.Counter, msgs []Message) int {
	n := 0
	for _, m := range msgs {
		n += tokens.Message(c, m.Content)
	}
	return n
}

// cutRound cuts r to cost at most room, keeping the head of each part with
// a marker. It fails when room cannot hold two messages with useful text.
func cutRound(c tokens.Counter, r window.Round, room int) (window.Round, bool) {
	text := room - 2*tokens.MessageOverhead
	if text < 2*minUseful/3 {
		return window.Round{}, false
	}
	u := c.Count(r.User)
	userCap := min(u, max(text-c.Count(r.Assistant), text/2))
	var cutU, cutA int
	r.User, cutU = tokens.Truncate(c, r.User, userCap)
	r.Assistant, cutA = tokens.Truncate(c, r.Assistant, text-c.Count(r.User))
	if r.User == "" || r.Assistant == "" || r.Cost(c) > room {
		return window.Round{}, false
	}
	r.Truncated += cutU + cutA
	return r, true
}

// stamp labels a recalled memory with the time it was stored.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "time unknown"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// said labels a recalled memory with who said it ("user: "), so that a
// model tells what the user said from what it answered; nothing for a
// memory without a speaker, or whose text names its speaker already (a
// round, "User: …").
func said(speaker, text string) string {
	speaker = oneLine(speaker)
	if speaker == "" || len(text) > len(speaker) && strings.EqualFold(text[:len(speaker)], speaker) && text[len(speaker)] == ':' {
		return ""
	}
	return speaker + ": "
}

// oneLine folds a memory onto one line so the list stays a list.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
