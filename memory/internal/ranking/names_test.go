package ranking_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentmem/agentmem/memory/internal/ranking"
)

func TestNames(t *testing.T) {
	for in, want := range map[string][]string{
		"What is the capital of Mongolia?":                              {"Mongolia"},
		"Mongolia is big. What is its capital?":                         nil, // sentence starts
		"I'm sure I told you about NW-20417, didn't I?":                 {"NW-20417"},
		"How often does Maria run? And Maria's pace?":                   {"Maria", "Maria's"},
		"On May 2nd, what did I cook?":                                  nil, // a time reference
		"What did we talk about last Saturday?":                         nil,
		"this 'Whisper' thing and the **SWOT** analysis":                {"Whisper", "SWOT"},
		"Summary:\nThe plan\n- Call Bob":                                {"Bob"},
		"我的工号是多少？":                                                      nil,
		"Okay, my guy, this sounds like the real deal. The other ones?": nil,
		"":                                      nil,
		"WHERE IS MY BADGE NW-20417?":           nil, // capitals everywhere say nothing
		"What Is My Flight Number To Berlin?":   nil,
		"Did Anna and Bob meet Carol in Paris?": {"Anna", "Bob", "Carol", "Paris"},
		"Meet Anna Smith?":                      {"Anna", "Smith"},
	} {
		assert.Equal(t, want, ranking.Names(in), "%q", in)
	}
}
