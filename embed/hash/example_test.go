package hash_test

import (
	"context"
	"fmt"
	"log"

	"github.com/agentmem/agentmem/embed/hash"
)

func ExampleEmbedder_Embed() {
	e, err := hash.New(hash.DefaultDim)
	if err != nil {
		log.Fatal(err)
	}
	vs, err := e.Embed(context.Background(), []string{
		"my flight is on Friday",
		"flights on Friday",
		"the cat sat on the mat",
		"plane departure",
	})
	if err != nil {
		log.Fatal(err)
	}
	cos := func(a, b []float32) (s float32) {
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	fmt.Println(e.Name(), len(vs[0]))
	fmt.Printf("shared words:   %.2f\n", cos(vs[0], vs[1]))
	fmt.Printf("unrelated:      %.2f\n", cos(vs[0], vs[2]))
	fmt.Printf("synonyms only:  %.2f\n", cos(vs[0], vs[3])) // ~0: no shared words or parts of words
	// Output:
	// hash:512 512
	// shared words:   0.71
	// unrelated:      0.04
	// synonyms only:  0.04
}
