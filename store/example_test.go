package store_test

import (
	"context"
	"fmt"
	"os"

	_ "github.com/agentmem/agentmem/embed/hash" // registers "hash"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/store"
)

// Open creates a long-term store in a directory, and reopens it later with
// the embedder, kind and backend its manifest recorded.
func ExampleOpen() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "agentmem-example-")
	defer os.RemoveAll(dir)

	st, err := store.Open(ctx, dir, store.Config{Create: true, Kind: store.Long, Embedder: "hash:256"})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = st.Add(ctx, memory.Record{Namespace: "user:42", Speaker: "user",
		Text: "My flight LH 2043 leaves Munich at 09:40 on March 14."})
	if err == nil {
		err = st.Close()
	}
	if err != nil {
		fmt.Println(err)
		return
	}

	st, err = store.Open(ctx, dir, store.Config{}) // the zero Config: as it was built
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	info := st.Info()
	fmt.Println(st.Kind(), info.Embedder, info.Backend, info.Records)
	for _, q := range []string{"when does my flight leave?", "which hotel did I book in Lisbon?"} {
		hits, _ := st.Query(ctx, memory.Query{Text: q, Namespace: "user:42", K: 1})
		if len(hits) == 0 {
			fmt.Printf("%s: no memory is relevant\n", q)
		}
		for _, h := range hits {
			fmt.Printf("%s: %s\n", q, h.Text)
		}
	}
	// Output:
	// long hash:256 inmem 1
	// when does my flight leave?: My flight LH 2043 leaves Munich at 09:40 on March 14.
	// which hotel did I book in Lisbon?: no memory is relevant
}
