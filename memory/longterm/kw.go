package longterm

import (
	"io"
)

// kwResult is one keyword-path hit: a child id and its BM25 score.
type kwResult struct {
	ID    int64
	Score float64
}

// keywordIndex is what the memory needs of the keyword path.
type keywordIndex interface {
	Add(id int64, text string)
	Delete(id int64) bool
	Search(query string, k int, keep func(int64) bool) []kwResult
	Len() int
	Export(w io.Writer) error
	Import(r io.Reader) error
}
