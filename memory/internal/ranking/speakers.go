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

// KeywordQuery turns what NamedSpeakers found in a query as asked (named,
// rest) into what a keyword path searches: the speakers to boost and the
// words to search, without question words. words is the whole query
// without them (WithoutQuestionWords, once per query, whatever the number
// of namespaces searched); only a rest with names cut out is stripped
// here. A query that is nothing but a name boosts nobody and searches for
// the name in the text.
func KeywordQuery(tok keyword.Tokenizer, query, words string, named []string, rest string) ([]string, string) {
	if len(named) == 0 {
		return nil, words
	}
	if rest == query { // the asker: nothing cut out
		return named, words
	}
	rest = WithoutQuestionWords(rest)
	if len(tok.Tokens(rest)) == 0 {
		return nil, words
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
// not about what the other side said or did: "you" in a request ("can
// you help me with my budget?", "thank you") still leaves the question
// about the asker's things; "what did you suggest for my budget?", "you
// mentioned…", "your plan" ask about the answerer's words.
func firstPersonOnly(query string) bool {
	first := false
	words := strings.Fields(query)
	for i, w := range words {
		core := wordCore(w)
		if containsAny(w, cjkSecond) {
			return false
		}
		if secondPerson[core] && aboutAnswerer(words, i) {
			return false
		}
		first = first || firstPerson[core] || containsAny(w, cjkFirst)
	}
	return first
}

// aboutAnswerer reports whether the second-person word words[i] refers to
// what the answerer said or did before: "your" (their plan, advice,
// list), a "you've"/"you'd", "did you"/"have you"/"had you", or "you"
// followed within two words by a verb of saying or making in the past
// tense ("you suggested", "you just mentioned").
func aboutAnswerer(words []string, i int) bool {
	core := wordCore(words[i])
	switch core {
	case "your", "yours", "ur", "you've", "you'd":
		return true
	}
	if i > 0 {
		switch wordCore(words[i-1]) {
		case "did", "have", "had":
			return true
		}
	}
	for j := i + 1; j < len(words) && j <= i+2; j++ {
		if answererVerbs[wordCore(words[j])] {
			return true
		}
	}
	return false
}

// answererVerbs are past tenses of saying or making something for
// someone: after "you", they point at the answerer's earlier words.
var answererVerbs = map[string]bool{
	"said": true, "told": true, "mentioned": true, "suggested": true, "recommended": true, "proposed": true,
	"gave": true, "sent": true, "provided": true, "shared": true, "wrote": true, "listed": true,
	"explained": true, "described": true, "offered": true, "advised": true, "noted": true, "made": true,
	"created": true, "drafted": true, "outlined": true, "showed": true, "shown": true, "put": true, "came": true,
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
