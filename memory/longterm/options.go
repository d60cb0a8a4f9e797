package longterm

import (
	"fmt"
	"log/slog"

	"github.com/agentmem/agentmem/chunk"
	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/inmem"
)

// Mode selects which retrieval paths a search runs.
type Mode int

const (
	// Hybrid runs the vector and the keyword path and fuses their rankings.
	// It is the zero value and the default.
	Hybrid Mode = iota
	// VectorOnly runs only the vector (embedding similarity) path.
	VectorOnly
	// KeywordOnly runs only the keyword (BM25 over an inverted index) path.
	KeywordOnly
)

// String returns "hybrid", "vector" or "keyword".
func (m Mode) String() string {
	switch m {
	case Hybrid:
		return "hybrid"
	case VectorOnly:
		return "vector"
	case KeywordOnly:
		return "keyword"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode parses "hybrid", "vector" or "keyword".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "hybrid":
		return Hybrid, nil
	case "vector":
		return VectorOnly, nil
	case "keyword":
		return KeywordOnly, nil
	}
	return 0, fmt.Errorf("%w: unknown mode %q (want hybrid, vector or keyword)", ErrInvalidQuery, s)
}

// Defaults.
const (
	// DefaultTopK is how many memories Search returns when Query.K is 0.
	DefaultTopK = 5
	// DefaultRRFK is the k of reciprocal rank fusion, 1/(k+rank): the value
	// of Cormack et al., which damps the difference between the first few
	// ranks of each path.
	DefaultRRFK = 60
	// DefaultNamespace is where records without a namespace (and every
	// segment given to Update) are stored.
	DefaultNamespace = "default"
	// DefaultSnapshotEvery is how many writes (adds and forgets) a store
	// on disk takes between automatic snapshots.
	DefaultSnapshotEvery = 20000
	// DefaultBackend names the default vector backend.
	DefaultBackend = "inmem"
	// DefaultVectorWeight and DefaultKeywordWeight are the weights of
	// score fusion (WithScoreFusion). The keyword path weighs more: with
	// the offline hash embedder the vector path is a second lexical signal,
	// weaker than BM25.
	DefaultVectorWeight  = 0.15
	DefaultKeywordWeight = 0.85
	// DefaultNeighbourWeight is what the previous record's words are
	// worth on the keyword path, relative to the record's own.
	DefaultNeighbourWeight = 0.3
	// DefaultSpeakerBoost: a record spoken by a speaker the query names
	// scores 1 + DefaultSpeakerBoost times its keyword score.
	DefaultSpeakerBoost = 0.5
)

type fusionKind int

const (
	fusionScore fusionKind = iota
	fusionRRF
	fusionWeighted
)

type options struct {
	topK          int
	minScore      float32
	mode          Mode
	fusion        fusionKind
	rrfK          float64
	vectorWeight  float64
	keywordWeight float64
	backendName   string
	openVDB       func(dim int) (vdb.VectorDatabase, error)
	chunkOpts     *chunk.Options
	logger        *slog.Logger
	sync          bool
	tokenizer     keyword.Tokenizer
	header        func(Record) string
	snapshotEvery int
	bm25          []keyword.IndexOption

	neighbourWeight float64
	speakerBoost    float64
	reranker        Reranker
	rerankDepth     int
	ret             retrievalOptions // retrieval_options.go
}

func defaultOptions() options {
	return options{
		topK:            DefaultTopK,
		rrfK:            DefaultRRFK,
		vectorWeight:    DefaultVectorWeight,
		keywordWeight:   DefaultKeywordWeight,
		neighbourWeight: DefaultNeighbourWeight,
		speakerBoost:    DefaultSpeakerBoost,
		ret:             retrievalOptions{nextWeight: DefaultNextWeight},
		backendName:     DefaultBackend,
		openVDB: func(dim int) (vdb.VectorDatabase, error) {
			return inmem.New(dim)
		},
		logger:        slog.Default(),
		sync:          true,
		snapshotEvery: DefaultSnapshotEvery,
	}
}

// An Option configures a Memory made by New or Open.
type Option func(*options)

// WithTopK sets how many memories Search returns when Query.K is 0 (and for
// the memory.Memory Search method). Values ≤ 0 are ignored.
func WithTopK(k int) Option {
	return func(o *options) {
		if k > 0 {
			o.topK = k
		}
	}
}

// WithMinScore sets the default minimum cosine similarity a child must have
// to count as a vector-path match (Query.MinScore overrides it when set).
// The keyword path has no threshold: a BM25 match is a match. The default is
// 0: every vector candidate takes part in the fusion, ranked.
func WithMinScore(s float32) Option { return func(o *options) { o.minScore = s } }

// WithMode sets the paths the memory.Memory Search method runs (Hybrid by
// default).
func WithMode(m Mode) Option { return func(o *options) { o.mode = m } }

// WithScoreFusion selects score fusion (the default, with
// DefaultVectorWeight and DefaultKeywordWeight): each path's scores are
// calibrated to [0, 1] over the query's candidates (BM25 / best BM25;
// (cosine − lowest) / (highest − lowest)) and a memory scores the weighted
// sum over the paths that found it. Unlike RRF it keeps how sure each path
// is: a record far ahead on one path is not pulled level with the
// other path's tenth. Negative weights are treated as 0.
func WithScoreFusion(vectorWeight, keywordWeight float64) Option {
	return func(o *options) {
		o.fusion = fusionScore
		o.vectorWeight = max(vectorWeight, 0)
		o.keywordWeight = max(keywordWeight, 0)
	}
}

// WithNeighbourWeight sets what the previous record's words (in the same
// namespace, in the order written) are worth on the keyword path, relative
// to the record's own (DefaultNeighbourWeight; 0 turns it off): an answer
// that shares no word with a question is found through the turn it
// answers. Negative values are treated as 0.
func WithNeighbourWeight(w float64) Option {
	return func(o *options) { o.neighbourWeight = max(w, 0) }
}

// WithSpeakerBoost sets how much more a record spoken by a speaker the
// query names is worth on the keyword path (DefaultSpeakerBoost): its
// score is multiplied by 1 + boost, and the name itself is not looked for
// in the text ("What did Deborah say about the trip?" finds what Deborah
// said, not the turns greeting her). Names shared by every speaker of the
// namespace are ignored. Negative values are treated as 0.
func WithSpeakerBoost(boost float64) Option {
	return func(o *options) { o.speakerBoost = max(boost, 0) }
}

// WithReranker sets a reranker: the best max(K, depth) candidates of every
// search, as hits, are handed to r before the cut to K.
func WithReranker(r Reranker, depth int) Option {
	return func(o *options) {
		o.reranker = r
		o.rerankDepth = max(depth, 0)
	}
}

// WithRRF selects reciprocal rank fusion with constant k (k ≤ 0:
// DefaultRRFK): a memory scores Σ 1/(k + rank) over the paths that found
// it, rank counted from 1. Values of k ≤ 0 mean DefaultRRFK.
func WithRRF(k int) Option {
	return func(o *options) {
		o.fusion = fusionRRF
		o.rrfK = DefaultRRFK
		if k > 0 {
			o.rrfK = float64(k)
		}
	}
}

// WithWeightedFusion selects weighted score fusion: a memory scores
// vectorWeight·cosine + keywordWeight·(BM25 / best BM25 of the query), using
// its best child on each path. Negative weights are treated as 0.
func WithWeightedFusion(vectorWeight, keywordWeight float64) Option {
	return func(o *options) {
		o.fusion = fusionWeighted
		o.vectorWeight = max(vectorWeight, 0)
		o.keywordWeight = max(keywordWeight, 0)
	}
}

// WithBackend sets the vector database: open is called with the embedder's
// dimension once per namespace; name is recorded in the store's manifest
// (a store opened with another backend name rebuilds its vector index from
// the log instead of loading the snapshot). The default is "inmem"
// (vdb/inmem).
func WithBackend(name string, open func(dim int) (vdb.VectorDatabase, error)) Option {
	return func(o *options) {
		if open != nil {
			o.backendName = name
			o.openVDB = open
		}
	}
}

// WithChunkOptions sets how parents are split into children (nil means
// chunk's defaults).
func WithChunkOptions(c *chunk.Options) Option {
	return func(o *options) {
		if c != nil {
			cp := *c
			o.chunkOpts = &cp
		}
	}
}

// WithLogger sets where warnings (a repaired torn log tail, a snapshot that
// could not be used) go. The default is slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

// WithoutSync makes Add and Forget return without fsyncing the log: faster
// bulk loads at the price of losing the last acknowledged records on a
// machine crash (a process crash loses nothing). Call Sync to make earlier
// writes durable.
func WithoutSync() Option { return func(o *options) { o.sync = false } }

// WithTokenizer sets the keyword path's tokenizer (default
// keyword.NewTokenizer(): Chinese as character bigrams and single characters). A store
// snapshot made with another tokenizer is not used: the keyword index is
// then rebuilt from the log, without re-embedding.
func WithTokenizer(tok keyword.Tokenizer) Option {
	return func(o *options) {
		if tok != nil {
			o.tokenizer = tok
		}
	}
}

// WithBM25 sets the keyword path's BM25 parameters (default k1 = 1.2,
// b = 0.75).
func WithBM25(k1, b float64) Option {
	return func(o *options) { o.bm25 = []keyword.IndexOption{keyword.WithK1(k1), keyword.WithB(b)} }
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
	return func(o *options) { o.header = header }
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
// Close write one). The write that reaches the count also writes the
// snapshot, which takes about a second per 100k memories; searches are not
// blocked meanwhile.
func WithSnapshotEvery(n int) Option { return func(o *options) { o.snapshotEvery = n } }
