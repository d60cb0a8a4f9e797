package longterm

import (
	"time"

	"github.com/agentmem/agentmem/memory/engine"
)

// WithQueryIDF sets whether the keyword path weights each word of a query
// by its idf too (keyword.WithQueryIDF), so that a matching word scores
// idf² times its BM25 term-frequency part. On by default: a question is
// often a user's message of several sentences, and plain BM25 then lets
// a record win by matching several of its ordinary words ("plan",
// "know", "week") where another holds its one rare word. On the
// development set (RealMem) it lifts keyword recall@10 from 0.299 to
// 0.318; false gives plain BM25 weights, as memory/postgres's
// WithQueryIDF(false) does.
func WithQueryIDF(on bool) Option {
	return withRanking(engine.WithQueryIDF(on))
}

// WithQueryTF makes a word that a query repeats count more in the keyword
// path (keyword.WithQueryTF's k3; 0, the default, counts it once).
func WithQueryTF(k3 float64) Option {
	return withRanking(engine.WithQueryTF(k3))
}

// Defaults of the keyword path's query expansion.
const (
	// DefaultRelatedWeight is the weight of a word that WithQueryExpansion
	// adds, relative to the query's own words (1).
	DefaultRelatedWeight = engine.DefaultRelatedWeight
	// DefaultFeedbackDocs and DefaultFeedbackTerms: WithFeedback's
	// defaults, the top records read and the terms taken from them.
	DefaultFeedbackDocs  = engine.DefaultFeedbackDocs
	DefaultFeedbackTerms = engine.DefaultFeedbackTerms
	// DefaultFeedbackWeight: WithFeedback's default weight of the
	// strongest feedback term, relative to the query's own words.
	DefaultFeedbackWeight = engine.DefaultFeedbackWeight
)

// WithQueryExpansion makes the keyword path add to each query the words
// that related returns for each of its words (lower-cased), each at
// weight relative to the query's own words (≤ 0 means
// DefaultRelatedWeight): a remedy for questions that share no word with
// their answer ("flight" for "plane"). related must be safe for concurrent
// use and fast (it is called per query word; cache in it). The nearest
// neighbours of a word embedding serve: see glove.Vectors.Related.
func WithQueryExpansion(related func(word string) []string, weight float64) Option {
	return withRanking(engine.WithQueryExpansion(related, weight))
}

// WithFeedback turns on pseudo-relevance feedback (RM3) in the keyword
// path: the query is run once, the terms most typical of its top docs
// records (their relevance model) are added to it, the strongest at
// weight relative to the query's own words and the others in proportion,
// and it is run again. docs ≤ 0 turns feedback off; terms and weight ≤ 0
// mean the defaults.
func WithFeedback(docs, terms int, weight float64) Option {
	return withRanking(engine.WithFeedback(docs, terms, weight))
}

// WithTimePrior makes the keyword path prefer, by the factor 1+boost, the
// records whose time falls in a period the query names: a date ("on 8 May
// 2023", "2023-05-08"), a month ("in May 2023") or a relative period
// ("yesterday", "last week", "3 days ago", counted back from the query's
// AsOf when it gives one, else from the namespace's newest record). A query naming none, or a date that does not
// parse, ranks as before. 0 (the default) turns it off.
func WithTimePrior(boost float64) Option {
	return withRanking(engine.WithTimePrior(boost))
}

// DefaultRecencyBoost and DefaultRecencyHalfLife are WithRecency's
// defaults.
const (
	DefaultRecencyBoost    = engine.DefaultRecencyBoost
	DefaultRecencyHalfLife = engine.DefaultRecencyHalfLife
)

// WithRecency makes the keyword path prefer recent records for a query
// that refers back to an earlier conversation without naming a time ("from
// last time", "we already agreed", "what's next for the plan?"): a record
// said age before the namespace's newest scores
// (1 + boost·2^(−age/halfLife)) / (1 + boost) times its score
// (engine.WithRecency). Other queries rank as before.
// boost 0 turns it off; halfLife 0 means DefaultRecencyHalfLife.
func WithRecency(boost float64, halfLife time.Duration) Option {
	return withRanking(engine.WithRecency(boost, halfLife))
}

// DefaultNextWeight is WithNextWeight's default, the same as
// DefaultNeighbourWeight's for the previous record.
const DefaultNextWeight = engine.DefaultNextWeight

// WithNextWeight sets the weight of the keyword path's field of the next
// record's text (within 12 hours), relative to the record's own text
// (default DefaultNextWeight): a question found through its answer, as
// WithNeighbourWeight finds an answer through its question. 0 turns it
// off.
func WithNextWeight(w float64) Option {
	return withRanking(engine.WithNextWeight(w))
}

// DefaultEpisodeWeight is WithEpisodeWeight's default.
const DefaultEpisodeWeight = engine.DefaultEpisodeWeight

// WithEpisodeWeight sets how much the keyword path lets a record's
// conversation speak for it (default DefaultEpisodeWeight; 0 turns it
// off). An episode is a run of records of one namespace each at most 12
// hours after the one before (a chat session); it is indexed as one
// document, and the records a query finds in the three episodes that best
// match it gain w times the query's best record score, scaled by their
// episode's score relative to the best episode's; those in the episode of
// the record whose own words match best gain w times the best score too,
// so that a fact said once is not buried under later conversations about
// its subject. It finds the turn of the conversation a question is about
// when the turn itself shares few words with the question.
func WithEpisodeWeight(w float64) Option {
	return withRanking(engine.WithEpisodeWeight(w))
}
