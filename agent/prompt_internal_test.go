package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/window"
	"github.com/agentmem/agentmem/memory/window/tokens"
)

func TestRecallLines(t *testing.T) {
	c := tokens.Default
	at := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	hits := []memory.Hit{
		{Text: "  "},                         // nothing to recall
		{Text: "User: a\nAssistant: b"},      // still in the window
		{Text: "first\nfact", Time: at},      // folded onto one line
		{Text: strings.Repeat("long ", 400)}, // cut to what is left
		{Text: "never reached: recall stopped"},
	}
	inWindow := map[string]bool{"User: a\nAssistant: b": true}
	first := "\n- [2026-01-02 03:04 UTC] first fact"
	room := c.Count(first) + 60
	lines := recallLines(c, hits, inWindow, room)
	require.Len(t, lines, 2)
	assert.Equal(t, first, lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "\n- [time unknown] long long"), lines[1])
	used := 0
	for _, l := range lines {
		used += c.Count(l)
	}
	assert.LessOrEqual(t, used, room)

	assert.Empty(t, recallLines(c, hits, inWindow, c.Count(first)-1), "no room for a useful part: nothing")
}

func TestFitRounds(t *testing.T) {
	rs := []window.Round{{User: "u1", Assistant: "a1"}, {User: "u2", Assistant: "a2"}, {User: "u3", Assistant: "a3"}}
	c := tokens.Default
	s := &assembly{c: c, p: Parts{Rounds: rs}, first: len(rs), costs: make([]int, len(rs))}
	s.left = rs[2].Cost(c) + rs[1].Cost(c) // room for the last two rounds only
	s.fitLastRound()
	require.NotNil(t, s.last)
	assert.Equal(t, rs[2], *s.last)
	s.fitOlderRounds()
	assert.Equal(t, 1, s.first, "the oldest round is the first left out")
	assert.Zero(t, s.left)

	// Without room for the last round, no older round comes in either.
	s = &assembly{c: c, p: Parts{Rounds: rs}, first: len(rs), costs: make([]int, len(rs)), left: 3}
	s.fitLastRound()
	s.fitOlderRounds()
	assert.Nil(t, s.last)
	assert.Equal(t, len(rs), s.first)
}

func TestFinishGivesBackRoom(t *testing.T) {
	rs := []window.Round{{User: "u1", Assistant: "a1"}, {User: "u2", Assistant: "a2"}}
	c := tokens.Default
	a := Assembler{Budget: 1000}.withDefaults()
	s, err := a.reserve(Parts{Rounds: rs, Input: "q", Workflow: "step one"})
	require.NoError(t, err)
	s.fitLastRound()
	s.fitWorkflow()
	s.fitOlderRounds()
	require.Equal(t, 0, s.first)
	require.NotEmpty(t, s.workflow)
	full := s.prompt()
	// A budget that the parts fit one by one but the whole does not: finish
	// drops the oldest round first.
	s.a.Budget = full.Tokens - 1
	p, err := s.finish()
	require.NoError(t, err)
	assert.Equal(t, 1, p.Rounds)
	assert.True(t, p.Workflow)
	assert.LessOrEqual(t, p.Tokens, s.a.Budget)
	assert.Equal(t, Cost(c, p.Messages), p.Tokens)
}
