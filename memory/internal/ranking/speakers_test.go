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
		"you mentioned a hotel for my trip", // about the answerer's words, but no question: either side
		"I liked your plan for my trip",
		"Remind me what you suggested for my budget",
		"你告诉我什么",
		"我和你分享过一本书，它的名字是？", // 你 the object: about the asker's words, but said to someone
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

func TestSpeakerTerms_AnswererQuestionNamesTheOtherSide(t *testing.T) {
	tok, err := keyword.NewTokenizer()
	require.NoError(t, err)
	st := ranking.SpeakerTerms{}
	for _, s := range []string{"User", "Assistant"} {
		st.Add(tok, s)
	}
	for _, q := range []string{
		"What did you tell me about the trip?",
		"What painters did you recommend to me?",
		"You once recommended a world history-related game to me. What was its name?",
		"Which photography tips have you shared with me?",
		"have you booked my table?",
		"What was in your plan for my trip?",
		"你给我推荐过哪些画家？",
		"关于如何放松，你给了我什么建议？",
		"我曾经向你咨询过绘画的学习方法，你给了我哪些建议？", // the first 你 an object, the second the subject
		"你曾经和我推荐过几个厨艺节目，他们的名字是？",
	} {
		named, rest := st.NamedSpeakers(tok, 2, q)
		assert.Equal(t, []string{"Assistant"}, named, q)
		assert.Equal(t, q, rest, "%q: the query is searched whole", q)
	}
	for _, q := range []string{
		"you mentioned a hotel for my trip",       // no question
		"I logged it like you said. What's next?", // a manner, not what is asked
		"I'm ready for the recovery plan you suggested. The warm-ups, the stretches. How do I do them?", // a message that goes on with the task
		"Can you help me with my budget?", // "you" in a request: the asker's things
		"我曾经和你分享过一部电影，它讲了什么？",             // 你 the object
		"我向你咨询过什么问题？",
	} {
		named, _ := st.NamedSpeakers(tok, 2, q)
		assert.NotEqual(t, []string{"Assistant"}, named, q)
	}

	people := ranking.SpeakerTerms{}
	for _, s := range []string{"Deborah", "Evan"} {
		people.Add(tok, s)
	}
	named, _ := people.NamedSpeakers(tok, 2, "What did you recommend to me?")
	assert.Nil(t, named, "without a user role nobody is the answerer")
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
		{"what did Deborah bake?", "bake?", []string{"Deborah"}},                    // a name cut out, then the question words
		{"what is my dog's name?", "is my dog's name?", []string{"User"}},           // the asker: the query's words
		{"what did you suggest?", "you suggest?", []string{"Assistant", "Deborah"}}, // the answerers: the query's words
		{"what was the plan?", "was the plan?", nil},                                // nobody
		{"who is Deborah?", "is Deborah?", nil},                                     // only a name: searched in the text
	} {
		named, rest := st.NamedSpeakers(tok, 3, tt.query)
		words := ranking.WithoutQuestionWords(tt.query)
		speakers, search := ranking.KeywordQuery(tok, tt.query, words, named, rest)
		assert.Equal(t, tt.speakers, speakers, tt.query)
		assert.Equal(t, tt.search, strings.TrimSpace(search), tt.query)
	}
}
