package eval_test

import (
	"context"
	"fmt"

	"github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/eval"
	"github.com/agentmem/agentmem/memory/longterm"
	_ "github.com/agentmem/agentmem/vdb/inmem" // registers the default backend
)

func Example() {
	d := &eval.Dataset{
		Turns: []eval.Turn{
			{Conv: "c", ID: "1", Speaker: "Ann", Text: "My flight to Lisbon is LH401."},
			{Conv: "c", ID: "2", Speaker: "Bob", Text: "Have a good trip!"},
			{Conv: "c", ID: "3", Speaker: "Ann", Text: "Which flight was it again?"},
		},
		Questions: []eval.Question{{QID: "q", Conv: "c", Question: "Which flight to Lisbon?", Evidence: []string{"1"}, AskedAt: "3"}},
	}
	emb, _ := hash.New(64)
	rep, err := eval.Run(context.Background(), d, eval.Config{Embedder: emb, Modes: []longterm.Mode{longterm.KeywordOnly}})
	if err != nil {
		panic(err)
	}
	for _, m := range rep.Modes {
		fmt.Printf("%s R@1 %.2f\n", m.Mode, m.Overall.Recall[1])
	}
	// Output:
	// keyword R@1 1.00
	// bm25 R@1 1.00
}
