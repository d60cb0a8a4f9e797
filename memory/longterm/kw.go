package longterm

import (
	"fmt"

	"github.com/agentmem/agentmem/keyword"
)

// keywordIndex is the keyword path: BM25 over the children's text, one
// document per child id.
type keywordIndex = keyword.Index

// newKeywordIndex returns an empty keyword index with the memory's
// tokenizer and BM25 parameters.
func (o *options) newKeywordIndex() (*keywordIndex, error) {
	tok := o.tokenizer
	if tok == nil {
		var err error
		if tok, err = keyword.NewTokenizer(); err != nil {
			return nil, fmt.Errorf("longterm: keyword tokenizer: %w", err)
		}
	}
	return keyword.NewIndex(tok, o.bm25...), nil
}
