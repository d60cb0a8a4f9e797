package ranking

import (
	"strings"
	"unicode/utf8"

	"github.com/agentmem/agentmem/keyword"
	"unicode"
)

// questionWords are the words that make a question a question: "what",
// "when", 什么, 谁. They say what kind of answer is wanted, not what it is
// about, and in a conversation they mark the turns that ask rather than
// the ones that tell: "What is RP-20931?" should find "the repair order
// number is RP-20931", not "what are you reading next?". The keyword path
// leaves them out of a query (see WithoutQuestionWords).
var questionWords = map[string]bool{
	"what": true, "what's": true, "whats": true, "which": true, "who": true, "who's": true,
	"whom": true, "whose": true, "when": true, "where": true, "where's": true, "why": true,
	"how": true, "do": true, "does": true, "did": true,
}

// cjkQuestionWords are Chinese interrogatives, cut out of a run of
// characters wherever they occur (Chinese has no spaces to find words by).
// Longer forms first. 哪天, 几点, 多久 are each one word ("when", "what
// time", "how long"): cut as 哪 alone, "出差是哪天？" kept 天 and found "我
// 最近在学日语，每天晚上练习半小时" before the trip.
var cjkQuestionWords = []string{"什么时候", "哪一天", "为什么", "怎么样", "怎么", "什么", "哪里", "哪儿", "哪个", "哪些", "哪天", "几时", "几点", "几号", "多少", "多久", "谁", "哪"}

// namingVerbs end a question that asks what something is called ("What
// was the restaurant called?", "What is the new project named?"):
// WithoutQuestionWords leaves them out there.
var namingVerbs = map[string]bool{"called": true, "named": true}

// recallVerbs are the verbs by which a query asks the memory itself to
// recall: "do you remember", "remind me", "tell me about", "what do you
// know about", "did I tell you", "I forgot". They say what is asked of the
// memory, not what the answer is about, and no record that answers holds
// them.
var recallVerbs = map[string]bool{
	"remember": true, "recall": true, "remind": true, "tell": true, "told": true, "know": true,
	"forget": true, "forgot": true, "forgotten": true,
}

// tellingVerbs are the recall verbs whose object is the one told: the
// "me" of "remind me", the "you" of "did I tell you about" are of the
// frame. After the others a pronoun is the subject of the question they
// frame: "Do you remember | you recommended a film?", "Do you recall | I
// said…".
var tellingVerbs = map[string]bool{"tell": true, "told": true, "remind": true}

// pronouns are frameWords that may be a person: after a recall verb not
// of tellingVerbs, they begin the question framed.
var pronouns = map[string]bool{"i": true, "me": true, "you": true}

// frameWords are the words that may stand with a recall verb, and
// question words, in a query's recall frame: "can you please remind me
// again", "is there anything you know about", "did I tell you about".
var frameWords = map[string]bool{
	"can": true, "could": true, "would": true, "will": true, "you": true, "please": true,
	"me": true, "i": true, "have": true, "has": true, "is": true, "there": true, "anything": true,
	"something": true, "about": true, "of": true, "again": true, "hey": true, "hi": true,
	"hello": true, "so": true, "ok": true, "okay": true, "i've": true,
}

// leadWords may stand before a recall verb only: "I can't remember", "I
// don't know", "I do not recall", "I've forgotten". After it, "remember
// not to…" is the question's.
var leadWords = map[string]bool{
	"can't": true, "cannot": true, "don't": true, "not": true, "didn't": true,
}

// cjkRecallFrames are the Chinese recall frames cut from a query's start
// (after cjkFramePolite): 你还记得 ("do you still remember"), 告诉我 ("tell
// me"), 我忘了 ("I forgot"). Longer forms first.
var cjkRecallFrames = []string{"你还记得", "您还记得", "你记不记得", "你记得", "您记得", "还记得", "你知道", "您知道", "告诉我", "提醒我", "跟我说说", "我不记得", "我记不清", "我忘了"}

// cjkFramePolite are what may come before a Chinese recall frame: 请
// ("please"), 你能 ("can you").
var cjkFramePolite = []string{"请你", "请您", "请", "你能", "您能", "你可以", "能不能", "可以"}

// recallFrame returns how many of words (a query's, in order) make its
// recall frame: a run from its start of question words and frameWords up
// to its first recall verb, with the frame words that follow the verb up
// to a comma, but not a question word nor a pronoun, who begins the
// question, unless it is the object of a verb of telling (tellingVerbs:
// "Do you remember | I recommended a film?", "Tell me, | you recommended
// a film", "Do you remember | where my sister lives?", "Can
// you remind me | what you recommended?", "What do you know about | my
// sister?"); 0 for none. The question words left are those of the
// question it frames, which say who it asks about ("what you
// recommended": what the answerer said, not what "me" said). A query that
// is nothing but its frame has none: "What do you know?" asks what it
// says.
func recallFrame(words []string) int {
	n := 0
	object := false // the verb tells someone, named next: "tell me", "remind me", "told you"
	for i, w := range words {
		c := wordCore(w)
		switch {
		case n == 0 && recallVerbs[c]:
			n, object = i+1, tellingVerbs[c]
		case n == 0 && (questionWords[c] || frameWords[c] || leadWords[c]):
			continue
		case n == i && frameWords[c] && !questionWords[c] && (!pronouns[c] || object):
			n = i + 1
		default:
			return n
		}
		// After the verb, one pronoun is its object ("remind me | I
		// don't like…"), and a word before a comma or a colon ends the
		// frame ("Tell me, | you recommended…").
		object = object && n == i+1 && recallVerbs[c]
		if last, _ := utf8.DecodeLastRuneInString(w); !unicode.IsLetter(last) && !unicode.IsDigit(last) {
			return n
		}
	}
	return 0 // all frame
}

// WithoutRecallFrame returns query without its recall frame
// (recallFrame; 你还记得, 告诉我 and the like at its start: cjkRecallFrames):
// what the question asks, in its own words.
func WithoutRecallFrame(query string) string {
	words := strings.Fields(query)
	n := recallFrame(words)
	if n == len(words) {
		return query
	}
	w, cut := withoutCJKFrame(words[n])
	if n == 0 && !cut {
		return query
	}
	words[n] = w
	return strings.Join(words[n:], " ")
}

// withoutCJKFrame returns w (a query's first word) without the Chinese
// recall frame it starts with, if any (cjkRecallFrames), and whether it
// had one.
func withoutCJKFrame(w string) (string, bool) {
	rest := w
	for _, p := range cjkFramePolite {
		if r, ok := strings.CutPrefix(rest, p); ok {
			rest = r
			break
		}
	}
	for _, f := range cjkRecallFrames {
		if r, ok := strings.CutPrefix(rest, f); ok && hasWord(r) {
			return r, true
		}
	}
	return w, false
}

// WithoutQuestionWords returns query without its recall frame ("Do you
// remember", "Can you remind me", 你还记得: WithoutRecallFrame) and its
// question words, or query itself if nothing else is left. The keyword path
// of both stores searches with it.
func WithoutQuestionWords(query string) string {
	var b strings.Builder
	kept := false
	what := false // the sentence so far asks "what"
	for _, w := range strings.Fields(WithoutRecallFrame(query)) {
		c, end := wordCore(w), endsSentence(w)
		asks := questionWords[c]
		if asks && strings.HasPrefix(c, "what") {
			what = true
		}
		// "What is Maria's dog called?" asks for a name: its "called" is
		// the question's, as a question word is (the answer need not say
		// it, "Maria's dog Pixel…", and "Good call." does not answer it).
		naming := what && namingVerbs[c] && strings.HasSuffix(strings.TrimRight(w, `"'’”)`), "?")
		if end {
			what = false
		}
		if asks || naming {
			continue
		}
		for _, q := range cjkQuestionWords {
			if strings.Contains(w, q) {
				w = strings.ReplaceAll(w, q, " ")
			}
		}
		if hasWord(w) {
			kept = true
		}
		b.WriteString(w)
		b.WriteByte(' ')
	}
	if !kept {
		return query
	}
	return b.String()
}

// wordCore returns w without the punctuation around it, in lower case and
// with a typographic apostrophe made plain ("What’s?" → "what's"): the
// form the word lists here are written in.
func wordCore(w string) string {
	return strings.ToLower(strings.ReplaceAll(trimWord(w), "’", "'"))
}

// trimWord returns w without the characters around it that are neither
// letters nor digits ("'Whisper'," → "Whisper").
func trimWord(w string) string {
	return strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// hasWord reports whether s has a letter or a digit.
func hasWord(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }) >= 0
}

// Share returns the share of query's distinct terms (as tok cuts them)
// that text holds, every term weighing alike but a character alone (of
// Chinese, say: a Latin letter alone is no term, a digit alone weighs as
// a word), which weighs singleWeight: 0 for a query without terms.
func Share(tok keyword.Tokenizer, query, text string) float64 {
	held, terms := holds(tok, query, text, func(t string) float64 {
		if r, n := utf8.DecodeRuneInString(t); n == len(t) && !unicode.IsDigit(r) {
			return singleWeight
		}
		return 1
	})
	if terms == 0 {
		return 0
	}
	return held / terms
}

// singleWeight is what a single character of a query weighs in Share
// beside a term of two or more (a Chinese bigram, a word). Chinese is cut
// into its characters and their bigrams (keyword.NewTokenizer), and a
// text of some length holds most of a question's characters whatever it
// is about: counted like words, they made a question about another
// Wikipedia article share a third of its terms with the best paragraph
// of any hundred. Not left out (weight 0), because a Chinese word may be
// one character (涨, 换): measured 2026-12-05 (`agentmem eval DIR
// --cross-probes`, the relevance model refitted on the same pool for
// each), weight 0 cut DRCD's probes surfacing a hit 84.5% → 71.4% but
// cost the bundled set's Chinese answers in the next turn (hybrid
// recall@10 0.957 → 0.944, vector 0.821 → 0.796); 0.25 cut them to 77.0%
// and cost the same vector recall; 0.5 to 80.8%, the bundled set's
// vector recall 0.809 and the rest of every set's recall kept.
const singleWeight = 0.5

// Shared returns how many of query's distinct terms (as tok cuts them)
// of two or more letters text holds: a Chinese character alone is left
// out, so that a Chinese query's count is about its words (its bigrams),
// not twice that.
func Shared(tok keyword.Tokenizer, query, text string) int {
	held, _ := SharedOf(tok, query, text)
	return held
}

// SharedOf is Shared with the number of query's distinct terms it counts
// from.
func SharedOf(tok keyword.Tokenizer, query, text string) (held, terms int) {
	h, n := holds(tok, query, text, func(t string) float64 {
		if utf8.RuneCountInString(t) > 1 {
			return 1
		}
		return 0
	})
	return int(h), int(n)
}

// holds returns the weight of query's distinct terms (as tok cuts them)
// that text holds and the weight of them all, each term weighing what
// weight says (0: not counted).
func holds(tok keyword.Tokenizer, query, text string, weight func(term string) float64) (held, terms float64) {
	q := map[string]float64{}
	for _, t := range tok.Tokens(query) {
		if _, ok := q[t]; !ok {
			w := weight(t)
			q[t] = w
			terms += w
		}
	}
	for _, t := range tok.Tokens(text) {
		if w, ok := q[t]; ok {
			held += w
			delete(q, t)
		}
	}
	return held, terms
}

// Asks reports whether a turn's text asks the other side for an answer:
// a question (IsQuestion), or a request in the imperative for something
// to be told, found or checked, its first word (after "please") one of
// requestVerbs ("Check the license of the model before we ship it.",
// "Tell me your flight number."). The turn after it, the other
// speaker's, is most often its answer ("It's Apache 2.0.").
func Asks(text string) bool {
	if IsQuestion(text) {
		return true
	}
	for w := range strings.FieldsSeq(text) {
		c := wordCore(w)
		if c != "please" {
			return requestVerbs[c]
		}
	}
	return false
}

// requestVerbs are the English verbs that open a request for an answer.
var requestVerbs = map[string]bool{
	"check": true, "find": true, "look": true, "tell": true, "show": true, "send": true, "give": true, "list": true,
	"explain": true, "describe": true, "remind": true, "confirm": true, "recommend": true, "suggest": true,
}

// IsQuestion reports whether a turn's text asks something: it ends with a
// question mark (or the Chinese 吗 or 呢), or it does not end with "!" and
// its first word is a question word other than "when" ("What kind of
// cuisine do you like", "Do you have any recommended dishes"; "When I was
// young…" and "What a day!" tell). The turn after it, the other speaker's,
// is most often its answer.
func IsQuestion(text string) bool {
	t := strings.TrimRightFunc(text, func(r rune) bool {
		return unicode.IsSpace(r) || r == '"' || r == '\'' || r == '”' || r == '’' || r == ')' || r == '）'
	})
	if strings.HasSuffix(t, "?") || strings.HasSuffix(t, "？") || strings.HasSuffix(t, "吗") || strings.HasSuffix(t, "呢") {
		return true
	}
	if strings.HasSuffix(t, "!") || strings.HasSuffix(t, "！") {
		return false // "What a day!"
	}
	for w := range strings.FieldsSeq(t) {
		c := wordCore(w)
		return questionWords[c] && c != "when" && w == strings.TrimRightFunc(w, unicode.IsPunct)
	}
	return false
}
