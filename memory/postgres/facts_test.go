package postgres_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/engine"
	"github.com/agentmem/agentmem/memory/postgres"
)

// TestFacts_NearMergeAndRefuse: with the merge policy a near-duplicate is
// counted as the stored record said again, with refuse it is an error
// wrapping ErrDuplicate; the checks run in the writing transaction.
func TestFacts_NearMergeAndRefuse(t *testing.T) {
	ctx := t.Context()
	first := memory.Record{Text: "Dana now lives in Paris.", Speaker: "Dana"}
	near := memory.Record{Text: "Dana lives in Paris now.", Speaker: "Dana"}

	m := open(t, storeURL(t), postgres.WithEngine(engine.WithNearDuplicates(engine.DefaultNearScore, engine.NearMerge)))
	outs, err := m.Remember(ctx, first)
	require.NoError(t, err)
	id := outs[0].ID
	outs, err = m.Remember(ctx, near)
	require.NoError(t, err)
	assert.True(t, outs[0].Duplicate)
	assert.Equal(t, id, outs[0].ID)
	assert.Equal(t, 1, m.Len())
	got, ok := m.Get(id)
	require.True(t, ok)
	assert.Equal(t, 1, got.Seen)

	r := open(t, storeURL(t), postgres.WithEngine(engine.WithNearDuplicates(engine.DefaultNearScore, engine.NearRefuse)))
	_, err = r.Remember(ctx, first)
	require.NoError(t, err)
	_, err = r.Add(ctx, near)
	require.ErrorIs(t, err, memory.ErrDuplicate)
	assert.Equal(t, 1, r.Len())
}
