package longterm_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

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

// A hit can bring the turns around it: here the question that the found
// answer replies to.
func ExampleMemory_Query_neighbours() {
	ctx := context.Background()
	emb, err := hash.New(hash.DefaultDim)
	if err != nil {
		log.Fatal(err)
	}
	mem, err := longterm.New(ctx, emb)
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Close()
	at := time.Date(2024, 5, 1, 18, 0, 0, 0, time.UTC)
	_, err = mem.AddBatch(ctx, []longterm.Record{
		{Namespace: "chat", Speaker: "user", Time: at, Text: "Can you book a table for Friday?"},
		{Namespace: "chat", Speaker: "assistant", Time: at.Add(time.Minute), Text: "Done: Luigi's, 8 pm, four people."},
	})
	if err != nil {
		log.Fatal(err)
	}
	hits, err := mem.Query(ctx, longterm.Query{Text: "Luigi's", Namespace: "chat", K: 1, Neighbours: 1})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range hits[0].Before {
		fmt.Printf("%s: %s\n", r.Speaker, r.Text)
	}
	fmt.Printf("%s: %s\n", hits[0].Speaker, hits[0].Text)
	// Output:
	// user: Can you book a table for Friday?
	// assistant: Done: Luigi's, 8 pm, four people.
}

// A fact that changes: the new version supersedes the old one, which a
// search finds only as of a moment before the change; the same text said
// again is not stored twice.
func ExampleMemory_Supersede() {
	ctx := context.Background()
	emb, err := hash.New(hash.DefaultDim)
	if err != nil {
		log.Fatal(err)
	}
	mem, err := longterm.New(ctx, emb)
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Close()
	jan := time.Date(2025, 1, 10, 9, 0, 0, 0, time.UTC)
	_, err = mem.Add(ctx, longterm.Record{ID: "dana-home", Namespace: "dana", Text: "Dana lives in Paris.", Time: jan})
	if err != nil {
		log.Fatal(err)
	}
	out, err := mem.Supersede(ctx, "dana-home", longterm.Record{Text: "Dana moved to Berlin.", Time: jan.AddDate(0, 6, 0)})
	if err != nil {
		log.Fatal(err)
	}
	ask := func(asOf time.Time) {
		hits, err := mem.Query(ctx, longterm.Query{Text: "where does Dana live", Namespace: "dana", AsOf: asOf, MinRelevance: -1})
		if err != nil {
			log.Fatal(err)
		}
		for _, h := range hits {
			fmt.Println(" ", h.Text)
		}
	}
	fmt.Println("now:")
	ask(time.Time{})
	fmt.Println("as of March 2025:")
	ask(jan.AddDate(0, 2, 0))
	versions, err := mem.History(ctx, out.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("versions:", len(versions), "- the old one superseded by the new:", versions[0].SupersededBy == out.ID)
	again, err := mem.Remember(ctx, longterm.Record{Namespace: "dana", Text: "dana moved to berlin"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("said again is a duplicate:", again[0].Duplicate, again[0].ID == out.ID)
	// Output:
	// now:
	//   Dana moved to Berlin.
	// as of March 2025:
	//   Dana lives in Paris.
	// versions: 2 - the old one superseded by the new: true
	// said again is a duplicate: true true
}

// Facts added beside each other, not superseded, are both current: of
// two that answer a search alike, the later said comes first, and its
// explanation names the earlier (engine.WithNewerFirst).
func ExampleMemory_Query_laterVersionFirst() {
	ctx := context.Background()
	emb, err := hash.New(hash.DefaultDim)
	if err != nil {
		log.Fatal(err)
	}
	mem, err := longterm.New(ctx, emb)
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Close()
	jan := time.Date(2026, 1, 12, 9, 0, 0, 0, time.UTC)
	_, err = mem.AddBatch(ctx, []longterm.Record{
		{ID: "m1", Namespace: "dana", Speaker: "user", Text: "My manager is Tom.", Time: jan},
		{ID: "m2", Namespace: "dana", Speaker: "user", Text: "My manager is Ingrid now.", Time: jan.AddDate(0, 4, 0)},
	})
	if err != nil {
		log.Fatal(err)
	}
	hits, err := mem.Query(ctx, longterm.Query{Text: "Who is my manager?", Namespace: "dana", Explain: true})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Println(h.Text, h.Explain.LaterThan)
	}
	// Output:
	// My manager is Ingrid now. [m1]
	// My manager is Tom. []
}
