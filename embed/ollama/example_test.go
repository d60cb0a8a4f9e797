package ollama_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/embed/ollama"
)

// This example needs a running Ollama server (OLLAMA_HOST, default
// http://127.0.0.1:11434) with the model pulled, so it is compiled but not
// run by go test.
func ExampleNew() {
	e, err := ollama.New("nomic-embed-text", ollama.WithBatchSize(32), ollama.WithKeepAlive(10*time.Minute))
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// Documents get "search_document: ", queries "search_query: ".
	docs, err := e.Embed(ctx, []string{"my flight is LH 401 on Friday"})
	switch {
	case errors.Is(err, embed.ErrModelNotFound):
		log.Fatal(err) // says: run `ollama pull nomic-embed-text`
	case errors.Is(err, embed.ErrUnreachable):
		log.Fatal(err) // names the address it tried
	case err != nil:
		log.Fatal(err)
	}
	query, err := e.EmbedQuery(ctx, []string{"when do I fly?"})
	if err != nil {
		log.Fatal(err)
	}
	var cos float32
	for i := range query[0] {
		cos += query[0][i] * docs[0][i]
	}
	fmt.Printf("%s, %d dimensions, similarity %.2f\n", e.Name(), e.Dim(), cos)
}
