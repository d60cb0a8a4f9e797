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
// words, longer. A question about the answerer's words instead ("What
// painters did you recommend to me?", "你给我推荐过哪些画家？") names, in a
// chat log with such a user, its other speakers (asksAnswerer): the
// recommendation is in the answer, not in the user's turn that asked for
// it, which holds the same words.
func (st SpeakerTerms) NamedSpeakers(tok keyword.Tokenizer, speakers int, query string) (named []string, rest string) {
	if len(st) == 0 {
		return nil, query
	}
	named, rest = st.namedSpeakers(tok, query)
	if len(named) == 0 && speakers > 1 {
		switch {
		case firstPersonOnly(query):
			named, rest = st.askers(tok), query
		case asksAnswerer(query):
			named, rest = st.answerers(tok), query
		}
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

// asksAnswerer reports whether query asks (IsQuestion), in at most
// recallSentences sentences, about what the answerer said or did before:
// in English a second-person word about
// the answerer (aboutAnswerer: "what did you recommend", "which tips have
// you shared", "your plan"); in Chinese 你 or 您 as the subject of a verb
// of telling or giving (cjkAnswererVerbs: "你给我推荐过", "你告诉过我"),
// not its object ("我和你分享过", "我向你咨询过": the asker's words).
func asksAnswerer(query string) bool {
	if !IsQuestion(query) || sentences(query) > recallSentences {
		return false
	}
	words := strings.Fields(query)
	for i, w := range words {
		if secondPerson[wordCore(w)] && aboutAnswerer(words, i) && (i == 0 || !asSaid[wordCore(words[i-1])]) {
			return true
		}
	}
	rs := []rune(query)
	for i, r := range rs {
		if r != '你' && r != '您' || i > 0 && strings.ContainsRune(cjkBeforeObject, rs[i-1]) {
			continue
		}
		after := string(rs[i+1 : min(i+1+cjkAnswererReach, len(rs))])
		if containsAny(after, cjkAnswererVerbs) {
			return true
		}
	}
	return false
}

// recallSentences is the most sentences of a question about the
// answerer's words: one or two ("You recommended a game to me. What was
// its name?") recall them; a longer message that mentions them ("I'm
// ready for the recovery plan you suggested. The warm-ups, the stretches.
// How do I do them?") goes on with the task, and what it needs is in the
// user's own turns as often as in the answer. Measured 2026-12-04 against
// no limit: MemoryBank's and its Chinese version's gains kept whole, and
// RealMem's R@10 0.330 → 0.332 (without a minimum relevance), as before
// the rule: its questions are a user's messages of several sentences.
const recallSentences = 2

// sentences returns how many sentences text has: runs with a word between
// the ends of sentences (. ? ! and their Chinese forms, line breaks).
func sentences(text string) int {
	n := 0
	for _, s := range strings.FieldsFunc(text, func(r rune) bool { return strings.ContainsRune(".?!。？！\n", r) }) {
		if hasWord(s) {
			n++
		}
	}
	return n
}

// asSaid are the words before "you" that make "you said" a manner, not
// what is asked: "I logged it like you said. What's next?"
var asSaid = map[string]bool{"like": true, "as": true}

// cjkAnswererVerbs are Chinese verbs of telling or giving whose subject,
// 你, is the answerer ("你给我推荐过", "你曾经教过我", "你给了我什么建议");
// cjkAnswererReach is within how many characters after 你 one must stand
// (an adverb between: "你曾经和我推荐过"); and cjkBeforeObject the characters
// after which 你 is an object ("和你", "向你", "告诉过你").
var cjkAnswererVerbs = []string{"推荐", "建议", "告诉", "教", "分享", "提到", "说过", "给了", "给我", "和我", "跟我"}

const (
	cjkAnswererReach = 4
	cjkBeforeObject  = "和向给跟问对过诉帮让请"
)

// answerers returns the speakers other than the askers (askers), when
// the namespace has askers: in a chat log, the assistant's side.
func (st SpeakerTerms) answerers(tok keyword.Tokenizer) []string {
	askers := st.askers(tok)
	if len(askers) == 0 {
		return nil
	}
	var out []string
	for _, ss := range st {
		for _, s := range ss {
			if !slices.Contains(askers, s) && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	slices.Sort(out)
	return out
}

// askers returns the speakers named as an asker role (IsAsker).
func (st SpeakerTerms) askers(tok keyword.Tokenizer) []string {
	var out []string
	for _, role := range askerRoles {
		for _, t := range tok.Tokens(role) {
			for _, s := range st[t] {
				if IsAsker(s) && !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// IsAsker reports whether speaker is the name of an asker role, a chat
// log's user ("User", "human").
func IsAsker(speaker string) bool {
	return slices.ContainsFunc(askerRoles, func(role string) bool { return strings.EqualFold(strings.TrimSpace(speaker), role) })
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
