package ranking

import (
	"slices"
	"strings"

	"github.com/agentmem/agentmem/keyword"
)

// SpeakerTerms maps each term of a speaker's name to the speakers whose
// name has it, so that a query naming a speaker ("Deborah") can prefer
// what that speaker said over turns that merely say the name.
type SpeakerTerms map[string][]string

// Add adds speaker s's terms.
func (st SpeakerTerms) Add(tok keyword.Tokenizer, s string) {
	for _, t := range tok.Tokens(s) {
		if !slices.Contains(st[t], s) {
			st[t] = append(st[t], s)
		}
	}
}

// Remove takes speaker s's terms out again.
func (st SpeakerTerms) Remove(tok keyword.Tokenizer, s string) {
	for _, t := range tok.Tokens(s) {
		st[t] = slices.DeleteFunc(st[t], func(x string) bool { return x == s })
		if len(st[t]) == 0 {
			delete(st, t)
		}
	}
}

// NamedSpeakers splits query into the speakers it names (words all of
// whose terms are terms of speakers' names) and the rest of the query.
// When the query names none, or names every one of the namespace's
// speakers (speakers: how many it has; "User" in a two-party log says
// nothing), it returns no speakers and query unchanged.
func (st SpeakerTerms) NamedSpeakers(tok keyword.Tokenizer, speakers int, query string) (named []string, rest string) {
	if len(st) == 0 {
		return nil, query
	}
	var b strings.Builder
	for w := range strings.FieldsSeq(query) {
		terms := tok.Tokens(w)
		isName := len(terms) > 0
		for _, t := range terms {
			ss, ok := st[t]
			if !ok {
				isName = false
				break
			}
			for _, s := range ss {
				if !slices.Contains(named, s) {
					named = append(named, s)
				}
			}
		}
		if !isName {
			b.WriteString(w)
			b.WriteByte(' ')
		}
	}
	if len(named) == 0 || len(named) == speakers {
		return nil, query
	}
	return named, b.String()
}
