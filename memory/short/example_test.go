package short_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/short"
	_ "github.com/agentmem/agentmem/vdb/inmem" // the default backend registers itself
)

func ExampleMemory() {
	ctx := context.Background()
	emb, err := hash.New(512) // "hash:512": offline, lexical similarity
	if err != nil {
		log.Fatal(err)
	}
	mem, err := short.New(ctx, emb) // inmem backend, top 5, min score 0.3
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Close()

	// An agent writes each successful round...
	for _, round := range []string{
		"user: my flight is LH 401 on Friday\nassistant: noted",
		"user: book a table for two at 7pm\nassistant: done",
		"user: 我的护照号码是 E12345678\nassistant: 已记住",
	} {
		if err := mem.Update(ctx, round); err != nil {
			log.Fatal(err)
		}
	}
	// ...and searches while it builds the next prompt.
	hits, err := mem.Search(ctx, "which flight on Friday?")
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Printf("%.2f %q\n", h.Score, h.Text)
	}
	hits, err = mem.Search(ctx, "护照号码")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(hits), hits[0].Text[:len("user: 我的护照号码")])
	// Output:
	// 0.67 "user: my flight is LH 401 on Friday\nassistant: noted"
	// 1 user: 我的护照号码
}

func ExampleOpen() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "agentmem-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	emb, err := hash.New(512)
	if err != nil {
		log.Fatal(err)
	}

	mem, err := short.Open(ctx, dir, emb)
	if err != nil {
		log.Fatal(err)
	}
	if err := mem.Update(ctx, "user: the wifi password is tulip-42\nassistant: saved"); err != nil {
		log.Fatal(err)
	}
	if err := mem.Close(); err != nil { // snapshots the vectors
		log.Fatal(err)
	}

	// A store remembers which embedder built it.
	other, _ := hash.New(256)
	_, err = short.Open(ctx, dir, other)
	fmt.Println(errors.Is(err, memory.ErrEmbedderMismatch))

	// After a restart the memory is still there.
	mem, err = short.Open(ctx, dir, emb)
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Close()
	hits, err := mem.Search(ctx, "wifi password")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(hits[0].Text)
	// Output:
	// true
	// user: the wifi password is tulip-42
	// assistant: saved
}
