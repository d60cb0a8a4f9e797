package ranking_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory/internal/ranking"
)

func TestWithoutQuestionWords(t *testing.T) {
	for in, want := range map[string]string{
		"What is RP-20931?":            "is RP-20931? ",
		"When did we first see E1234?": "we first see E1234? ",
		"Who's booked on LH401":        "booked on LH401 ",
		"WHERE, exactly?":              "exactly? ",
		"v2.4.1 什么时候上线？":               "v2.4.1  上线？ ",
		"HT-2024-0356 是哪家的合同？":         "HT-2024-0356 是 家的合同？ ",
		"出差是哪天？":                       "出差是 ？ ", // 哪天 is "when": no 天 left to match 每天
		"MU5711 几点起飞？":                 "MU5711  起飞？ ",
		"CA4183 晚点了多久？":                "CA4183 晚点了 ？ ",
		// A recall frame goes with them; a query that is nothing but
		// one is kept, and words the frame holds elsewhere stay.
		"Do you remember where my sister lives?":     "my sister lives? ",
		"Can you please remind me: when is the demo": "is the demo ", // as "When is the demo"
		"Tell me about Anna":                         "Anna ",
		"What have I told you about my diet?":        "my diet? ",
		"Hey, do you recall anything about my dog?":  "my dog? ",
		"What did I ask you to remember?":            "I ask you to remember? ",
		"What do you know?":                          "you know? ",
		"Did I eat?":                                 "I eat? ",
		"你还记得我妹妹住在哪里吗？":                              "我妹妹住在 吗？ ",
		"请告诉我项目的预算":                                  "项目的预算 ",
		// A question that asks what something is called: its "called" goes.
		"What is Maria's dog called?":              "is Maria's dog ",
		"What was the new project named?":          "was the new project ",
		"what's the ryokan called again?":          "the ryokan called again? ", // not the question's end
		"Who called? What did she want?":           "called? she want? ",        // "who" asks who called
		"I called Anna. What was the café called?": "I called Anna. was the café ",
		"What?": "What?", // nothing else: kept as asked
		"how":   "how",
		"":      "",
	} {
		assert.Equal(t, want, ranking.WithoutQuestionWords(in), in)
	}
}

// Share counts the query's distinct terms that the text holds, all alike
// but a Chinese character alone (half a term), however often either
// repeats them.
func TestShare(t *testing.T) {
	tok, err := keyword.NewTokenizer()
	require.NoError(t, err)
	for _, c := range []struct {
		query, text string
		want        float64
	}{
		{"resort booking in May", "We booked the resort for May.", 1}, // resort, book, may (stemmed, "in" a stop word)
		{"resort booking in May", "The resort, the resort, the resort!", 1.0 / 3},
		{"resort resort booking", "a resort", 0.5},
		{"resort booking", "nothing like it", 0},
		{"the of and", "the of and", 0}, // no terms
		// 陈 静 猫 (half a term each) and 陈静 held, 静的 的猫 not (的
		// alone is a stop word): (3·½ + 1) / (3·½ + 3).
		{"陈静的猫", "陈静养了一只猫", 2.5 / 4.5},
		// The characters of a question, but none of its words.
		{"陈静的猫", "安静地看小猫在陈列室", 1.5 / 4.5},
		{"猫", "一只猫", 1}, // a one-character word alone
	} {
		assert.InDelta(t, c.want, ranking.Share(tok, c.query, c.text), 1e-9, "%q in %q", c.query, c.text)
	}
}

func TestIsQuestion(t *testing.T) {
	for _, q := range []string{
		"Do you have any recommended dishes?", "I love cooking. What should I make tonight? ",
		"What kind of cuisine do you like", `He asked "why?"`, "你喜欢什么菜？", "你会做饭吗", "那你呢",
	} {
		assert.True(t, ranking.IsQuestion(q), q)
	}
	for _, s := range []string{
		"I prefer Sichuan and Cantonese cuisine.", "When I was young, I cooked every day.",
		"What a day!", "Who, me? Yes. I did it.", "我喜欢川菜。", "",
	} {
		assert.False(t, ranking.IsQuestion(s), s)
	}
}

// TestAsks: a question asks, and so does a request in the imperative for
// something to be told, found or checked; a statement does not.
func TestAsks(t *testing.T) {
	for _, q := range []string{
		"Do you have any recommended dishes?", "Check the license of the model before we ship it.",
		"Please tell me your flight number.", "Look up the volume on db-02", "你会做饭吗",
	} {
		assert.True(t, ranking.Asks(q), q)
	}
	for _, s := range []string{
		"I checked the license.", "Please, it's fine.", "The check came back clean.", "Thanks!", "",
	} {
		assert.False(t, ranking.Asks(s), s)
	}
}

// Shared counts the query's distinct terms of two or more letters that the
// text holds: a Chinese character alone is not counted, its bigrams are.
func TestShared(t *testing.T) {
	tok, err := keyword.NewTokenizer()
	require.NoError(t, err)
	assert.Equal(t, 3, ranking.Shared(tok, "What dishes did you recommend?", "Do you have any recommended dishes? Dishes!"), "dish, recommend, you")
	assert.Equal(t, 1, ranking.Shared(tok, "推荐的菜", "我推荐"), "推荐, not 推 or 荐")
	assert.Equal(t, 0, ranking.Shared(tok, "the", "the the"))
	assert.Equal(t, 0, ranking.Shared(tok, "mapo tofu", ""))
	held, terms := ranking.SharedOf(tok, "What dishes did you recommend?", "Do you have any recommended dishes?")
	assert.Equal(t, [2]int{3, 5}, [2]int{held, terms}, "dish, recommend, you of what, dish, did, you, recommend")
	held, terms = ranking.SharedOf(tok, "推荐的菜", "我推荐")
	assert.Equal(t, [2]int{1, 3}, [2]int{held, terms}, "推荐 of 推荐, 荐的, 的菜")
}

// WithoutRecallFrame keeps the question a recall frame asks, with the
// words that say whom it asks about: a pronoun after "remember" is the
// question's subject, after "remind" or "tell" the one told.
func TestWithoutRecallFrame(t *testing.T) {
	for in, want := range map[string]string{
		"Can you remind me what you recommended?":                "what you recommended?",
		"Do you recall you once recommended a game to me?":       "you once recommended a game to me?",
		"Tell me, you once recommended me some projects":         "you once recommended me some projects",
		"Can you remind me I don't like badminton, right?":       "I don't like badminton, right?",
		"Did I tell you about my sister?":                        "my sister?",
		"I forgot where my sister lives":                         "where my sister lives",
		"I can't remember what you recommended":                  "what you recommended",
		"I've forgotten the dentist's time":                      "the dentist's time",
		"Remember not to book the aisle seat":                    "not to book the aisle seat",
		"Do you recall what topics we talked about on April 29?": "what topics we talked about on April 29?",
		"你还记得我妹妹住在哪里吗？":                                          "我妹妹住在哪里吗？",
		"What did you recommend?":                                "What did you recommend?",
		"Remind me.":                                             "Remind me.",
	} {
		assert.Equal(t, want, ranking.WithoutRecallFrame(in), in)
	}
}
