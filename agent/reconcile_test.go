package agent_test

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/agent"
	"github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/longterm"
)

// answer is a scripted model: it answers every conversation with its
// text, and keeps the last conversation it was sent.
type answer struct {
	text string
	got  []agent.Message
}

func (a *answer) Chat(_ context.Context, msgs []agent.Message, fn func(string) error) error {
	a.got = msgs
	return fn(a.text)
}

func TestReconciler(t *testing.T) {
	ctx := t.Context()
	emb, err := hash.New(256)
	require.NoError(t, err)
	mem, err := longterm.New(ctx, emb)
	require.NoError(t, err)
	var logs bytes.Buffer
	model := &answer{}
	r := &agent.Reconciler{Store: mem, Model: model, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	paris, err := mem.Add(ctx, memory.Record{Text: "Dana lives in Paris.", Namespace: "dana"})
	require.NoError(t, err)
	count := func() int { _, n, err := mem.List(ctx, memory.ListOptions{}); require.NoError(t, err); return n }

	// A malformed or wrong answer changes nothing and says why.
	for _, bad := range []string{"I think it is an update", `{"action": "supersede", "id": "nope"}`, `{"action": "delete"}`} {
		model.text = bad
		_, err := r.Reconcile(ctx, memory.Record{Text: "Dana moved to Berlin.", Namespace: "dana"})
		require.ErrorIs(t, err, agent.ErrDecision, bad)
		assert.Equal(t, 1, count(), "nothing stored after %q", bad)
	}
	assert.Contains(t, logs.String(), "nothing changed")

	// The model saw the new memory and the similar current one, by id.
	model.text = "```json\n{\"action\": \"supersede\", \"id\": \"" + paris + "\"}\n```"
	d, err := r.Reconcile(ctx, memory.Record{Text: "Dana moved to Berlin.", Namespace: "dana"})
	require.NoError(t, err)
	assert.Contains(t, model.got[1].Content, paris)
	assert.Contains(t, model.got[1].Content, "Dana moved to Berlin.")
	assert.Equal(t, agent.ActionSupersede, d.Action)
	assert.Equal(t, paris, d.Outcome.Superseded)
	h, err := mem.History(ctx, paris)
	require.NoError(t, err)
	require.Len(t, h, 2, "applied through Supersede")
	berlin := h[1].ID

	model.text = `{"action": "duplicate", "id": "` + berlin + `"}`
	d, err = r.Reconcile(ctx, memory.Record{Text: "Dana is living in Berlin these days.", Namespace: "dana"})
	require.NoError(t, err)
	assert.True(t, d.Outcome.Duplicate)
	got, _ := mem.Get(berlin)
	assert.Equal(t, 1, got.Seen, "a duplicate counts the stored memory as said again")

	model.text = `{"action": "ignore"}`
	_, err = r.Reconcile(ctx, memory.Record{Text: "ok thanks", Namespace: "dana"})
	require.NoError(t, err)
	model.text = `{"action": "add"}`
	d, err = r.Reconcile(ctx, memory.Record{Text: "Dana has a cat called Miso.", Namespace: "dana"})
	require.NoError(t, err)
	assert.NotEmpty(t, d.Outcome.ID)
	assert.Equal(t, 3, count(), "paris (history), berlin, the cat")
	assert.Contains(t, logs.String(), "action=supersede")
}
