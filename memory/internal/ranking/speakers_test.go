package ranking_test

import (
	"strings"
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

func TestSpeakerTerms_FirstPersonNamesTheUser(t *testing.T) {
	tok, err := keyword.NewTokenizer()
	require.NoError(t, err)
	st := ranking.SpeakerTerms{}
	for _, s := range []string{"User", "Assistant"} {
		st.Add(tok, s)
	}
	for _, q := range []string{"What is my dog's name?", "I’m planning the trip again", "remind me of the plan", "我的狗叫什么",
		// "you" in a request or a thanks: still about the asker's things.
		"Can you help me with my budget?", "Thanks, could you remind me of my flight?", "What do you need from me to book my trip?"} {
		named, rest := st.NamedSpeakers(tok, 2, q)
		assert.Equal(t, []string{"User"}, named, q)
		assert.Equal(t, q, rest, "%q: the query is searched whole", q)
	}
	for _, q := range []string{
		"What did you tell me about the trip?", // about the answerer's words: either side
		"you mentioned a hotel for my trip",
		"I liked your plan for my trip",
		"have you booked my table?",
		"Remind me what you suggested for my budget",
		"你告诉我什么",
		"the trip to Rome", // no person
	} {
		named, _ := st.NamedSpeakers(tok, 2, q)
		assert.Nil(t, named, q)
	}
	named, _ := st.NamedSpeakers(tok, 2, "What did the assistant suggest to me?")
	assert.Equal(t, []string{"Assistant"}, named, "a named speaker comes first")

	people := ranking.SpeakerTerms{}
	for _, s := range []string{"Deborah", "Evan", "a user of the forum"} {
		people.Add(tok, s)
	}
	named, _ = people.NamedSpeakers(tok, 3, "what did I say about my trip?")
	assert.Nil(t, named, "without a user role a first-person query names nobody")

	alone := ranking.SpeakerTerms{}
	alone.Add(tok, "user")
	named, _ = alone.NamedSpeakers(tok, 1, "what is my plan?")
	assert.Nil(t, named, "the only speaker of a namespace is no preference")
}

func TestKeywordQuery(t *testing.T) {
	tok, err := keyword.NewTokenizer()
	require.NoError(t, err)
	st := ranking.SpeakerTerms{}
	for _, s := range []string{"User", "Assistant", "Deborah"} {
		st.Add(tok, s)
	}
	for _, tt := range []struct {
		query, search string
		speakers      []string
	}{
		{"what did Deborah bake?", "bake?", []string{"Deborah"}},          // a name cut out, then the question words
		{"what is my dog's name?", "is my dog's name?", []string{"User"}}, // the asker: the query's words
		{"what did you suggest?", "you suggest?", nil},                    // nobody
		{"who is Deborah?", "is Deborah?", nil},                           // only a name: searched in the text
	} {
		named, rest := st.NamedSpeakers(tok, 3, tt.query)
		words := ranking.WithoutQuestionWords(tt.query)
		speakers, search := ranking.KeywordQuery(tok, tt.query, words, named, rest)
		assert.Equal(t, tt.speakers, speakers, tt.query)
		assert.Equal(t, tt.search, strings.TrimSpace(search), tt.query)
	}
}
