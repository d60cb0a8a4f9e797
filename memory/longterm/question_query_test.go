package longterm

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestQuery_QuestionWordsDoNotMatchQuestions(t *testing.T) {
	at := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	m := newFilled(t, []Record{
		{ID: "ask", Namespace: "c", Time: at, Text: "For the book club, what are you reading next?"},
		{ID: "time", Namespace: "c", Time: at.Add(time.Hour), Text: "Good luck! What time do you start?"},
		{ID: "order", Namespace: "c", Time: at.Add(48 * time.Hour), Text: "No, the warranty expired in May. The repair order number is RP-20931."},
		{ID: "other", Namespace: "c", Time: at.Add(96 * time.Hour), Text: "The bike shop called about the chain."},
	})
	hits, err := m.Query(t.Context(), Query{Text: "What is RP-20931?", Namespace: "c", Mode: KeywordOnly})
	require.NoError(t, err)
	assert.Equal(t, []string{"order"}, ids(hits), "the identifier, not the turns that also ask 'what'")

	hits, err = m.Query(t.Context(), Query{Text: "what?", Namespace: "c", Mode: KeywordOnly})
	require.NoError(t, err)
	assert.Equal(t, []string{"ask", "time"}, ids(hits), "a query of question words only still searches them")
}
