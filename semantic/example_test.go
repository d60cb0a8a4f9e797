package semantic_test

import (
	"context"
	"fmt"
	"log"

	"github.com/agentmem/agentmem/embed"
	_ "github.com/agentmem/agentmem/embed/hash"   // registers "hash"
	_ "github.com/agentmem/agentmem/embed/ollama" // registers "ollama"
	"github.com/agentmem/agentmem/semantic"
	"github.com/agentmem/agentmem/vdb/inmem"
)

func ExampleSemanticSet() {
	ctx := context.Background()
	emb, err := embed.Open("hash:512")
	if err != nil {
		log.Fatal(err)
	}
	db, err := inmem.New(emb.Dim())
	if err != nil {
		log.Fatal(err)
	}
	set, err := semantic.NewSet(emb, db, nil) // nil: index map in memory
	if err != nil {
		log.Fatal(err)
	}
	defer set.Close()

	if _, err := set.PutBatch(ctx, []string{
		"the deploy failed with error E1234",
		"lunch is at noon on Tuesday",
		"我对花生过敏",
	}); err != nil {
		log.Fatal(err)
	}
	hits, err := set.Search(ctx, "error E1234 in deploy", semantic.DefaultK, semantic.DefaultMinScore)
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Println(h.ID, h.Value)
	}
	// Output:
	// 0 the deploy failed with error E1234
}

func ExampleSemanticMap() {
	ctx := context.Background()
	emb, err := embed.Open("hash:512")
	if err != nil {
		log.Fatal(err)
	}
	db, err := inmem.New(emb.Dim())
	if err != nil {
		log.Fatal(err)
	}
	type contact struct{ Phone string }
	m, err := semantic.NewMap[contact](emb, db, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()

	if _, err := m.Put(ctx, "Dr. Keller, dentist in Munich", contact{"+49 89 1234"}); err != nil {
		log.Fatal(err)
	}
	if _, err := m.Put(ctx, "Jonas Weber, my manager", contact{"+49 89 5678"}); err != nil {
		log.Fatal(err)
	}
	hits, err := m.Search(ctx, "dentist", 1, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %s\n", hits[0].Key, hits[0].Value.Phone)
	// Output:
	// Dr. Keller, dentist in Munich: +49 89 1234
}
