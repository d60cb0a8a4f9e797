package ranking_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory/internal/ranking"
)

// TestPersonNames: runs of capitalised words, a sentence's first word
// too, without function and question words, "I", calendar words; a run
// that opens a sentence also without its first word.
func TestPersonNames(t *testing.T) {
	for q, want := range map[string][]string{
		"What painters did you recommend to Emily?":              {"Emily"},
		"Emily recommended a movie before, what was it?":         {"Emily"},
		"John Zhang doesn't like warm weather, right?":           {"John Zhang", "Zhang"},
		"Recently Sunny has been exploring workout methods.":     {"Recently Sunny", "Sunny"},
		"On May 4th, what did Linda tell you?":                   {"Linda"},
		"What did I tell you about my trip?":                     nil,
		"Did Emily, Frank or Ivy see the Green Wheat Park?":      {"Emily", "Frank", "Ivy", "Green Wheat Park"},
		"where does my sister live?":                             nil,
		"Which tests does Priya prefer? Tom's team knows.":       {"Priya", "Tom"},
		"What did Priya and you talk about on Saturday morning?": {"Priya"},
	} {
		assert.Equal(t, want, ranking.PersonNames(q), q)
	}
}

// TestIntroduces: the name as written right after a lead, in any case,
// not a possessive or the start of a longer word.
func TestIntroduces(t *testing.T) {
	for _, c := range []struct {
		text, name string
		want       bool
	}{
		{"Hello, my name is Emily. Nice to meet you.", "Emily", true},
		{"Hi, I'm Gary, nice to meet you.", "Gary", true},
		{"Hi, I’m Gary.", "Gary", true},
		{"Hello! I am John Zhang.", "John Zhang", true},
		{"I am John Zhang.", "John Zhang", false},
		{"I'm Italian, so pasta is a must.", "Italian", false},
		{"Hello, it's me again. I'm Italian, so pasta is a must.", "Italian", false},
		{"My dog's name is Biscuit.", "Biscuit", false},
		{"Good morning, I'm Gary.", "Gary", true},
		{"MY NAME IS Emily", "Emily", true},
		{"Please call me Sunny!", "Sunny", true},
		{"我叫李明，很高兴认识你。", "李明", true},
		{"你好，我的名字是王峰，很高兴认识你。", "王峰", true},
		{"我是老师，教数学。", "老师", false},
		{"你好，我是陈阳。很高兴认识你。", "陈阳", true},
		{"你好！我是陈阳。", "陈阳", true},
		{"我是陈阳。", "陈阳", false},
		{"Hello, Emily. I'm your AI companion.", "Emily", false},
		{"I'm Emily's sister.", "Emily", false},
		{"I'm Emilyanne.", "Emily", false},
		{"I'm ready to start.", "Ready", false},
		{"Hi'm Gary", "Gary", false},
		{"Hey, Bob here. I'm training for the Berlin marathon.", "Bob", true},
		{"Bob here!", "Bob", true},
		{"I met Bob here yesterday.", "Bob", false},
		{"Only Bob here.", "Bob", false},
		{"Gary is here.", "Gary", false},
		{"my name is Emily", "", false},
	} {
		assert.Equal(t, c.want, ranking.Introduces(c.text, c.name), "%q %q", c.text, c.name)
	}
}

// TestSpeakerTermsByName: a name the user gave names the user; asked
// about the answerer's words it names the answerers, and said beside
// "you" nobody.
func TestSpeakerTermsByName(t *testing.T) {
	tok, err := keyword.NewTokenizer()
	require.NoError(t, err)
	st := ranking.SpeakerTerms{}
	st.Add(tok, "User")
	st.Add(tok, "Assistant")
	st.Alias(tok, "Emily", "User")
	named, rest := st.NamedSpeakers(tok, 2, "Which tests does Emily prefer?")
	require.Equal(t, []string{"User"}, named)
	assert.NotContains(t, rest, "Emily")
	assert.Equal(t, []string{"User"}, st.ByName(tok, named, []string{"Emily"}, "Which tests does Emily prefer?"))
	assert.Equal(t, []string{"Assistant"}, st.ByName(tok, named, []string{"Emily"}, "What painters did you recommend to Emily?"))
	assert.Nil(t, st.ByName(tok, named, []string{"Emily"}, "What did Emily and you talk about on May 2nd?"))
	assert.Nil(t, st.ByName(tok, named, []string{"Emily"}, "What did you and Emily's sister discuss?"))
	assert.Equal(t, []string{"Assistant"}, st.ByName(tok, []string{"Assistant"}, []string{"Max"}, "What did you tell Max?"),
		"a speaker other than the user: as named")
	zh := ranking.SpeakerTerms{}
	zh.Add(tok, "User")
	zh.Add(tok, "Assistant")
	zh.Alias(tok, "张曼婷", "User")
	assert.Equal(t, []string{"Assistant"}, zh.ByName(tok, []string{"User"}, []string{"张曼婷"}, "你给张曼婷推荐过哪些画家？"),
		"read as 你给我推荐过哪些画家？")
	assert.Equal(t, []string{"User"}, zh.ByName(tok, []string{"User"}, []string{"张曼婷"}, "张曼婷喜欢听什么音乐？"))
	assert.Nil(t, zh.ByName(tok, []string{"User"}, []string{"张曼婷"}, "张曼婷和你在4月29日聊了什么？"))
	assert.True(t, ranking.IsAsker(" user "))
	assert.True(t, ranking.IsAsker("Human"))
	assert.False(t, ranking.IsAsker("Assistant"))
}

// TestIntroducedNames: the Han characters after a Chinese lead, two to
// four of them.
func TestIntroducedNames(t *testing.T) {
	for text, want := range map[string][]string{
		"你好，我叫张曼婷，很高兴认识你。":   {"张曼婷"},
		"你好，我的名字是王峰，很高兴认识你。": {"王峰"},
		"我叫焦彦。我的名字叫焦彦。":      {"焦彦"},
		"我叫A-Li。":                  nil,
		"你好，我是陈阳。":                 {"陈阳"},
		"我是老师。你好吗？":                nil,
		"谢谢。我是学生，你好。":              nil,
		"我叫一个很长很长的名字吧":             nil,
		"Hello, my name is Emily.": nil,
	} {
		assert.Equal(t, want, ranking.IntroducedNames(text), text)
	}
}
