package longterm

import (
	"fmt"

	"github.com/agentmem/agentmem/keyword"
)

// keywordTokenizer returns the memory's tokenizer (WithTokenizer), or the
// default one.
func (o *options) keywordTokenizer() (keyword.Tokenizer, error) {
	if o.tokenizer != nil {
		return o.tokenizer, nil
	}
	tok, err := keyword.NewTokenizer()
	if err != nil {
		return nil, fmt.Errorf("longterm: keyword tokenizer: %w", err)
	}
	return tok, nil
}
