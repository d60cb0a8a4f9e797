package agent

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/window"
	"github.com/agentmem/agentmem/memory/window/tokens"
)

// Errors returned while assembling a prompt.
var (
	// ErrEmptyInput: the user's input is empty or white space.
	ErrEmptyInput = errors.New("agent: empty input")
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
	Messages []api.Message
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

// Assemble builds the prompt for p. See [Assembler] for how the budget is
// shared.
func (a Assembler) Assemble(p Parts) (Prompt, error) {
	a = a.withDefaults()
	c := a.Counter
	if strings.TrimSpace(p.Input) == "" {
		return Prompt{}, ErrEmptyInput
	}
	if a.Budget < 0 {
		return Prompt{}, fmt.Errorf("%w: budget %d", ErrBudget, a.Budget)
	}
	system := strings.TrimSpace(p.System)
	sysCost := 0
	if system != "" {
		sysCost = tokens.Message(c, system)
	}
	if sysCost > a.Budget {
		return Prompt{}, fmt.Errorf("%w: the system prompt alone needs %d tokens, budget is %d", ErrBudget, sysCost, a.Budget)
	}
	inCost := tokens.Message(c, p.Input)
	if sysCost+inCost > a.Budget {
		return Prompt{}, fmt.Errorf("%w: system prompt (%d tokens) and input (%d tokens) need %d, budget is %d",
			ErrBudget, sysCost, inCost, sysCost+inCost, a.Budget)
	}
	left := a.Budget - sysCost - inCost

	// The system message opens with the system prompt; sections follow. If
	// there is no system prompt, the first section pays the message overhead.
	sysOpen := system != ""
	sectionCost := func(text string) int {
		if sysOpen {
			return c.Count(sectionSep + text)
		}
		return tokens.Message(c, text)
	}

	// 2. The last round.
	var last *window.Round
	if n := len(p.Rounds); n > 0 {
		r := p.Rounds[n-1]
		if cost := r.Cost(c); cost <= left {
			last = &r
		} else if cut, ok := cutRound(c, r, left); ok {
			last = &cut
		}
		if last != nil {
			left -= last.Cost(c)
		}
	}

	// 3. The workflow summary.
	var sections []string
	var workflow string
	if wf := strings.TrimSpace(p.Workflow); wf != "" {
		limit := min(left, int(a.WorkflowShare*float64(a.Budget)))
		text := workflowHeader + wf
		cost := sectionCost(text)
		if cost > limit {
			// Cut the summary, keeping its header, if a useful part fits.
			room := limit - (cost - c.Count(wf)) // what the summary may cost
			if room >= minUseful {
				wf, _ = tokens.Truncate(c, wf, room)
				text = workflowHeader + wf
				cost = sectionCost(text)
			}
		}
		if cost <= limit {
			workflow = text
			sections = append(sections, text)
			left -= cost
			sysOpen = true
		}
	}

	// 4. Recalled memories.
	var recalled string
	nRecalled := 0
	if len(p.Recalled) > 0 {
		limit := min(left, int(a.RecallShare*float64(a.Budget)))
		inWindow := make(map[string]bool, len(p.Rounds))
		for _, r := range p.Rounds {
			inWindow[r.Text()] = true
		}
		// Lines are priced one by one; the whole prompt is checked at the
		// end in case the counter is not additive.
		var lines []string
		used := sectionCost(recallHeader)
		for _, h := range p.Recalled {
			text := strings.TrimSpace(h.Text)
			if text == "" || inWindow[text] {
				continue
			}
			label := "\n- [" + stamp(h.Time) + "] "
			body := oneLine(text)
			if cost := c.Count(label + body); used+cost <= limit {
				lines = append(lines, label+body)
				used += cost
				continue
			}
			// The first hit that does not fit whole is cut if a useful part
			// fits; then recall stops, keeping the best-first order.
			if room := limit - used - c.Count(label); room >= minUseful {
				if cut, _ := tokens.Truncate(c, body, room); cut != "" {
					lines = append(lines, label+cut)
				}
			}
			break
		}
		var b strings.Builder
		if len(lines) > 0 {
			b.WriteString(recallHeader)
			b.WriteString(strings.TrimPrefix(strings.Join(lines, ""), "\n"))
			nRecalled = len(lines)
		}
		if nRecalled > 0 {
			recalled = b.String()
			sections = append(sections, recalled)
			left -= sectionCost(recalled)
			sysOpen = true
		}
	}

	// 5. Older rounds, newest first, while whole rounds fit.
	first := len(p.Rounds)
	roundsCost := 0 // of the older rounds included, p.Rounds[first:len-1]
	costs := make([]int, len(p.Rounds))
	if last != nil {
		first--
		for first > 0 {
			cost := p.Rounds[first-1].Cost(c)
			if cost > left {
				break
			}
			costs[first-1] = cost
			roundsCost += cost
			left -= cost
			first--
		}
	}

	pr := Prompt{Budget: a.Budget, Recalled: nRecalled, Workflow: workflow != ""}
	// Round messages were priced exactly (each message on its own), so only
	// the system message, built from several parts, is priced again whole.
	build := func() {
		pr.Messages = pr.Messages[:0]
		pr.Tokens = inCost
		if head := strings.Join(append([]string{system}, sections...), sectionSep); strings.TrimSpace(head) != "" {
			head = strings.TrimLeft(head, "\n")
			pr.Messages = append(pr.Messages, api.Message{Role: "system", Content: head})
			pr.Tokens += tokens.Message(c, head)
		}
		pr.Rounds = 0
		if last != nil {
			for _, r := range p.Rounds[first : len(p.Rounds)-1] {
				pr.Messages = append(pr.Messages, api.Message{Role: "user", Content: r.User}, api.Message{Role: "assistant", Content: r.Assistant})
			}
			pr.Messages = append(pr.Messages, api.Message{Role: "user", Content: last.User}, api.Message{Role: "assistant", Content: last.Assistant})
			pr.Rounds = len(p.Rounds) - first
			pr.Tokens += roundsCost + last.Cost(c)
		}
		pr.Messages = append(pr.Messages, api.Message{Role: "user", Content: p.Input})
	}
	build()
	// The parts were priced one by one; a counter that is not additive could
	// make the whole dearer. Give back room, least important first, until
	// the promise holds.
	for pr.Tokens > a.Budget {
		switch {
		case last != nil && first < len(p.Rounds)-1:
			roundsCost -= costs[first]
			first++
		case recalled != "" || workflow != "":
			sections = sections[:len(sections)-1]
			if recalled != "" {
				recalled, pr.Recalled = "", 0
			} else {
				workflow, pr.Workflow = "", false
			}
		case last != nil:
			last, pr.Rounds = nil, 0
			first = len(p.Rounds)
		default:
			return Prompt{}, fmt.Errorf("%w: system prompt and input need %d tokens, budget is %d", ErrBudget, pr.Tokens, a.Budget)
		}
		build()
	}
	return pr, nil
}

// minUseful is the fewest tokens worth giving to a cut section or memory.
const minUseful = 24

// Cost returns what msgs cost under c: each message's content plus
// [tokens.MessageOverhead].
func Cost(c tokens.Counter, msgs []api.Message) int {
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

// oneLine folds a memory onto one line so the list stays a list.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
