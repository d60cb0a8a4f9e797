package embed_test

import (
	"context"
	"fmt"
	"log"

	"github.com/agentmem/agentmem/embed"
	_ "github.com/agentmem/agentmem/embed/hash"   // registers "hash"
	_ "github.com/agentmem/agentmem/embed/ollama" // registers "ollama"
)

func ExampleOpen() {
	// "hash:512" needs no server; "ollama:nomic-embed-text" would use the
	// Ollama server at OLLAMA_HOST.
	e, err := embed.Open("hash:512")
	if err != nil {
		log.Fatal(err)
	}
	vs, err := e.Embed(context.Background(), []string{"my flight is LH 401 on Friday", "which flight is mine?"})
	if err != nil {
		log.Fatal(err)
	}
	var cos float32
	for i := range vs[0] {
		cos += vs[0][i] * vs[1][i]
	}
	fmt.Println(e.Name(), e.Dim(), len(vs))
	fmt.Printf("similarity %.2f\n", cos)

	_, err = embed.Open("word2vec:300")
	fmt.Println(err)
	// Output:
	// hash:512 512 2
	// similarity 0.34
	// embed: unknown scheme "word2vec" in spec "word2vec:300" (registered: hash, ollama; forgotten import?)
}
