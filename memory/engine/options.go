package engine

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"time"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/internal/ranking"
	"github.com/agentmem/agentmem/memory/internal/setting"
	"github.com/agentmem/agentmem/memory/window/tokens"
)

// Defaults of the options.
const (
	// DefaultTopK is how many memories a search returns when Query.K is 0.
	DefaultTopK = 5
	// DefaultRRFK is the k of reciprocal rank fusion, 1/(k+rank): the value
	// of Cormack et al., which damps the difference between the first few
	// ranks of each path.
	DefaultRRFK = 60
	// DefaultVectorWeight and DefaultKeywordWeight are the weights of
	// margin fusion (WithMarginFusion), the default over an embedder whose
	// vectors do not model meaning (embed.Lexical, embed.WordVectors; see
	// DefaultWeights). The keyword path weighs more: the offline hash
	// embedder's vector path is a second lexical signal, weaker than BM25
	// on questions (RealMem R@10 at 0.25 / 0.3 / 0.4: 0.315 / 0.315 /
	// 0.314, keyword alone 0.315), but the strongest on a sentence asked
	// nearly word for word (R@1 0.95 against BM25's 0.91 on
	// scripts/lookup-probe.py's sentences), and margin fusion lets it
	// count there alone: hybrid R@1 on those 0.87 by score fusion at 0.1,
	// 0.91 at 0.3.
	DefaultVectorWeight  = 0.3
	DefaultKeywordWeight = 0.7
	// DefaultModelVectorWeight and DefaultModelKeywordWeight are the
	// weights of score fusion over a model embedder (embed.Model: Ollama's,
	// or any embedder that does not say its Kind): the two paths weigh the
	// same, the neutral choice. Not tuned: this project has no model
	// server to tune them on.
	DefaultModelVectorWeight  = 0.5
	DefaultModelKeywordWeight = 0.5
	// DefaultNeighbourWeight is what the previous record's words are
	// worth on the keyword path, relative to the record's own.
	DefaultNeighbourWeight = 0.3
	// DefaultNextWeight is what the next record's words are worth on the
	// keyword path, relative to the record's own: a question is found
	// through the answer it got, as an answer is through its question.
	DefaultNextWeight = 0.3
	// DefaultHandOff is what a question among the best matches gives up
	// to the answer that follows it (WithAnswerHandOff).
	DefaultHandOff = 0.1
	// DefaultEpisodeWeight is what the best-matching conversations lend
	// the records found in them (WithEpisodeWeight).
	DefaultEpisodeWeight = 0.5
	// DefaultSpeakerBoost: a record spoken by a speaker the query names
	// scores 1 + DefaultSpeakerBoost times its keyword score.
	DefaultSpeakerBoost = 0.5
	// DefaultRecencyBoost and DefaultRecencyHalfLife are WithRecency's
	// defaults. On the development set (RealMem, whose questions continue
	// earlier sessions) hybrid recall@10 goes from 0.314 to 0.331 (+0.022
	// on conversations 1–5, where they were chosen, +0.011 on 6–10); a
	// boost of 2 gains more (0.337) but costs Implicit Preference
	// questions (old preferences) 0.010. The bundled testdata/eval, asked
	// after the whole history, does not change: its questions do not
	// refer back. A recency prior for every query instead lost it 0.025
	// recall@10 there.
	DefaultRecencyBoost    = 1
	DefaultRecencyHalfLife = 14 * 24 * time.Hour
	// DefaultTimeBoost is WithTimePrior's default: a record said in the
	// time a query names ("on May 2nd", "last week") scores twice its
	// keyword score. On MemoryBank (testdata/memorybank, 37 of 99
	// questions name a day) hybrid recall@10 goes from 0.843 to 0.859 (its
	// time questions 0.689 → 0.730); RealMem (0.328 → 0.329) and the
	// bundled testdata/eval (0.957) keep theirs, the latter losing one
	// question at recall@1. A boost of 2 gains MemoryBank another 0.010.
	DefaultTimeBoost = 1
	// DefaultRelatedWeight is the weight of a word that WithQueryExpansion
	// adds, relative to the query's own words (1).
	DefaultRelatedWeight = 0.3
	// DefaultFeedbackDocs and DefaultFeedbackTerms: WithFeedback's
	// defaults, the top records read and the terms taken from them.
	DefaultFeedbackDocs  = 10
	DefaultFeedbackTerms = 10
	// DefaultFeedbackWeight: WithFeedback's default weight of the
	// strongest feedback term, relative to the query's own words.
	DefaultFeedbackWeight = 0.3
)

// DefaultWeights returns the fusion weights a memory over emb uses when no
// option sets them: DefaultModelVectorWeight and DefaultModelKeywordWeight
// over a model embedder (embed.KindOf is embed.Model), DefaultVectorWeight
// and DefaultKeywordWeight otherwise.
func DefaultWeights(emb embed.Embedder) (vector, keyword float64) {
	if embed.KindOf(emb) == embed.Model {
		return DefaultModelVectorWeight, DefaultModelKeywordWeight
	}
	return DefaultVectorWeight, DefaultKeywordWeight
}

// A Reranker reorders the candidates of a search before they are cut to
// the query's K: a cross-encoder or an LLM that reads the question beside
// each candidate. Hits come best first by the fused score; Rerank returns
// them (or a subset) in its order. See WithReranker.
type Reranker interface {
	Rerank(ctx context.Context, query string, hits []memory.Hit) ([]memory.Hit, error)
}

// config is what the options set.
type config struct {
	topK         int
	minScore     float32
	minRelevance float32
	mode         memory.Mode

	fusion        ranking.FusionKind
	fusionSet     bool // an option chose fusion; else ranking.DefaultKind
	rrfK          float64
	vectorWeight  float64
	keywordWeight float64

	bm25       keyword.Params
	noQueryIDF bool
	// noNewerFirst: WithNewerFirst(false).
	noNewerFirst bool

	neighbourWeight, nextWeight float64
	handOff                     float64
	episodeWeight               float64
	speakerBoost                float64
	timeBoost                   float64
	recencyBoost                float64
	recencyHalfLife             time.Duration

	related       func(word string) []string
	relatedWeight float64

	feedbackDocs, feedbackTerms int
	feedbackWeight              float64

	reranker    Reranker
	rerankDepth int

	tokens tokens.Counter // a query's token budget's

	nearScore  float64
	nearPolicy NearPolicy
}

func defaultConfig() config {
	return config{
		topK:            DefaultTopK,
		minRelevance:    DefaultMinRelevance,
		rrfK:            DefaultRRFK,
		bm25:            keyword.DefaultParams(),
		neighbourWeight: DefaultNeighbourWeight,
		nextWeight:      DefaultNextWeight,
		handOff:         DefaultHandOff,
		episodeWeight:   DefaultEpisodeWeight,
		speakerBoost:    DefaultSpeakerBoost,
		recencyBoost:    DefaultRecencyBoost,
		timeBoost:       DefaultTimeBoost,
		recencyHalfLife: DefaultRecencyHalfLife,
		tokens:          tokens.Default,
		nearScore:       DefaultNearScore,
	}
}

// WithTokenCounter sets how a query's token budget (memory.Query.MaxTokens)
// counts a hit's text: the model's tokenizer, or an estimate. Default
// tokens.Default, the estimate memory/window counts its prompts with.
func WithTokenCounter(c tokens.Counter) Option {
	return func(cfg *config) error {
		if c == nil {
			return fmt.Errorf("nil token counter")
		}
		cfg.tokens = c
		return nil
	}
}

// An Option configures an [Engine]: how every store that uses it ranks.
// New checks each option's value and fails with an error wrapping
// memory.ErrInvalidArgument for one out of range.
type Option func(*config) error

// WithTopK sets how many memories a search returns when its Query.K is 0;
// k must be positive. Default DefaultTopK.
func WithTopK(k int) Option {
	return func(c *config) error { return setting.TopK(&c.topK, k) }
}

// WithMinScore sets the lowest cosine similarity a vector-path match may
// have, in [-1, 1], when a Query's MinScore is 0. Default 0: no minimum.
func WithMinScore(s float32) Option {
	return func(c *config) error { return setting.MinScore(&c.minScore, s) }
}

// WithMode sets the mode of the searches that do not choose one (a memory's
// Search). Default memory.Hybrid.
func WithMode(m memory.Mode) Option {
	return func(c *config) error { return setting.Mode(&c.mode, m) }
}

// WithScoreFusion fuses the paths of a hybrid search by their scores:
// each path's scores are calibrated to [0, 1] over the search's candidates
// (the vector path by min–max, the keyword path relative to its best) and
// added with these weights (finite, ≥ 0, not both 0). The default over a
// model embedder, with DefaultModelVectorWeight and
// DefaultModelKeywordWeight.
func WithScoreFusion(vectorWeight, keywordWeight float64) Option {
	return fusion(ranking.ScoreFusion, vectorWeight, keywordWeight)
}

// WithMarginFusion fuses the paths of a hybrid search by how far a
// candidate's cosine stands above the median candidate's, on the cosine's
// own scale, plus its keyword score relative to the best, with these
// weights (finite, ≥ 0, not both 0): the vector path counts where it is
// sure. The default over vectors that do not model meaning, with
// DefaultVectorWeight and DefaultKeywordWeight.
func WithMarginFusion(vectorWeight, keywordWeight float64) Option {
	return fusion(ranking.MarginFusion, vectorWeight, keywordWeight)
}

// WithWeightedFusion fuses the paths of a hybrid search as
// vectorWeight·cosine (below 0 counts as 0) + keywordWeight·(BM25 / the
// best BM25 of the query); weights finite, ≥ 0, not both 0.
func WithWeightedFusion(vectorWeight, keywordWeight float64) Option {
	return fusion(ranking.WeightedFusion, vectorWeight, keywordWeight)
}

func fusion(kind ranking.FusionKind, v, k float64) Option {
	return func(c *config) error {
		if err := setting.Weights(&c.vectorWeight, &c.keywordWeight, v, k); err != nil {
			return err
		}
		c.fusion, c.fusionSet = kind, true
		return nil
	}
}

// WithRRF fuses the paths of a hybrid search by reciprocal rank fusion,
// Σ 1/(k + rank); k ≤ 0 means DefaultRRFK.
func WithRRF(k int) Option {
	return func(c *config) error {
		c.fusion, c.fusionSet = ranking.RRF, true
		c.rrfK = DefaultRRFK
		if k > 0 {
			c.rrfK = float64(k)
		}
		return nil
	}
}

// WithBM25 sets the keyword path's BM25 parameters: k1 (term-frequency
// saturation, finite, ≥ 0; default 1.2) and b (length normalisation, in
// [0, 1]; default 0.75).
func WithBM25(k1, b float64) Option {
	return func(c *config) error {
		if err := ranking.NonNegative("BM25 k1", k1); err != nil {
			return err
		}
		if err := ranking.Unit("BM25 b", b); err != nil {
			return err
		}
		c.bm25.K1, c.bm25.B = k1, b
		return nil
	}
}

// WithQueryIDF sets whether the keyword path weights each word of a query
// by its idf too (keyword.WithQueryIDF), so that a matching word scores
// idf² times its BM25 term-frequency part. On by default: a question is
// often a user's message of several sentences, and plain BM25 then lets
// a record win by matching several of its ordinary words ("plan",
// "know", "week") where another holds its one rare word. On the
// development set (RealMem) it lifts keyword recall@10 from 0.299 to
// 0.318.
func WithQueryIDF(on bool) Option {
	return func(c *config) error { c.noQueryIDF = !on; return nil }
}

// WithQueryTF makes a word that a query repeats count more in the keyword
// path (keyword.WithQueryTF's k3, finite, ≥ 0; 0, the default, counts it
// once).
func WithQueryTF(k3 float64) Option {
	return func(c *config) error { return setting.NonNegative(&c.bm25.K3, "query tf k3", k3) }
}

// WithNeighbourWeight sets what the previous record's words are worth on
// the keyword path, relative to the record's own, in [0, 1] (default
// DefaultNeighbourWeight): an answer that shares no word with the question
// is found through the question it answers. A record without a speaker (a
// note) is never returned on its neighbours' words alone: its relevance
// leaves their loan out.
func WithNeighbourWeight(w float64) Option {
	return func(c *config) error { return setting.Unit(&c.neighbourWeight, "neighbour weight", w) }
}

// WithNextWeight sets what the next record's words are worth on the
// keyword path, relative to the record's own, in [0, 1] (default
// DefaultNextWeight).
func WithNextWeight(w float64) Option {
	return func(c *config) error { return setting.Unit(&c.nextWeight, "next weight", w) }
}

// WithAnswerHandOff makes the keyword path rank the answer to a question
// above the question: when a turn that asks (ending with "?", or starting
// with a question word) is among a namespace's best matches, the next
// turn, another speaker's, takes its score, and the question keeps 1 − d
// of it; d in [0, 1], 0 turns it off (default DefaultHandOff). A query
// that names speakers hands only to their turns. In a hybrid search the
// answer takes the question's cosine too when it is higher, the question
// keeping 1 − d of its own, unless the question holds four fifths or more
// of the query's terms (the query may be a lookup of it).
func WithAnswerHandOff(d float64) Option {
	return func(c *config) error { return setting.Unit(&c.handOff, "answer hand-off", d) }
}

// WithEpisodeWeight sets what a record's conversation (episode: records
// each at most 12 hours after the one before) lends it on the keyword
// path when the conversation is among the best matching the query as a
// whole document; finite, ≥ 0 (0 turns it off; default
// DefaultEpisodeWeight).
func WithEpisodeWeight(w float64) Option {
	return func(c *config) error { return setting.NonNegative(&c.episodeWeight, "episode weight", w) }
}

// WithSpeakerBoost makes a record spoken by a speaker the query names score
// 1 + boost times its keyword score; finite, ≥ 0 (default
// DefaultSpeakerBoost).
func WithSpeakerBoost(boost float64) Option {
	return func(c *config) error { return setting.NonNegative(&c.speakerBoost, "speaker boost", boost) }
}

// WithTimePrior makes the keyword path prefer, by 1 + boost times their
// score, the records said in a time the query names relative to its
// memory.Query.AsOf, or else the namespace's newest record ("yesterday",
// "last week"); finite, ≥ 0
// (default DefaultTimeBoost); 0 turns it off.
func WithTimePrior(boost float64) Option {
	return func(c *config) error { return setting.NonNegative(&c.timeBoost, "time boost", boost) }
}

// WithRecency makes the keyword path prefer recent records for a query
// that refers back to an earlier conversation without naming a time
// ("regarding the tool from last time", "we already agreed", "what's next
// for the plan?": ranking.RefersBack): a record said age before its
// namespace's newest (or the query's AsOf, when it gives one) scores
// (1 + boost·2^(−age/halfLife)) / (1 + boost) times its score: the newest
// keep theirs, the oldest keep 1/(1 + boost),
// and no score grows past what the query's words allow (the relevance
// calibration reads the best). Such a query asks for the latest state of
// what it names, and the latest conversations about it hold that state. A query that does not refer
// back is left alone: a fact may have been said at any time. boost finite,
// ≥ 0 (0 turns it off; default DefaultRecencyBoost), halfLife > 0 (0 means
// DefaultRecencyHalfLife).
func WithRecency(boost float64, halfLife time.Duration) Option {
	return func(c *config) error {
		if err := setting.NonNegative(&c.recencyBoost, "recency boost", boost); err != nil {
			return err
		}
		if halfLife < 0 {
			return fmt.Errorf("recency half-life %v is negative", halfLife)
		}
		c.recencyHalfLife = cmp.Or(halfLife, DefaultRecencyHalfLife)
		return nil
	}
}

// WithNewerFirst, on (the default), places in a search with a keyword path
// (hybrid, keyword) a later version of a statement before the earlier ones
// it restates, though they score more (ranking.NewerFirst): of "My manager
// is Tom." (January) and "My manager is Ingrid now." (May), "Who is my
// manager?" gets May's first, and the hit's explanation names January's
// (memory.Explanation.LaterThan). Memories added beside each other rather
// than superseded (memory.Facts.Supersede) are otherwise ordered by their
// words alone, which cannot tell the current from the stale. Off, hits come
// in score order.
func WithNewerFirst(on bool) Option {
	return func(c *config) error { c.noNewerFirst = !on; return nil }
}

// WithQueryExpansion makes the keyword path add to each query the words
// that related returns for each of its words (lower-cased), each at
// weight relative to the query's own words (≤ 0 means
// DefaultRelatedWeight): a remedy for questions that share no word with
// their answer ("flight" for "plane"). related must be safe for concurrent
// use and fast (it is called per query word; cache in it).
func WithQueryExpansion(related func(word string) []string, weight float64) Option {
	return func(c *config) error {
		if related == nil {
			return fmt.Errorf("nil related-words function")
		}
		if math.IsNaN(weight) || math.IsInf(weight, 0) {
			return fmt.Errorf("expansion weight %v is not finite", weight)
		}
		if weight <= 0 {
			weight = DefaultRelatedWeight
		}
		c.related, c.relatedWeight = related, weight
		return nil
	}
}

// WithFeedback adds pseudo-relevance feedback (RM3) to the keyword path:
// the best terms of the top docs records (not the query's own) are added
// to the query, the strongest at weight relative to the query's words;
// docs ≤ 0 turns it off, terms ≤ 0 means DefaultFeedbackTerms and
// weight ≤ 0 DefaultFeedbackWeight.
func WithFeedback(docs, terms int, weight float64) Option {
	return func(c *config) error {
		if math.IsNaN(weight) || math.IsInf(weight, 0) {
			return fmt.Errorf("feedback weight %v is not finite", weight)
		}
		if terms <= 0 {
			terms = DefaultFeedbackTerms
		}
		if weight <= 0 {
			weight = DefaultFeedbackWeight
		}
		c.feedbackDocs, c.feedbackTerms, c.feedbackWeight = max(docs, 0), terms, weight
		return nil
	}
}

// WithReranker reorders each search's best candidates with r before they
// are cut to the query's K: the best max(K, depth) by the fused score are
// handed to it (depth ≥ 0).
func WithReranker(r Reranker, depth int) Option {
	return func(c *config) error {
		if r == nil {
			return fmt.Errorf("nil reranker")
		}
		if depth < 0 {
			return fmt.Errorf("rerank depth %d is negative", depth)
		}
		c.reranker, c.rerankDepth = r, depth
		return nil
	}
}

// Options collects engine options for a store that takes them among its
// own options: Add checks them as they are given, so that the store's
// constructor fails on a bad one as New would.
type Options []Option

// Add checks opts (Check) and appends them.
func (o *Options) Add(opts ...Option) error {
	if err := Check(opts...); err != nil {
		return err
	}
	*o = append(*o, opts...)
	return nil
}

// Check returns the error New would return for opts (nil when they are
// all valid), without an embedder: a store that takes engine options
// among its own checks them when they are given.
func Check(opts ...Option) error {
	c := defaultConfig()
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&c); err != nil {
			return err
		}
	}
	return nil
}
