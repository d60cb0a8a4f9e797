package ranking_test

import (
	"testing"
	"unicode"
	"unicode/utf8"

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

// FuzzNames: whatever the query, every name is a word of it, written as
// it is there, capitalised or a code, and none comes twice.
func FuzzNames(f *testing.F) {
	for _, s := range []string{"What is the capital of Mongolia?", "I told Bob: Alice's NW-20417.", "WHERE IS IT", "\xff Über \u00e9t\u00e9 Ärger", "a\nB c\n\n- D"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, query string) {
		seen := map[string]bool{}
		for _, n := range ranking.Names(query) {
			assert.Contains(t, query, n)
			assert.False(t, seen[n], "%q twice", n)
			seen[n] = true
			first, _ := utf8.DecodeRuneInString(n)
			assert.True(t, unicode.IsUpper(first), "%q", n)
		}
	})
}
