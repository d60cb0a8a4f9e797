// Package memory gives LLM agents memory: the [Memory] interface that an
// agent writes after each successful round and searches while it builds a
// prompt, and [ShortMemory], a semantic memory over the chain
// embedder → semantic.SemanticSet → vdb.VectorDatabase.
//
// Other memories live beside it: memory/window (the short-term sliding window
// with its workflow track) and memory/longterm (hybrid vector + keyword
// retrieval over small-to-big chunks, on disk).
package memory

import (
	"context"
	"time"
)

// A Memory remembers text segments and finds the ones related to a question.
// Implementations are safe for concurrent use by multiple goroutines.
type Memory interface {
	// Update stores a segment, e.g. one round of conversation. An empty or
	// whitespace-only segment is an error.
	Update(ctx context.Context, segment string) error
	// Search returns the remembered segments most related to question, best
	// first. No match is an empty slice and a nil error.
	Search(ctx context.Context, question string) ([]Hit, error)
}

// Hit is one remembered segment found by Search.
type Hit struct {
	ID    string    // the memory's identifier within its store
	Text  string    // the remembered segment (for long-term memory: the whole parent)
	Score float32   // relevance; for vector search the cosine similarity
	Time  time.Time // when it was stored; zero if unknown
	// Snippets are the parts of Text that matched (long-term memory's
	// small-to-big children); nil when the whole Text was the match.
	Snippets []string
}

// Texts returns the Text of each hit, in order.
func Texts(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Text
	}
	return out
}
