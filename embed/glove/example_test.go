package glove_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentmem/agentmem/embed/glove"
)

func Example() {
	// A real file has 50 to 300 values a word and hundreds of thousands
	// of words, most frequent first.
	v, err := glove.Read(strings.NewReader(tiny))
	if err != nil {
		panic(err)
	}
	e, err := glove.New(v, glove.WithCommonComponent(false))
	if err != nil {
		panic(err)
	}
	vs, err := e.Embed(context.Background(), []string{"the plane", "a flight", "the kitten"})
	if err != nil {
		panic(err)
	}
	fmt.Printf("plane~flight %.2f, plane~kitten %.2f\n", cos(vs[0], vs[1]), cos(vs[0], vs[2]))
	fmt.Println(v.Related(1, 0.5)("cat"))
	// Output:
	// plane~flight 0.97, plane~kitten 0.35
	// [kitten]
}
