package ranking

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/keyword"
)

func TestSnippets(t *testing.T) {
	tok, err := keyword.NewTokenizer()
	require.NoError(t, err)
	children := []string{"Hello there.", "The flight LH 2043 leaves Munich.", "Munich is cold.", "Bye."}
	q := map[string]bool{}
	for _, term := range tok.Tokens("flight Munich") {
		q[term] = true
	}
	assert.Equal(t, []int{1}, Snippets(tok, q, children, true, nil), "only the child with most query terms")
	assert.Equal(t, []int{1, 3}, Snippets(tok, q, children, true, []Child{{3, 0.8}, {0, 0.5}}),
		"plus the vector path's children within the ratio of its best, in text order")
	assert.Empty(t, Snippets(tok, q, children, false, nil))
}

func TestChecks(t *testing.T) {
	require.NoError(t, CheckWeights(0, 1))
	assert.Error(t, CheckWeights(0, 0))
	assert.Error(t, CheckWeights(-1, 1))
	require.NoError(t, Unit("w", 1))
	assert.Error(t, Unit("w", 1.5))
	assert.EqualError(t, NonNegative("speaker boost", -1), "speaker boost -1 is not a finite number ≥ 0")
}
