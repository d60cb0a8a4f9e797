package longterm_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/memory/longterm"
)

func ExampleOpen() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "longterm-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	emb, err := hash.New(hash.DefaultDim)
	if err != nil {
		log.Fatal(err)
	}

	mem, err := longterm.Open(ctx, dir, emb)
	if err != nil {
		log.Fatal(err)
	}
	_, err = mem.AddBatch(ctx, []longterm.Record{
		{ID: "db", Namespace: "team", Speaker: "Caroline",
			Text: "We compared three databases. We decided to use PostgreSQL because we need transactions."},
		{ID: "phone", Namespace: "team", Speaker: "Dev",
			Text: "The customer's number is 138-0013-8000. Call after 10 am."},
		{ID: "lunch", Namespace: "team", Speaker: "Dev", Text: "Lunch is at noon on Fridays."},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := mem.Close(); err != nil { // writes a snapshot
		log.Fatal(err)
	}

	// Reopen: nothing is re-embedded.
	mem, err = longterm.Open(ctx, dir, emb)
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Close()
	for _, q := range []string{"13800138000", "what did we decide about PostgreSQL"} {
		hits, err := mem.Query(ctx, longterm.Query{Text: q, Namespace: "team", K: 1})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s → %s %q\n", q, hits[0].ID, hits[0].Snippets)
	}
	// Output:
	// 13800138000 → phone ["The customer's number is 138-0013-8000."]
	// what did we decide about PostgreSQL → db ["We decided to use PostgreSQL because we need transactions."]
}
