package ranking

import (
	"strings"

	"github.com/agentmem/agentmem/keyword"
)

// functionWords are English function words: pronouns, auxiliaries,
// prepositions, determiners, conjunctions. They hold a sentence together
// and say little of what it is about. BM25 gives a word weight by how few
// of a namespace's records hold it, which is a fair measure only in a
// namespace of many: among a handful of notes, "my" or "you" is as rare as
// "sister" and weighs as much, and a question's "you" and "me", which no
// note holds, weigh more than its one word a note does hold.
var functionWords = strings.Fields(`
a about above after again against all also am an and any are as at
be because been before being below between both but by can could
doing down during each few for from further had has have having he her here hers herself him himself his
i if in into is it its itself just me more most my myself no nor not now
of off on once only or other our ours ourselves out over own
same she should so some such than that the their theirs them themselves then there these they this those through to too
under until up very was we were while will with would
you your yours yourself yourselves
`)

// FunctionTerms returns the terms tok makes of the English function words
// (those it does not drop as stop words), stemmed as it stems them.
func FunctionTerms(tok keyword.Tokenizer) map[string]bool {
	out := map[string]bool{}
	for _, w := range functionWords {
		for _, t := range tok.Tokens(w) {
			out[t] = true
		}
	}
	return out
}
