package longterm

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/agentmem/agentmem/chunk"
	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/engine"
	"github.com/agentmem/agentmem/memory/internal/setting"
	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/inmem" // registers DefaultBackend
)

// Mode selects which retrieval paths a search runs: [memory.Mode].
type Mode = memory.Mode

// The modes, as in package memory.
const (
	// Hybrid runs the vector and the keyword path and fuses their rankings.
	// It is the zero value and the default.
	Hybrid = memory.Hybrid
	// VectorOnly runs only the vector (embedding similarity) path.
	VectorOnly = memory.VectorOnly
	// KeywordOnly runs only the keyword (BM25 over an inverted index) path.
	KeywordOnly = memory.KeywordOnly
)

// ParseMode parses "hybrid", "vector" or "keyword" ([memory.ParseMode]).
func ParseMode(s string) (Mode, error) { return memory.ParseMode(s) }

// Defaults.
const (
	// DefaultTopK is how many memories Search returns when Query.K is 0
	// (engine.DefaultTopK).
	DefaultTopK = engine.DefaultTopK
	// DefaultRRFK is the k of reciprocal rank fusion (engine.DefaultRRFK).
	DefaultRRFK = engine.DefaultRRFK
	// DefaultNamespace is where records without a namespace (and every
	// segment given to Update) are stored.
	DefaultNamespace = "default"
	// DefaultSnapshotEvery is how many writes (adds and forgets) a store
	// on disk takes at least between automatic snapshots (past 80,000
	// memories: a quarter of its records; see WithSnapshotEvery).
	DefaultSnapshotEvery = 20000
	// DefaultBackend is the default vector backend spec (vdb.Open). This
	// package registers it (it imports vdb/inmem), so the default works
	// without an import; every other backend is registered by importing
	// its package. A long-term memory opens "inmem" with int8 codes
	// beside the float32 rows ("inmem:int8"): searches return the same
	// results, bit for bit (vdb/inmem proves the rescoring exact), for
	// 0.26× more vector memory at d=384 and a scan of a quarter of the
	// bytes; "inmem:none" keeps only the float32 rows.
	DefaultBackend = "inmem"
	// The weights and boosts of the ranking, as package engine has them
	// (see its constants for what each means and how it was chosen).
	DefaultVectorWeight       = engine.DefaultVectorWeight
	DefaultKeywordWeight      = engine.DefaultKeywordWeight
	DefaultModelVectorWeight  = engine.DefaultModelVectorWeight
	DefaultModelKeywordWeight = engine.DefaultModelKeywordWeight
	DefaultNeighbourWeight    = engine.DefaultNeighbourWeight
	DefaultSpeakerBoost       = engine.DefaultSpeakerBoost
	// DefaultANNMin is the number of child vectors from which a
	// namespace's vector path, with the default backend, searches an
	// approximate index (WithANN) instead of scanning every vector:
	// 262,144 (a namespace of 100k memories of one to three sentences
	// holds about 200k). Below it every search is exact.
	DefaultANNMin = inmem.DefaultIVFMinRows
	// DefaultANNProbes is how many of the index's lists (of about
	// inmem.DefaultIVFListRows vectors each) a search scans.
	DefaultANNProbes = inmem.DefaultIVFProbes
	// KindLong is the kind a store made by this package records in its
	// manifest (memory/short records "short").
	KindLong = "long"
)

type options struct {
	// topK, minScore and mode are the engine's, recorded for Info and
	// Search.
	topK     int
	minScore float32
	mode     Mode
	// ranking are the engine's options (WithEngine and the ranking
	// options below), engine the engine they make (defaultFusion).
	ranking engine.Options
	engine  *engine.Engine

	backend       string // vdb.Open spec
	kind          string
	wholeRecord   bool
	chunkOpts     *chunk.Options
	logger        *slog.Logger
	sync          bool
	tokenizer     keyword.Tokenizer
	header        func(Record) string
	snapshotEvery int
	// annMin and annProbes configure the default backend's approximate
	// candidate stage (WithANN); annMin 0: always exact.
	annMin, annProbes int

	store storeOptions // durability.go
}

func defaultOptions() options {
	return options{
		topK:          DefaultTopK,
		backend:       DefaultBackend,
		kind:          KindLong,
		logger:        slog.Default(),
		sync:          true,
		snapshotEvery: DefaultSnapshotEvery,
		annMin:        DefaultANNMin,
		annProbes:     DefaultANNProbes,
		store:         defaultStoreOptions(),
	}
}

// An Option configures a Memory made by New or Open. An option with a value
// out of range makes New and Open fail with an error wrapping
// [ErrInvalidOption].
type Option func(*options) error

func (o *options) apply(opts []Option) error {
	return setting.Apply(o, opts, "longterm", ErrInvalidOption)
}

// WithTopK sets how many memories Search returns when Query.K is 0 (and for
// the memory.Memory Search method). k must be positive.
func WithTopK(k int) Option {
	return func(o *options) error {
		if err := setting.TopK(&o.topK, k); err != nil {
			return err
		}
		return o.ranking.Add(engine.WithTopK(k))
	}
}

// WithMinScore sets the default minimum cosine similarity a child must have
// to count as a vector-path match (Query.MinScore overrides it when set).
// The keyword path has no threshold: a BM25 match is a match. The default is
// 0: every vector candidate takes part in the fusion, ranked. s must be in
// [-1, 1].
func WithMinScore(s float32) Option {
	return func(o *options) error {
		if err := setting.MinScore(&o.minScore, s); err != nil {
			return err
		}
		return o.ranking.Add(engine.WithMinScore(s))
	}
}

// WithMode sets the paths the memory.Memory Search method runs (Hybrid by
// default).
func WithMode(m Mode) Option {
	return func(o *options) error {
		if err := setting.Mode(&o.mode, m); err != nil {
			return err
		}
		return o.ranking.Add(engine.WithMode(m))
	}
}

// WithScoreFusion selects score fusion (the default over a model
// embedder, with the weights DefaultWeights gives): each path's scores are
// calibrated to [0, 1] over the query's candidates (BM25 / best BM25;
// (cosine − lowest) / (highest − lowest)) and a memory scores the weighted
// sum over the paths that found it. Unlike RRF it keeps how sure each path
// is: a record far ahead on one path is not pulled level with the
// other path's tenth. A weight must be finite and ≥ 0, and not both 0.
func WithScoreFusion(vectorWeight, keywordWeight float64) Option {
	return withRanking(engine.WithScoreFusion(vectorWeight, keywordWeight))
}

// WithNeighbourWeight sets what the previous record's words (in the same
// namespace, in the order written) are worth on the keyword path, relative
// to the record's own (DefaultNeighbourWeight; 0 turns it off): an answer
// that shares no word with a question is found through the turn it
// answers. What the neighbours lend a record counts in proportion to what
// its own words leave unexplained (1 − its own score / the best own
// score), so that a record matching the query best is not overtaken by
// its neighbour. A record without a Speaker (a note) is never returned on
// its neighbours' words alone: its relevance leaves their loan out.
// w must be in [0, 1].
func WithNeighbourWeight(w float64) Option {
	return withRanking(engine.WithNeighbourWeight(w))
}

// WithSpeakerBoost sets how much more a record spoken by a speaker the
// query names is worth on the keyword path (DefaultSpeakerBoost): its
// score is multiplied by 1 + boost, and the name itself is not looked for
// in the text ("What did Deborah say about the trip?" finds what Deborah
// said, not the turns greeting her). Names shared by every speaker of the
// namespace are ignored. A query that names nobody but speaks in the first
// person, not to anyone ("what is my dog's name?"), names the asker: the
// speakers called "user" or "human", the chat roles, in a log that has
// other speakers too. boost must be finite and ≥ 0 (0 turns it off).
func WithSpeakerBoost(boost float64) Option {
	return withRanking(engine.WithSpeakerBoost(boost))
}

// WithReranker sets a reranker: the best max(K, depth) candidates of every
// search, as hits, are handed to r before the cut to K. depth must be ≥ 0.
func WithReranker(r Reranker, depth int) Option {
	return withRanking(engine.WithReranker(r, depth))
}

// WithRRF selects reciprocal rank fusion with constant k (k ≤ 0:
// DefaultRRFK): a memory scores Σ 1/(k + rank) over the paths that found
// it, rank counted from 1. Values of k ≤ 0 mean DefaultRRFK.
func WithRRF(k int) Option {
	return withRanking(engine.WithRRF(k))
}

// WithMarginFusion selects margin fusion (the default over an embedder
// whose vectors do not model meaning, with the weights DefaultWeights
// gives): the vector path counts by how far a memory's cosine stands above
// the median cosine of the query's vector candidates, on the cosine's own
// scale, (cosine − median) / (1 − median), below 0 counting as 0; the
// keyword path counts relative to its best (BM25 / best BM25); a memory
// scores the weighted sum. Unlike WithScoreFusion's min–max it keeps how
// sure the vector path is: a text that shares nearly every word of the
// query, far above the rest, counts almost fully, and the best of a crowd
// of equal cosines little. A weight must be finite and ≥ 0, and not both
// 0.
func WithMarginFusion(vectorWeight, keywordWeight float64) Option {
	return withRanking(engine.WithMarginFusion(vectorWeight, keywordWeight))
}

// WithWeightedFusion selects weighted score fusion: a memory scores
// vectorWeight·cosine + keywordWeight·(BM25 / best BM25 of the query), using
// its best child on each path. A weight must be finite and ≥ 0, and not both 0.
func WithWeightedFusion(vectorWeight, keywordWeight float64) Option {
	return withRanking(engine.WithWeightedFusion(vectorWeight, keywordWeight))
}

// WithBackend sets the vector backend by its spec, "name[:arg]" as
// vdb.Open takes it ("inmem", "faiss:HNSW32,Flat"): each namespace's vector
// index is opened with vdb.Open(ctx, spec, vdb.Config{Dim, Namespace}), so
// the backend must be registered (imported for its side effect). The spec
// is recorded in the store's manifest; a store opened with another spec
// rebuilds its vector indexes from the log (without re-embedding) and
// records the new one. The default is "inmem" (vdb/inmem).
func WithBackend(spec string) Option {
	return func(o *options) error {
		if name, _ := vdb.ParseSpec(spec); name == "" {
			return fmt.Errorf("backend spec %q has no backend name", spec)
		}
		o.backend = strings.TrimSpace(spec)
		return nil
	}
}

// WithKind sets the memory kind a new store records in its manifest
// ("long" by default; memory/short uses "short"), so that tools reopen it
// as what it is. Opening a store of another kind is an error wrapping
// [ErrInvalidOption] that names both.
func WithKind(kind string) Option {
	return func(o *options) error {
		if kind == "" {
			return fmt.Errorf("empty memory kind")
		}
		o.kind = kind
		return nil
	}
}

// WithWholeRecords indexes each record as one child (its whole text)
// instead of splitting it into sentence-sized chunks: seed 000's semantic
// memory, where one segment is one memory. A store must be reopened with
// the same setting to index new records the same way.
func WithWholeRecords() Option {
	return func(o *options) error {
		o.wholeRecord = true
		return nil
	}
}

// WithChunkOptions sets how parents are split into children (nil means
// chunk's defaults).
func WithChunkOptions(c *chunk.Options) Option {
	return func(o *options) error { return setting.Chunking(&o.chunkOpts, c) }
}

// WithLogger sets where warnings (a repaired torn log tail, a snapshot that
// could not be used) go. The default is slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error { return setting.Logger(&o.logger, l) }
}

// WithoutSync makes Add and Forget return without fsyncing the log: faster
// bulk loads at the price of losing the last acknowledged records on a
// machine crash (a process crash loses nothing). Call Sync to make earlier
// writes durable.
func WithoutSync() Option {
	return func(o *options) error {
		o.sync = false
		return nil
	}
}

// WithTokenizer sets the keyword path's tokenizer (default
// keyword.NewTokenizer(): Chinese as character bigrams and single characters). A store
// snapshot made with another tokenizer is not used: the keyword index is
// then rebuilt from the log, without re-embedding.
func WithTokenizer(tok keyword.Tokenizer) Option {
	return func(o *options) error {
		if tok != nil {
			o.tokenizer = tok
		}
		return nil
	}
}

// WithBM25 sets the keyword path's BM25 parameters (default k1 = 1.2,
// b = 0.75).
func WithBM25(k1, b float64) Option {
	return withRanking(engine.WithBM25(k1, b))
}

// WithIndexHeader sets a header indexed with every child of a record, on
// both paths: the child "I went to the support group yesterday." of a
// record by Caroline can be indexed as "Caroline: I went to …" so that
// questions naming the speaker (or a date, or a title) find it. The header
// is not part of the stored text or of the snippets. It must be a pure
// function of the record, and a store must be reopened with the same one:
// vectors are stored, but the keyword index is rebuilt from the log when
// its snapshot cannot be used.
func WithIndexHeader(header func(Record) string) Option {
	return func(o *options) error {
		o.header = header
		return nil
	}
}

// SpeakerHeader is a header for WithIndexHeader: "Speaker: " (nothing for
// a record without a speaker).
func SpeakerHeader(r Record) string {
	if r.Speaker == "" {
		return ""
	}
	return r.Speaker + ": "
}

// WithSnapshotEvery sets how many writes a store on disk takes between
// automatic snapshots (DefaultSnapshotEvery; 0 or less: only Snapshot and
// Close write one). Past 4n memories the interval grows with the store: a
// snapshot is due when the writes since the last one are both n and a
// quarter of the store's records, so that loading a large store does not
// rewrite it over and over (the snapshots' total size stays within about
// 4× the store's). The write that reaches the count also writes the
// snapshot, which takes about a second per 100k memories; searches are not
// blocked meanwhile. An automatic snapshot keeps the keyword indexes that
// searches have built, and builds no others (Snapshot and Close build and
// keep them all).
func WithSnapshotEvery(n int) Option {
	return func(o *options) error {
		o.snapshotEvery = n
		return nil
	}
}

// WithANN sets the size from which a namespace's vector path, with the
// default backend, finds its candidates in an approximate index rather
// than by scanning every vector (DefaultANNMin child vectors; 0: never,
// every search exact), and how many of the index's lists a search scans
// (DefaultANNProbes; 0: the default). The index (inmem.IVF: k-means
// lists over the int8 codes) is trained when a namespace reaches the size
// and again whenever it has doubled, and rebuilt when a store is opened;
// it is not persisted. Its candidates are rescored exactly, so the
// scores of the results are exact; what it may miss are vectors in lists
// it did not scan (README: recall@10 of hybrid results at 1M memories).
// Other backends (WithBackend) are unaffected.
func WithANN(minVectors, probes int) Option {
	return func(o *options) error {
		if minVectors < 0 || probes < 0 {
			return fmt.Errorf("ANN size %d and probes %d must not be negative", minVectors, probes)
		}
		o.annMin, o.annProbes = minVectors, probes
		if probes == 0 {
			o.annProbes = DefaultANNProbes
		}
		return nil
	}
}

// DefaultWeights returns the fusion weights of a memory over emb that no
// option sets: DefaultModelVectorWeight and DefaultModelKeywordWeight for
// a model embedder (embed.KindOf is embed.Model), whose default fusion is
// score fusion (WithScoreFusion); DefaultVectorWeight and
// DefaultKeywordWeight for vectors that do not model meaning, whose
// default is margin fusion (WithMarginFusion).
func DefaultWeights(emb embed.Embedder) (vector, keyword float64) {
	return engine.DefaultWeights(emb)
}

// defaultFusion sets the fusion no option chose to ranking.DefaultKind's
// for emb, and the weights no option set (both 0, which no option
// accepts) to DefaultWeights(emb).
func (o *options) defaultFusion(emb embed.Embedder) {
	tok, err := o.keywordTokenizer()
	if err == nil {
		o.tokenizer = tok
		o.engine, err = engine.New(emb, tok, o.ranking...)
	}
	if err != nil {
		// The options were checked as they were applied (rank), and
		// New checks the embedder first: nothing is left to fail.
		panic(fmt.Sprintf("longterm: engine: %v", err))
	}
}

// WithEngine configures how the memory ranks (package engine's options,
// the same for every store): engine.WithEpisodeWeight(0),
// engine.WithRRF(0), … The ranking options of this package are the same
// options under their former names.
func WithEngine(opts ...engine.Option) Option {
	return withRanking(opts...)
}

// withRanking is an Option that adds engine options (checked as given).
func withRanking(opts ...engine.Option) Option {
	return func(o *options) error { return o.ranking.Add(opts...) }
}

// Reranker reorders the candidates of a search before they are cut to the
// query's K ([engine.Reranker]).
type Reranker = engine.Reranker
