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
//
// A query that names nobody but speaks in the first person and not to
// anyone ("what is my dog's name?", not "what did you tell me?") is about
// the one who asks, and in a chat log that is the user: it names the
// namespace's speakers called "user" or "human" (the chat roles, in any
// case), with query unchanged. What someone says about themselves is
// where their facts are; what the other side says back is mostly the same
// words, longer.
func (st SpeakerTerms) NamedSpeakers(tok keyword.Tokenizer, speakers int, query string) (named []string, rest string) {
	if len(st) == 0 {
		return nil, query
	}
	named, rest = st.namedSpeakers(tok, query)
	if len(named) == 0 && speakers > 1 && firstPersonOnly(query) {
		named, rest = st.askers(tok), query
	}
	if len(named) == 0 || len(named) == speakers {
		return nil, query
	}
	return named, rest
}

// askerRoles are the speaker names that mean the user of a chat log, the
// one a first-person query is about.
var askerRoles = []string{"user", "human"}

// askers returns the speakers named as an asker role.
func (st SpeakerTerms) askers(tok keyword.Tokenizer) []string {
	var out []string
	for _, role := range askerRoles {
		for _, t := range tok.Tokens(role) {
			for _, s := range st[t] {
				if strings.EqualFold(strings.TrimSpace(s), role) && !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// First- and second-person words: English pronouns and their
// contractions, and the Chinese pronouns, matched within a word.
var (
	firstPerson  = map[string]bool{"i": true, "me": true, "my": true, "mine": true, "myself": true, "i'm": true, "im": true, "i've": true, "i'd": true, "i'll": true}
	secondPerson = map[string]bool{"you": true, "your": true, "yours": true, "yourself": true, "you're": true, "you've": true, "you'd": true, "you'll": true, "u": true, "ur": true}
	cjkFirst     = []string{"我"}
	cjkSecond    = []string{"你", "您"}
)

// firstPersonOnly reports whether query speaks in the first person and
// not in the second.
func firstPersonOnly(query string) bool {
	first := false
	for w := range strings.FieldsSeq(query) {
		core := wordCore(w)
		if secondPerson[core] || containsAny(w, cjkSecond) {
			return false
		}
		first = first || firstPerson[core] || containsAny(w, cjkFirst)
	}
	return first
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// namedSpeakers is NamedSpeakers' split by names alone.
func (st SpeakerTerms) namedSpeakers(tok keyword.Tokenizer, query string) (named []string, rest string) {
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
	return named, b.String()
}
