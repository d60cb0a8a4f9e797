package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/agentmem/agentmem/memory"
)

// A FactStore is a memory whose records are facts that change and that
// answers queries: memory/longterm and memory/postgres.
type FactStore interface {
	memory.Facts
	memory.Querier
}

// Actions a [Reconciler]'s model may choose for a new memory.
const (
	// ActionAdd stores the new memory beside the others.
	ActionAdd = "add"
	// ActionSupersede stores it as the new version of a current memory
	// (memory.Facts.Supersede).
	ActionSupersede = "supersede"
	// ActionDuplicate stores nothing: a current memory says the same,
	// and counts as said again.
	ActionDuplicate = "duplicate"
	// ActionIgnore stores nothing: the new memory is not worth keeping.
	ActionIgnore = "ignore"
)

// ErrDecision: a model's answer to a [Reconciler] was not a decision it
// could apply (not JSON, an unknown action, an id that was not offered).
// Nothing was changed.
var ErrDecision = errors.New("agent: the model's decision cannot be applied")

// A Decision is what a [Reconciler] did with a new memory: the model's
// choice, the memory it names (for supersede and duplicate), the write's
// outcome and the model's answer as given.
type Decision struct {
	Action  string         `json:"action"`
	ID      string         `json:"id,omitempty"`
	Outcome memory.Outcome `json:"-"`
	Answer  string         `json:"-"`
}

// A Reconciler decides with a language model what a new memory is to the
// memories already stored (mem0's ADD/UPDATE/NOOP): it shows the model
// the new memory and the current memories most like it, and applies the
// model's choice through the store's own operations: Remember (add),
// Supersede (supersede), Remember of the stored text (duplicate: the
// store counts it as said again) or nothing (ignore). A memory store does
// this only when asked: writes do not go through a model by default.
type Reconciler struct {
	Store FactStore
	Model Model
	// K is how many similar memories the model sees (0: 5).
	K int
	// Logger receives one line per decision (nil: slog.Default()).
	Logger *slog.Logger
}

// reconcilePrompt is the system message of a decision.
const reconcilePrompt = `You keep a memory of facts for an assistant. A new memory arrives; decide what it is to the current memories shown with it.
Answer with one JSON object and nothing else: {"action": A, "id": ID} where A is
- "add": it is new information; keep it beside the others (no id),
- "supersede": it replaces the memory ID, which no longer holds (a move, a new job, a changed preference),
- "duplicate": the memory ID already says the same (no need to keep it twice),
- "ignore": it is not worth remembering (no id).`

// Reconcile decides what rec is and applies it. A model that fails, or
// answers with something that is not a decision about the memories shown
// (an error wrapping ErrDecision), changes nothing; the decision is
// logged either way.
func (r *Reconciler) Reconcile(ctx context.Context, rec memory.Record) (Decision, error) {
	log := cmp.Or(r.Logger, slog.Default())
	if strings.TrimSpace(rec.Text) == "" {
		return Decision{}, fmt.Errorf("agent: reconcile: %w", memory.ErrEmptyText)
	}
	// Every memory that matches at all: the model, not the relevance
	// threshold, decides what the new one is to them.
	hits, err := r.Store.Query(ctx, memory.Query{Text: rec.Text, Namespace: rec.Namespace, K: cmp.Or(r.K, 5), MinRelevance: -1})
	if err != nil {
		return Decision{}, fmt.Errorf("agent: reconcile: %w", err)
	}
	var shown strings.Builder
	fmt.Fprintf(&shown, "New memory: %q\n", rec.Text)
	if len(hits) == 0 {
		shown.WriteString("Current memories: none.\n")
	} else {
		shown.WriteString("Current memories:\n")
		for _, h := range hits {
			fmt.Fprintf(&shown, "- id %q: %q\n", h.ID, h.Text)
		}
	}
	var answer strings.Builder
	err = r.Model.Chat(ctx, []Message{{Role: RoleSystem, Content: reconcilePrompt}, {Role: RoleUser, Content: shown.String()}},
		func(chunk string) error { answer.WriteString(chunk); return nil })
	if err != nil {
		log.Warn("agent: reconcile: the model failed; nothing changed", "text", rec.Text, "err", err)
		return Decision{}, fmt.Errorf("agent: reconcile: %w", err)
	}
	d, err := parseDecision(answer.String(), hits)
	if err != nil {
		log.Warn("agent: reconcile: the model's answer is no decision; nothing changed", "text", rec.Text, "answer", answer.String(), "err", err)
		return d, err
	}
	switch d.Action {
	case ActionAdd:
		outs, err := r.Store.Remember(ctx, rec)
		if err != nil {
			return d, err
		}
		d.Outcome = outs[0]
	case ActionSupersede:
		if d.Outcome, err = r.Store.Supersede(ctx, d.ID, rec); err != nil {
			return d, err
		}
	case ActionDuplicate:
		h := hits[slices.IndexFunc(hits, func(h memory.Hit) bool { return h.ID == d.ID })]
		outs, err := r.Store.Remember(ctx, memory.Record{Text: h.Text, Namespace: h.Namespace, Speaker: h.Speaker})
		if err != nil {
			return d, err
		}
		d.Outcome = outs[0]
	}
	log.Info("agent: reconcile", "action", d.Action, "id", d.ID, "text", rec.Text, "stored", d.Outcome.ID)
	return d, nil
}

// parseDecision reads a model's answer: one JSON object, possibly in a
// code fence, naming an action and, for supersede and duplicate, one of
// the ids shown.
func parseDecision(answer string, shown []memory.Hit) (Decision, error) {
	s := strings.TrimSpace(answer)
	if i, j := strings.Index(s, "{"), strings.LastIndex(s, "}"); i >= 0 && j > i {
		s = s[i : j+1]
	}
	d := Decision{Answer: answer}
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		return d, fmt.Errorf("%w: %q is not a JSON object: %v", ErrDecision, answer, err)
	}
	d.Answer = answer
	switch d.Action {
	case ActionAdd, ActionIgnore:
		d.ID = ""
	case ActionSupersede, ActionDuplicate:
		if !slices.ContainsFunc(shown, func(h memory.Hit) bool { return h.ID == d.ID }) {
			return d, fmt.Errorf("%w: %s names %q, which is not one of the memories shown", ErrDecision, d.Action, d.ID)
		}
	default:
		return d, fmt.Errorf("%w: unknown action %q (want add, supersede, duplicate or ignore)", ErrDecision, d.Action)
	}
	return d, nil
}
