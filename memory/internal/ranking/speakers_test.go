package ranking_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory/internal/ranking"
)

func TestSpeakerTerms(t *testing.T) {
	tok, err := keyword.NewTokenizer()
	require.NoError(t, err)
	st := ranking.SpeakerTerms{}
	for _, s := range []string{"Deborah", "Evan Smith", "Sam"} {
		st.Add(tok, s)
	}
	st.Add(tok, "Sam") // twice: once in the lists

	named, rest := st.NamedSpeakers(tok, 3, "Where is Deborah going on her trip?")
	assert.Equal(t, []string{"Deborah"}, named)
	assert.Equal(t, "Where is going on her trip? ", rest)

	named, _ = st.NamedSpeakers(tok, 3, "did smith and sam meet")
	assert.Equal(t, []string{"Evan Smith", "Sam"}, named)

	named, rest = st.NamedSpeakers(tok, 3, "Deborah, Evan and Sam")
	assert.Nil(t, named, "naming every speaker says nothing")
	assert.Equal(t, "Deborah, Evan and Sam", rest)

	named, rest = st.NamedSpeakers(tok, 3, "the trip to Rome")
	assert.Nil(t, named)
	assert.Equal(t, "the trip to Rome", rest)

	st.Remove(tok, "Deborah")
	named, _ = st.NamedSpeakers(tok, 2, "Deborah's trip")
	assert.Nil(t, named, "a removed speaker is not named")
	named, rest = ranking.SpeakerTerms{}.NamedSpeakers(tok, 0, "Sam")
	assert.Nil(t, named)
	assert.Equal(t, "Sam", rest)
}
