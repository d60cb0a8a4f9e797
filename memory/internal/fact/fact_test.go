package fact_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/internal/fact"
)

func TestKey(t *testing.T) {
	k1, n1 := fact.Key("I live in Paris.")
	k2, n2 := fact.Key("  i LIVE in   paris ")
	assert.Equal(t, "i live in paris", n1)
	assert.Equal(t, n1, n2)
	assert.Equal(t, k1, k2, "the same normal text has the same key")
	k3, _ := fact.Key("I lived in Paris.")
	assert.NotEqual(t, k1, k3)
	kw, nw := fact.Key("ＡＢＣ　Straße")
	kn, _ := fact.Key("abc strasse")
	assert.Equal(t, "abc strasse", nw, "compatibility forms and case folding")
	assert.Equal(t, kn, kw)
}

func TestCheck(t *testing.T) {
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, bad := range []memory.Record{
		{ID: "a", SupersededBy: "b"},
		{ID: "a", Seen: 1},
		{ID: "a", LastSeen: at},
		{ID: "a", Time: at, ValidUntil: at},
		{ID: "a", ValidFrom: at, ValidUntil: at.Add(-time.Hour)},
		{ID: "a", Supersedes: "a"},
	} {
		require.ErrorIs(t, fact.Check(&bad), memory.ErrInvalidArgument, "%+v", bad)
	}
	ok := memory.Record{ID: "a", Time: at, ValidUntil: at.Add(time.Hour), Supersedes: "b"}
	require.NoError(t, fact.Check(&ok))
}

func TestCarryOverAndClose(t *testing.T) {
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	old := memory.Record{ID: "a", Supersedes: "z", SupersededBy: "b", ValidUntil: at, Seen: 2, LastSeen: at}
	rec := memory.Record{ID: "a", Text: "again"}
	fact.CarryOver(&rec, &old)
	assert.Equal(t, memory.Record{ID: "a", Text: "again", Supersedes: "z", SupersededBy: "b", ValidUntil: at, Seen: 2, LastSeen: at}, rec)
	assert.Equal(t, at, fact.Close(time.Time{}, at))
	assert.Equal(t, at, fact.Close(at, at.Add(time.Hour)), "an earlier end stays")
	assert.Equal(t, at, fact.Close(at.Add(time.Hour), at))
}
