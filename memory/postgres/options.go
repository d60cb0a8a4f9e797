package postgres

import (
	"log/slog"
	"math"

	"github.com/agentmem/agentmem/chunk"
	"github.com/agentmem/agentmem/internal/errs"
	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/engine"
	"github.com/agentmem/agentmem/memory/internal/setting"
)

// Defaults, the engine's (package engine), as every store has them, so
// that a store moved from a directory to PostgreSQL ranks the same.
const (
	DefaultTopK               = engine.DefaultTopK
	DefaultNamespace          = "default"
	DefaultVectorWeight       = engine.DefaultVectorWeight
	DefaultKeywordWeight      = engine.DefaultKeywordWeight
	DefaultModelVectorWeight  = engine.DefaultModelVectorWeight
	DefaultModelKeywordWeight = engine.DefaultModelKeywordWeight
	DefaultNeighbourWeight    = engine.DefaultNeighbourWeight
	DefaultNextWeight         = engine.DefaultNextWeight
	DefaultEpisodeWeight      = engine.DefaultEpisodeWeight
	DefaultSpeakerBoost       = engine.DefaultSpeakerBoost
	// DefaultEfSearch is the HNSW search list size of the vector path
	// (raised to twice the query's depth when that is larger).
	DefaultEfSearch = 100
)

type options struct {
	create bool
	mode   memory.Mode // the engine's, for Search
	// ranking are the engine's options (WithEngine and the ranking
	// options below), engine the engine they make (Open).
	ranking        engine.Options
	engine         *engine.Engine
	header         func(memory.Record) string
	chunkOpts      *chunk.Options
	exact          bool
	efSearch       int
	logger         *slog.Logger
	maintenanceMem int // MB
	bulkRecords    int
	foldAfter      int // chunks
	vectorCache    int // chunks
	bigNamespace   int // records: exactRecords (a test sets another: export_test.go)
	indexAfter     int // records
	noBackground   bool
	// tokenizer replaces keyword.NewTokenizer() (tests: a store whose
	// terms another tokenizer cut, export_test.go).
	tokenizer keyword.Tokenizer
}

func defaultOptions() options {
	return options{
		efSearch:       DefaultEfSearch,
		logger:         slog.Default(),
		maintenanceMem: DefaultMaintenanceWorkMem,
		bulkRecords:    DefaultBulkRecords,
		foldAfter:      DefaultFoldAfter,
		vectorCache:    DefaultVectorCache,
		bigNamespace:   exactRecords,
		indexAfter:     defaultIndexAfter,
	}
}

// An Option configures Open. An option with a value out of range makes
// Open fail with an error wrapping memory.ErrInvalidArgument.
type Option func(*options) error

func (o *options) apply(opts []Option) error {
	return setting.Apply(o, opts, "postgres", errs.InvalidArgument)
}

// WithCreate creates the store (schema, tables, manifest) when the schema
// holds none; without it a missing store is an error wrapping
// fs.ErrNotExist.
func WithCreate() Option {
	return func(o *options) error { o.create = true; return nil }
}

// WithTopK sets how many memories Search (and a Query with K = 0)
// returns; k must be positive. As longterm.WithTopK.
func WithTopK(k int) Option {
	return withRanking(engine.WithTopK(k))
}

// WithMinScore sets the default minimum cosine of a vector-path match, in
// [-1, 1]. As longterm.WithMinScore.
func WithMinScore(s float32) Option {
	return withRanking(engine.WithMinScore(s))
}

// WithMode sets the paths Search runs (Hybrid by default).
func WithMode(m memory.Mode) Option {
	return func(o *options) error {
		if err := setting.Mode(&o.mode, m); err != nil {
			return err
		}
		return o.ranking.Add(engine.WithMode(m))
	}
}

// WithScoreFusion selects score fusion with these weights, as
// longterm.WithScoreFusion: finite, ≥ 0, not both 0.
func WithScoreFusion(vectorWeight, keywordWeight float64) Option {
	return withRanking(engine.WithScoreFusion(vectorWeight, keywordWeight))
}

// WithMarginFusion selects margin fusion with these weights, as
// longterm.WithMarginFusion: finite, ≥ 0, not both 0.
func WithMarginFusion(vectorWeight, keywordWeight float64) Option {
	return withRanking(engine.WithMarginFusion(vectorWeight, keywordWeight))
}

// WithNeighbourWeight sets what the previous record's words are worth on
// the keyword path, in [0, 1]. As longterm.WithNeighbourWeight.
func WithNeighbourWeight(w float64) Option {
	return withRanking(engine.WithNeighbourWeight(w))
}

// WithNextWeight sets what the next record's words are worth on the
// keyword path, in [0, 1] (0 turns the field off). As
// longterm.WithNextWeight.
func WithNextWeight(w float64) Option {
	return withRanking(engine.WithNextWeight(w))
}

// WithEpisodeWeight sets how much a record's conversation (episode: a run
// of records of one namespace each at most 12 hours after the one before)
// speaks for it on the keyword path, ≥ 0 (0 turns it off). As
// longterm.WithEpisodeWeight.
func WithEpisodeWeight(w float64) Option {
	return withRanking(engine.WithEpisodeWeight(w))
}

// WithSpeakerBoost sets the keyword-path boost of a record spoken by a
// speaker the query names. As longterm.WithSpeakerBoost.
func WithSpeakerBoost(boost float64) Option {
	return withRanking(engine.WithSpeakerBoost(boost))
}

// WithQueryIDF sets whether the keyword path weights each word of a
// query by its idf too (a word scores idf² times its BM25 term-frequency
// part). On by default. As longterm.WithQueryIDF.
func WithQueryIDF(on bool) Option {
	return withRanking(engine.WithQueryIDF(on))
}

// WithIndexHeader sets a header indexed with every record on both paths
// (not stored in its text). As longterm.WithIndexHeader; every process
// writing the store must use the same one.
func WithIndexHeader(header func(memory.Record) string) Option {
	return func(o *options) error { o.header = header; return nil }
}

// WithChunkOptions sets how records are split into chunks (nil: chunk's
// defaults).
func WithChunkOptions(c *chunk.Options) Option {
	return func(o *options) error { return setting.Chunking(&o.chunkOpts, c) }
}

// WithExact makes the vector path an exact scan (no HNSW index is
// created, an existing one is not used, writes are not pending and there
// is no background fold): for small stores, for
// measuring the index's recall, or to bulk-load before the index is built
// (open without it afterwards to build it). The URL parameter exact=1 sets
// it too.
func WithExact() Option {
	return func(o *options) error { o.exact = true; return nil }
}

// WithEfSearch sets HNSW's search list size (1–1000, DefaultEfSearch); a
// query of more than half ef chunks searches with twice its depth.
func WithEfSearch(ef int) Option {
	return func(o *options) error { return setting.IntIn(&o.efSearch, "ef_search", ef, 1, 1000) }
}

// WithLogger sets where warnings go (slog.Default() by default).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error { return setting.Logger(&o.logger, l) }
}

// WithEngine configures how the memory ranks (package engine's options,
// the same for every store: engine.WithRRF(0), engine.WithReranker(r,
// 20), engine.WithFeedback(10, 10, 0), …). The ranking options of this
// package are the same options under their former names.
func WithEngine(opts ...engine.Option) Option {
	return withRanking(opts...)
}

// withRanking is an Option that adds engine options (checked as given).
func withRanking(opts ...engine.Option) Option {
	return func(o *options) error { return o.ranking.Add(opts...) }
}

// DefaultMaintenanceWorkMem is the maintenance_work_mem (in MB) of the
// sessions that build the HNSW index (WithMaintenanceWorkMem).
const DefaultMaintenanceWorkMem = 1024

// WithMaintenanceWorkMem sets PostgreSQL's maintenance_work_mem, in MB
// (1–2,097,151; DefaultMaintenanceWorkMem), for the transactions that
// build the HNSW index: Open over chunks loaded without it, and a bulk
// AddBatch (WithBulkLoad). A build whose graph does not fit is several
// times slower (PostgreSQL's default, 64 MB, holds the graph of about
// 25,000 chunks of 512 dimensions); the memory is taken only while the
// index is built. Lower it on a server with little memory.
func WithMaintenanceWorkMem(mb int) Option {
	return func(o *options) error {
		return setting.IntIn(&o.maintenanceMem, "maintenance_work_mem (MB)", mb, 1, 2097151)
	}
}

// DefaultBulkRecords is the smallest batch that WithBulkLoad rebuilds the
// index for.
const DefaultBulkRecords = 1000

// WithBulkLoad sets the smallest AddBatch (in records, ≥ 0; 0 turns it
// off; DefaultBulkRecords) that rebuilds the HNSW index instead of
// inserting its vectors into it one at a time, when the batch is also at
// least as large as the store: the batch's transaction drops the index,
// copies the rows and builds it again over the whole table (with
// WithMaintenanceWorkMem), several times faster than inserting. Queries and
// other writes wait for that transaction (it locks the chunks table).
func WithBulkLoad(records int) Option {
	return func(o *options) error {
		return setting.IntIn(&o.bulkRecords, "bulk load size", records, 0, math.MaxInt32)
	}
}

// DefaultFoldAfter is how many pending chunks the store's chunks table
// holds before the background fold moves them into the HNSW index
// (WithFoldAfter).
const DefaultFoldAfter = 2000

// WithFoldAfter sets how many pending chunks (≥ 0; 0 turns the background
// fold off; DefaultFoldAfter) the store holds before the memory folds them
// into the HNSW index in the background. A write that keeps the index (not
// exact=1, not a bulk load, WithBulkLoad) stores its chunks pending,
// outside the index, and so does not pay for inserting them into the
// graph; queries that search the index also scan the pending chunks
// exactly, whose cost grows with their number until a fold. One process
// folds a store at a time (the others skip); Fold folds at once.
func WithFoldAfter(chunks int) Option {
	return func(o *options) error {
		return setting.IntIn(&o.foldAfter, "fold threshold (chunks)", chunks, 0, math.MaxInt32)
	}
}

// DefaultIndexAfter is how many records a store holds before it has an
// HNSW index (WithIndexAfter): the largest namespace a process keeps its
// own copy of (WithVectorCache).
const DefaultIndexAfter = 150_000

// defaultIndexAfter is WithIndexAfter's default: DefaultIndexAfter (the
// package's tests of the HNSW path set it to 0).
var defaultIndexAfter = DefaultIndexAfter

// WithIndexAfter sets how many records (≥ 0; 0: from the first;
// DefaultIndexAfter) the store holds, over all namespaces, before it gets
// its HNSW index; it gets it sooner once its namespaces of more than
// 5,000 records hold more chunks than WithVectorCache lets a process keep
// (400,000 by default: some 130,000 records of three chunks, 40,000 of
// ten). The index serves the searches that reach the server: of all
// namespaces, and of a namespace of more than 5,000 records whose copy
// the process does not hold (not read yet after an open, or past the
// copies' bound); a smaller namespace is scanned exactly whatever the
// store's size. Without the index those searches scan the chunks
// exactly (about 0.5 µs a chunk on two cores: 0.16 s for a namespace of
// 100,000 records of three chunks), a namespace being searched in the
// process once its copy is read, and building the index is most of what
// a load costs (measured at 100,000 records of three chunks: 190 s of a
// 206 s load on two cores; 25 minutes for 1.16 million chunks). The
// index is built, once, by the Open, Load or large AddBatch
// (WithBulkLoad) that finds the store at the size, or in the background
// (the fold's goroutine, WithFoldAfter; CREATE INDEX CONCURRENTLY, so
// writes go on) after small writes reach it; it is kept when the store
// shrinks. Set it lower where searches of all namespaces, or the first
// searches after an open, must be fast.
func WithIndexAfter(records int) Option {
	return func(o *options) error {
		return setting.IntIn(&o.indexAfter, "HNSW index size (records)", records, 0, math.MaxInt32)
	}
}

// DefaultVectorCache is how many chunks' vectors a memory keeps in process
// unless told (WithVectorCache): about 1.1 GB at 512 dimensions (200 MB
// more for a lexical embedder's, kept by columns too), a namespace of
// some 130,000 records of three chunks, as a store directory of that
// size keeps them.
const DefaultVectorCache = 400_000

// WithVectorCache sets how many chunks' vectors (≥ 0; 0: none;
// DefaultVectorCache) the memory keeps in process, over all namespaces,
// for searching a namespace of up to 150,000 records here rather than
// through the server's HNSW index: exact, and faster at such sizes. A
// namespace's copy is read in the background after a search finds it
// missing or out of date (a write since); until then searches ask the
// server, and a write costs nothing more. A search of several namespaces
// (all of them: no namespace named) is answered from their copies when
// they hold at most 150,000 records together and their chunks fit: it
// has them read, one after another.
func WithVectorCache(chunks int) Option {
	return func(o *options) error {
		return setting.IntIn(&o.vectorCache, "vector cache (chunks)", chunks, 0, math.MaxInt32)
	}
}

// WithoutBackgroundReads makes the memory read nothing in the background:
// no copy of a namespace's vectors (WithVectorCache), postings or links,
// so that every search asks the server for what it needs. For a process
// that makes a search or two and exits (the CLI's search, get, list and
// stats), those reads, meant for the searches that follow, only compete
// with its own for the server (a search of 80 namespaces of 112,000
// records started 2 s of copy reads beside itself). A memory that serves
// many searches keeps the default.
func WithoutBackgroundReads() Option {
	return func(o *options) error {
		o.noBackground = true
		return nil
	}
}
