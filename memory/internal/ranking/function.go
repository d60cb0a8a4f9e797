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
//
// So do, in a memory of what was said, the verbs of saying (the last
// line): "what did Hana say?" asks for Hana's words, and a turn reporting
// the doctor's ("my doctor says…") came before Hana's, its "says" rarer
// than her name; "what did my doctor say?" still finds it by "doctor"
// (measured 2026-12-05 on the development sets, hybrid: MemoryBank's small
// stores R@1/5/10 +0.01, RealMem R@10 0.322 → 0.321 and R@5 0.222 → 0.223,
// the bundled set and MemoryBank unchanged).
var functionWords = strings.Fields(`
a about above after again against all also am an and any are as at
be because been before being below between both but by can could
doing down during each few for from further had has have having he her here hers herself him himself his
i if in into is it its itself just me more most my myself no nor not now
of off on once only or other our ours ourselves out over own
same she should so some such than that the their theirs them themselves then there these they this those through to too
under until up very was we were while will with would
you your yours yourself yourselves
say says said tell tells told mention mentions mentioned
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
