package agent_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/agent"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/window"
	"github.com/agentmem/agentmem/memory/window/tokens"
)

var t0 = time.Date(2026, 11, 30, 1, 23, 0, 0, time.UTC)

func rounds(n int) []window.Round {
	out := make([]window.Round, n)
	for i := range out {
		out[i] = window.Round{User: fmt.Sprintf("question %d", i), Assistant: fmt.Sprintf("answer %d", i), Time: t0.Add(time.Duration(i) * time.Minute)}
	}
	return out
}

func TestAssembler_Layout(t *testing.T) {
	p, err := agent.Assembler{Budget: 1000}.Assemble(agent.Parts{
		System:   "You are terse.",
		Recalled: []memory.Hit{{Text: "User: my project is Falcon\nAssistant: noted", Time: t0}, {Text: "the db is on port 5433"}},
		Workflow: "#1 [in progress] migrate",
		Rounds:   rounds(2),
		Input:    "what is my project called?",
	})
	require.NoError(t, err)
	want := []agent.Message{
		{Role: "system", Content: "You are terse.\n\nWorkflow (where the task stands):\n#1 [in progress] migrate\n\n" +
			"Recalled from long-term memory (earlier conversation; use if relevant):\n" +
			"- [2026-11-30 01:23 UTC] User: my project is Falcon Assistant: noted\n- [time unknown] the db is on port 5433"},
		{Role: "user", Content: "question 0"}, {Role: "assistant", Content: "answer 0"},
		{Role: "user", Content: "question 1"}, {Role: "assistant", Content: "answer 1"},
		{Role: "user", Content: "what is my project called?"},
	}
	assert.Equal(t, want, p.Messages)
	assert.Equal(t, agent.Cost(tokens.Default, p.Messages), p.Tokens)
	assert.Equal(t, 2, p.Rounds)
	assert.Equal(t, 2, p.Recalled)
	assert.True(t, p.Workflow)
	assert.Contains(t, p.String(), "── system ──")
}

// TestAssembler_RecalledSpeaker: a recalled turn says who said it, so
// that a model tells the user's words from its own answers; a memory
// without a speaker, or whose text names its speaker already (a round),
// is not labelled again.
func TestAssembler_RecalledSpeaker(t *testing.T) {
	p, err := agent.Assembler{}.Assemble(agent.Parts{Recalled: []memory.Hit{
		{Text: "Mia is vegetarian.", Speaker: "user", Time: t0},
		{Text: "Kyoto has temple restaurants.", Speaker: "assistant", Time: t0},
		{Text: "User: hi\nAssistant: hello", Speaker: "user", Time: t0},
		{Text: "the db is on port 5433", Time: t0},
	}, Input: "is Mia vegetarian?"})
	require.NoError(t, err)
	assert.Contains(t, p.Messages[0].Content, "- [2026-11-30 01:23 UTC] user: Mia is vegetarian.\n"+
		"- [2026-11-30 01:23 UTC] assistant: Kyoto has temple restaurants.\n"+
		"- [2026-11-30 01:23 UTC] User: hi Assistant: hello\n"+
		"- [2026-11-30 01:23 UTC] the db is on port 5433")
}

func TestAssembler_NoSystemPrompt(t *testing.T) {
	p, err := agent.Assembler{}.Assemble(agent.Parts{Recalled: []memory.Hit{{Text: "fact"}}, Input: "hi"})
	require.NoError(t, err)
	require.Len(t, p.Messages, 2)
	assert.True(t, strings.HasPrefix(p.Messages[0].Content, "Recalled from long-term memory"), p.Messages[0].Content)
	p, err = agent.Assembler{}.Assemble(agent.Parts{Input: "hi"})
	require.NoError(t, err)
	assert.Equal(t, []agent.Message{{Role: "user", Content: "hi"}}, p.Messages)
}

func TestAssembler_LastRoundBeforeRecall(t *testing.T) {
	words := tokens.Func(func(s string) int { return len(strings.Fields(s)) })
	rs := rounds(3)
	rs[2].Assistant = strings.Repeat("long ", 30)
	hits := []memory.Hit{{Text: strings.Repeat("recalled ", 10)}}
	// system 2+4, input 1+4, last round 2+4+30+4 = 40 → 51; 9 left: no hit fits.
	p, err := agent.Assembler{Budget: 60, Counter: words, RecallShare: 1}.Assemble(agent.Parts{
		System: "be brief", Recalled: hits, Rounds: rs, Input: "next",
	})
	require.NoError(t, err)
	assert.Equal(t, 1, p.Rounds, "the last round fits before recalled memories get any")
	assert.Zero(t, p.Recalled)
	assert.LessOrEqual(t, p.Tokens, 60)

	// A last round bigger than what is left is cut with a marker, not dropped.
	rs[2].Assistant = strings.Repeat("long ", 300)
	p, err = agent.Assembler{Budget: 80}.Assemble(agent.Parts{System: "be brief", Recalled: hits, Rounds: rs, Input: "next"})
	require.NoError(t, err)
	assert.Equal(t, 1, p.Rounds)
	assert.Contains(t, p.Messages[len(p.Messages)-2].Content, "…[truncated")
	assert.LessOrEqual(t, p.Tokens, 80)
}

func TestAssembler_RecallShareAndDedupe(t *testing.T) {
	rs := rounds(1)
	var hits []memory.Hit
	hits = append(hits, memory.Hit{Text: rs[0].Text()}) // already in the window
	for i := range 50 {
		hits = append(hits, memory.Hit{Text: fmt.Sprintf("remembered fact number %d about the cluster", i), Time: t0})
	}
	p, err := agent.Assembler{Budget: 400, RecallShare: 0.25}.Assemble(agent.Parts{Recalled: hits, Rounds: rs, Input: "q"})
	require.NoError(t, err)
	sys := p.Messages[0].Content
	assert.NotContains(t, sys, "question 0", "a hit repeating a window round is skipped")
	assert.LessOrEqual(t, tokens.Message(tokens.Default, sys), 100, "recalled memories stay within their share")
	assert.Positive(t, p.Recalled)
	assert.Less(t, p.Recalled, 50)
	assert.Contains(t, sys, "fact number 0 ", "best first")
}

func TestAssembler_BadInput(t *testing.T) {
	_, err := agent.Assembler{}.Assemble(agent.Parts{Input: " \n"})
	require.ErrorIs(t, err, agent.ErrEmptyInput)

	_, err = agent.Assembler{Budget: 10}.Assemble(agent.Parts{System: strings.Repeat("rule ", 20), Input: "q"})
	require.ErrorIs(t, err, agent.ErrBudget)
	assert.Contains(t, err.Error(), "system prompt alone needs")

	_, err = agent.Assembler{Budget: 30}.Assemble(agent.Parts{System: "short", Input: strings.Repeat("word ", 50)})
	require.ErrorIs(t, err, agent.ErrBudget)
	assert.Contains(t, err.Error(), "input")
}

// Text for random conversations.
var (
	enWords = strings.Fields("the service restarted after an out-of-memory kill so we raised the limit and added a retry with backoff for idempotent requests only while the database migration waits for review")
	zhRunes = []rune("短期记忆使用滑动窗口超出上限时平滑遗忘最早的一轮对话工作流程窗口记录任务进度长期记忆通过向量检索和关键词匹配召回")
)

func randomText(r *rand.Rand, maxLen int) string {
	n := 1 + r.IntN(maxLen)
	var b strings.Builder
	zh := r.IntN(2) == 0
	for i := range n {
		if zh {
			b.WriteRune(zhRunes[r.IntN(len(zhRunes))])
			if r.IntN(15) == 0 {
				b.WriteString("，")
			}
			continue
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(enWords[r.IntN(len(enWords))])
	}
	return b.String()
}

// TestAssembler_NeverExceedsBudget is the property: for random
// conversations in English and Chinese, random budgets and shares, the
// assembled prompt never costs more than its budget, ends with the input,
// and holds the most recent rounds in order.
func TestAssembler_NeverExceedsBudget(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	counters := map[string]tokens.Counter{
		"estimate": tokens.Default,
		"bytes/3":  tokens.Func(func(s string) int { return (len(s) + 2) / 3 }),
	}
	for name, c := range counters {
		t.Run(name, func(t *testing.T) {
			for trial := range 400 {
				var rs []window.Round
				for range r.IntN(40) {
					rs = append(rs, window.Round{User: randomText(r, 60), Assistant: randomText(r, 400), Time: t0})
				}
				var hits []memory.Hit
				for range r.IntN(8) {
					hits = append(hits, memory.Hit{Text: randomText(r, 300), Time: t0})
				}
				parts := agent.Parts{System: randomText(r, 80), Recalled: hits, Rounds: rs, Input: randomText(r, 100)}
				if r.IntN(2) == 0 {
					parts.Workflow = randomText(r, 200)
				}
				a := agent.Assembler{Budget: 20 + r.IntN(8192), Counter: c, RecallShare: r.Float64(), WorkflowShare: r.Float64()}
				p, err := a.Assemble(parts)
				if err != nil {
					require.ErrorIs(t, err, agent.ErrBudget, "trial %d", trial)
					sysIn := tokens.Message(c, strings.TrimSpace(parts.System)) + tokens.Message(c, parts.Input)
					require.Greater(t, sysIn, a.Budget, "trial %d: ErrBudget only when system prompt and input do not fit", trial)
					continue
				}
				got := agent.Cost(c, p.Messages)
				require.Equal(t, got, p.Tokens, "trial %d", trial)
				require.LessOrEqual(t, got, a.Budget, "trial %d: the prompt must never exceed the budget", trial)
				last := p.Messages[len(p.Messages)-1]
				require.Equal(t, agent.Message{Role: "user", Content: parts.Input}, last, "trial %d", trial)
				// The included rounds are the most recent ones, in order.
				conv := p.Messages[:len(p.Messages)-1]
				if len(conv) > 0 && conv[0].Role == "system" {
					conv = conv[1:]
				}
				require.Len(t, conv, 2*p.Rounds)
				for i := range p.Rounds {
					want := rs[len(rs)-p.Rounds+i]
					require.Equal(t, "user", conv[2*i].Role)
					require.Equal(t, "assistant", conv[2*i+1].Role)
					if i < p.Rounds-1 {
						require.Equal(t, want.User, conv[2*i].Content, "older rounds are whole")
						require.Equal(t, want.Assistant, conv[2*i+1].Content)
					}
				}
				again, err := a.Assemble(parts)
				require.NoError(t, err)
				require.Equal(t, p, again, "deterministic")
			}
		})
	}
}

func ExampleAssembler_Assemble() {
	a := agent.Assembler{Budget: 200}
	p, _ := a.Assemble(agent.Parts{
		System:   "You are a helpful assistant.",
		Recalled: []memory.Hit{{Text: "User: my project is called Falcon\nAssistant: Noted.", Time: time.Date(2026, 11, 29, 9, 30, 0, 0, time.UTC)}},
		Rounds:   []window.Round{{User: "hi", Assistant: "Hello! How can I help?"}},
		Input:    "What is my project called?",
	})
	for _, m := range p.Messages {
		fmt.Printf("%s: %s\n", m.Role, m.Content)
	}
	fmt.Println(p.Tokens <= p.Budget)
	// Output:
	// system: You are a helpful assistant.
	//
	// Recalled from long-term memory (earlier conversation; use if relevant):
	// - [2026-11-29 09:30 UTC] User: my project is called Falcon Assistant: Noted.
	// user: hi
	// assistant: Hello! How can I help?
	// user: What is my project called?
	// true
}
