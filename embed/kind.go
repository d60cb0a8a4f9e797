package embed

import "fmt"

// Kind says what an embedder's vectors capture, for a caller that weighs
// them against another signal, as hybrid search weighs them against BM25.
type Kind int

const (
	// Model vectors come from a model trained on meaning (a
	// sentence-embedding model such as Ollama's nomic-embed-text): near
	// vectors mean near meanings, also across words the texts do not
	// share. An embedder that does not say its Kind is taken for one.
	Model Kind = iota
	// Lexical vectors hash the text's surface, its words and character
	// n-grams (embed/hash): near vectors share words, as BM25 matches do.
	Lexical
	// WordVectors average pre-trained word vectors (embed/glove): related
	// words meet, but a sentence's meaning is not modelled.
	WordVectors
)

var kindNames = [...]string{Model: "model", Lexical: "lexical", WordVectors: "word-vectors"}

// String returns "model", "lexical" or "word-vectors".
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// A Kinded embedder says what Kind of vectors it makes.
type Kinded interface {
	Kind() Kind
}

// KindOf returns the Kind e says it is, or Model if it does not say.
func KindOf(e Embedder) Kind {
	if k, ok := e.(Kinded); ok {
		return k.Kind()
	}
	return Model
}
