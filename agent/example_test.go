package agent_test

import (
	"context"
	"fmt"
	"os"

	"github.com/agentmem/agentmem/agent"
	"github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/memory/short"
	"github.com/agentmem/agentmem/memory/window"
	_ "github.com/agentmem/agentmem/vdb/inmem"
)

// scripted is an agent.Model that answers from a script, standing in for an
// Ollama model so the example runs without a model server.
type scripted []string

func (s *scripted) Chat(_ context.Context, _ []agent.Message, fn func(string) error) error {
	answer := (*s)[0]
	*s = (*s)[1:]
	return fn(answer)
}

func ExampleAgent_Chat() {
	ctx := context.Background()
	emb, _ := hash.New(hash.DefaultDim)
	longTerm, _ := short.New(context.Background(), emb) // offline; short.Open keeps a store on disk
	defer longTerm.Close()
	// A window of one round, so that the first round settles into long-term
	// memory when the second arrives.
	w, _ := window.New(window.WithMaxRounds(1), window.WithEvictTo(longTerm))

	model := &scripted{"Noted: your project is Falcon.", "Sure.", "Your project is called Falcon."}
	// With a real server: ollama.NewAgent("llama3.2", ...) or
	// agent.New(ollama.New(apiClient, "llama3.2"), ...) (package agent/ollama).
	a, _ := agent.New(model, agent.WithMemory(longTerm), agent.WithWindow(w),
		agent.WithStream(os.Stdout))
	for _, in := range []string{"My project is called Falcon.", "Let's talk about something else."} {
		if _, err := a.Chat(ctx, in); err != nil {
			fmt.Println(err)
		}
	}
	p, _ := a.Prompt(ctx, "What is my project called?")
	fmt.Println(p.Recalled, "recalled,", p.Rounds, "round in the window")
	// Output:
	// Noted: your project is Falcon.
	// Sure.
	// 1 recalled, 1 round in the window
}
