// Package short is seed 000's ShortMemory: a semantic memory where one
// segment (a round of conversation) is one memory, found again by vector
// search — by default the 5 most similar segments with a cosine similarity
// of at least 0.3.
//
// It is memory/longterm's engine configured for that: each segment is one
// record indexed whole (no chunking), searched on the vector path only,
// scored by cosine similarity. So a short-term store has the long-term
// store's format — one manifest (recording the kind "short"), one lock, one
// CRC-framed log of records carrying their vectors, snapshots — and opening
// it never re-embeds. A store written by the previous release
// (segments.jsonl) is converted by store.Migrate (`agentmem migrate`).
//
// Vectors go through the chain embedder → vdb (opened by spec through the
// registry, per namespace) → semantic.Vectors → memory.
package short

import (
	"context"
	"fmt"
	"math"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/engine"
	"github.com/agentmem/agentmem/memory/longterm"
)

// Defaults of [Memory], from seed 000 (SemanticSet.search: number 5,
// minDistance 0.3).
const (
	DefaultTopK     = 5
	DefaultMinScore = 0.3
	// DefaultBackend is the vector backend spec used unless [WithBackend]
	// says otherwise: vdb/inmem, exact and pure Go (it must be registered:
	// import _ "github.com/agentmem/agentmem/vdb/inmem").
	DefaultBackend = longterm.DefaultBackend
	// Kind is the memory kind a short-term store records in its manifest.
	Kind = "short"
)

// An Option configures [New] and [Open]: short-term memory takes the
// options of the engine it runs on, memory/longterm. An option with a value
// out of range makes them fail with an error wrapping
// memory.ErrInvalidArgument.
type Option = longterm.Option

// The options that matter for a short-term memory.
var (
	// WithTopK sets how many segments Search returns at most (default 5).
	// n must be positive.
	WithTopK = longterm.WithTopK
	// WithMinScore sets the lowest cosine similarity a segment needs to be
	// returned by Search (default 0.3). It must be in [-1, 1]; 0 is allowed
	// and keeps every segment that is not dissimilar.
	WithMinScore = longterm.WithMinScore
	// WithBackend sets the vector backend by its vdb.Open spec, e.g.
	// "inmem" (the default) or "faiss:HNSW32,Flat". A store reopened with
	// another spec rebuilds its vector index from the log, without
	// re-embedding.
	WithBackend = longterm.WithBackend
	// WithLogger sets the logger for warnings (a repaired log, a snapshot
	// that could not be used). The default is slog.Default().
	WithLogger = longterm.WithLogger
)

// Options returns the longterm options that make a long-term memory a
// short-term one: one whole record per segment, vector search only, scored
// by cosine similarity, top 5 with a score of at least 0.3. Options given
// after them override the top k, minimum score and backend.
func Options() []longterm.Option {
	return []longterm.Option{
		longterm.WithKind(Kind),
		longterm.WithWholeRecords(),
		longterm.WithMode(longterm.VectorOnly),
		longterm.WithWeightedFusion(1, 0),
		longterm.WithTopK(DefaultTopK),
		longterm.WithMinScore(DefaultMinScore),
		// The seed's contract is the cosine's minimum, not a relevance.
		longterm.WithEngine(engine.WithMinRelevance(0)),
	}
}

// Memory is a semantic [memory.Memory]: seed 000's ShortMemory. Search
// returns the most similar segments (by default at most 5 with a cosine
// similarity of at least 0.3). It also implements memory.Records, so that
// a server can add, get and forget segments by id.
//
// Made by [New] it lives in memory only; by [Open] it keeps a directory:
// every Update is durable when it returns (an fsynced log); Flush
// snapshots the index so that reopening loads it instead of replaying the
// log, and so does Close once an eighth of the store changed since the
// last snapshot (a smaller tail is replayed from the log, which carries
// the vectors).
//
// A Memory is safe for concurrent use by multiple goroutines.
type Memory struct {
	*longterm.Memory
}

var (
	_ memory.Memory  = (*Memory)(nil)
	_ memory.Records = (*Memory)(nil)
)

// New returns a Memory over emb that lives in memory only. It learns the
// embedder's dimension, embedding a probe text if the embedder does not
// know it yet.
func New(ctx context.Context, emb embed.Embedder, opts ...Option) (*Memory, error) {
	lt, err := longterm.New(ctx, emb, append(Options(), opts...)...)
	if err != nil {
		return nil, err
	}
	return &Memory{Memory: lt}, nil
}

// Open opens the short-term store in directory dir, creating it if needed.
// It is longterm.Open with the short-term configuration: a store built with
// another embedder (name or dimension) is an error wrapping
// memory.ErrEmbedderMismatch that names both; a long-term store, one
// wrapping memory.ErrInvalidArgument; a short-term store of the previous
// release, one wrapping memory.ErrVersion that names `agentmem migrate`;
// a store open elsewhere, memory.ErrLocked.
func Open(ctx context.Context, dir string, emb embed.Embedder, opts ...Option) (*Memory, error) {
	lt, err := longterm.Open(ctx, dir, emb, append(Options(), opts...)...)
	if err != nil {
		return nil, err
	}
	return &Memory{Memory: lt}, nil
}

// UpdateBatch remembers segments and returns their ids. It embeds them in
// batches and, with a store, makes them durable with one fsync, so it is
// much faster than one Update per segment. It is all or nothing.
func (m *Memory) UpdateBatch(ctx context.Context, segments []string) ([]string, error) {
	recs := make([]memory.Record, len(segments))
	for i, s := range segments {
		recs[i] = memory.Record{Text: s}
	}
	return m.AddBatch(ctx, recs)
}

// Search returns the remembered segments most similar to question, best
// first: at most the configured top k (default 5), each with a cosine
// similarity of at least the configured minimum (default 0.3). No match is
// an empty slice.
func (m *Memory) Search(ctx context.Context, question string) ([]memory.Hit, error) {
	info := m.Info()
	return m.SearchN(ctx, question, info.TopK, info.MinScore)
}

// SearchN is Search with an explicit result count and minimum score. k ≤ 0
// is an error wrapping memory.ErrInvalidArgument.
func (m *Memory) SearchN(ctx context.Context, question string, k int, minScore float32) ([]memory.Hit, error) {
	if k <= 0 {
		return nil, fmt.Errorf("short: %w: k = %d", memory.ErrInvalidArgument, k)
	}
	if minScore == 0 {
		// A zero Query.MinScore means the memory's default: ask for the
		// nearest value below zero instead, which keeps score 0.
		minScore = math.Nextafter32(0, -1)
	}
	hits, err := m.Query(ctx, memory.Query{Text: question, Mode: memory.VectorOnly, K: k, MinScore: minScore})
	if err != nil {
		return nil, err
	}
	for i := range hits {
		hits[i].Snippets = nil // the whole segment is the match
	}
	return hits, nil
}

// Segments returns every remembered segment, oldest first, with a zero
// Score.
func (m *Memory) Segments(ctx context.Context) ([]memory.Hit, error) {
	recs, _, err := m.List(ctx, memory.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]memory.Hit, len(recs))
	for i, r := range recs {
		out[i] = memory.Hit{ID: r.ID, Text: r.Text, Time: r.Time, Namespace: r.Namespace}
	}
	return out, nil
}

// Flush snapshots the store's indexes so that reopening it loads them
// instead of replaying the log. Segments are durable without it. Without a
// store it does nothing.
func (m *Memory) Flush(ctx context.Context) error {
	err := m.Snapshot(ctx)
	if err == longterm.ErrNotDurable {
		return nil
	}
	return err
}
