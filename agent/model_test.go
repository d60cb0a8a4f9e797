package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/agent"
	"github.com/agentmem/agentmem/memory/window"
)

// modelFunc is an agent.Model in one function.
type modelFunc func(ctx context.Context, msgs []agent.Message, fn func(string) error) error

func (f modelFunc) Chat(ctx context.Context, msgs []agent.Message, fn func(string) error) error {
	return f(ctx, msgs, fn)
}

// chunks answers with the given pieces, then err.
func chunks(err error, pieces ...string) modelFunc {
	return func(_ context.Context, _ []agent.Message, fn func(string) error) error {
		for _, p := range pieces {
			if e := fn(p); e != nil {
				return e
			}
		}
		return err
	}
}

func TestChat_Model(t *testing.T) {
	var got []agent.Message
	m := modelFunc(func(ctx context.Context, msgs []agent.Message, fn func(string) error) error {
		got = msgs
		return chunks(nil, "Hel", "", "lo")(ctx, msgs, fn)
	})
	var out strings.Builder
	a, err := agent.New(m, agent.WithSystem("Be brief."), agent.WithStream(&out))
	require.NoError(t, err)
	answer, err := a.Chat(t.Context(), "hi")
	require.NoError(t, err)
	assert.Equal(t, "Hello", answer)
	assert.Equal(t, "Hello\n", out.String())
	assert.Equal(t, []agent.Message{{Role: agent.RoleSystem, Content: "Be brief."}, {Role: agent.RoleUser, Content: "hi"}}, got)
	assert.Equal(t, 1, a.Window().Len())
}

// TestChat_ModelErrors: a model's error is returned under the agent's
// sentinel, and the round writes nothing.
func TestChat_ModelErrors(t *testing.T) {
	plain := errors.New("GPU on fire")
	for _, tc := range []struct {
		name  string
		model agent.Model
		want  []error
	}{
		{"PlainError", chunks(plain, "partial"), []error{agent.ErrModel, plain}},
		{"Incomplete", chunks(fmt.Errorf("x: %w", agent.ErrIncomplete), "half"), []error{agent.ErrIncomplete}},
		{"NotFound", chunks(fmt.Errorf("x: %w", agent.ErrModelNotFound)), []error{agent.ErrModelNotFound}},
		{"EmptyAnswer", chunks(nil, " ", "\n"), []error{agent.ErrEmptyAnswer}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := agent.New(tc.model)
			require.NoError(t, err)
			answer, err := a.Chat(t.Context(), "q")
			for _, w := range tc.want {
				require.ErrorIs(t, err, w)
			}
			if !errors.Is(tc.want[0], agent.ErrModel) {
				assert.NotErrorIs(t, err, agent.ErrModel, "a model error that says what it is is not re-wrapped")
			}
			assert.Empty(t, answer)
			assert.Zero(t, a.Window().Len(), "a failed round writes nothing")
		})
	}
}

func TestChat_EmptyInputIsShared(t *testing.T) {
	a, err := agent.New(chunks(nil, "never"))
	require.NoError(t, err)
	_, err = a.Chat(t.Context(), " \t")
	require.ErrorIs(t, err, agent.ErrEmptyInput)
	require.ErrorIs(t, err, window.ErrEmptyRound, "agentmem's one empty-input sentinel")
	_, err = agent.New(nil)
	require.Error(t, err)
}
