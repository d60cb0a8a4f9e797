// Package longterm is the memory an agent keeps for months: every record (a
// round of conversation, a note, a passage) is a parent, split into
// sentence-sized children (package chunk) that are embedded into a vector
// database and indexed by keyword (package keyword, BM25). A search runs
// both paths over the children, fuses their rankings (reciprocal rank
// fusion by default) and answers with whole parents, each once, with the
// children that matched as snippets: "small to big".
//
// The vector path finds memories by similarity of meaning (with a model
// embedder) or of spelling (with the offline hash embedder, which compares
// character n-grams); the keyword path finds exact names, codes, numbers
// and error strings ("LH401", "138-0013-8000", "ERR_CONN_RESET").
//
// # Scoping
//
// Every record has a namespace (a user, an agent, a conversation; "default"
// when empty), a time, a speaker and free tags. A Query can be restricted to
// one namespace and a time range. Each namespace has its own vector index,
// so a search of a small namespace in a large store is exact and costs what
// the namespace costs; the keyword path filters inside the index. A
// namespace that holds nothing (or does not exist) gives an empty result,
// not an error: namespaces are created by writing to them.
//
// # Durability
//
// [Open] keeps the memory in a directory: a manifest (format version,
// embedder name and dimension, backend), an append-only log of records
// carrying their children's vectors (so reopening never re-embeds), and
// snapshots of the indexes written by [Memory.Snapshot] and [Memory.Close]
// so that opening a large store does not replay the whole log. Each Add is
// fsynced before it returns; AddBatch fsyncs once for the batch (group
// commit). See [Open] for what happens to a damaged store.
//
// # API
//
// [Memory] implements memory.Memory (Update stores a segment in
// DefaultNamespace; Search runs the default mode over every namespace) and
// offers more: [Memory.Add] and [Memory.AddBatch] take a [Record],
// [Memory.Query] takes a [Query] (namespace, time range, mode, count,
// minimum score) and answers with [Hit] values that carry the record's metadata
// and each path's rank, [Memory.Forget] removes a record, [Memory.Compact]
// drops forgotten records from disk. Query is not called Search only
// because memory.Memory's Search takes a string.
//
// # Input
//
// A record's text must hold at least one letter or digit ([ErrEmptyText]
// otherwise) and be valid UTF-8 ([ErrInvalidUTF8]; records are refused, not
// repaired). Queries are repaired with strings.ToValidUTF8; a query without
// letters or digits (only punctuation) finds nothing.
package longterm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/semantic"
	"github.com/agentmem/agentmem/vdb"
)

// A Record is one memory: the parent that search answers with
// ([memory.Record]). An empty Namespace means DefaultNamespace.
type Record = memory.Record

// A Query is a search request ([memory.Query]). Its zero values mean the
// defaults: K the memory's WithTopK, MinScore its WithMinScore.
type Query = memory.Query

// A Hit is one memory found by Query ([memory.Hit]): the whole parent
// record, its fused score, the children that matched (Snippets, in text
// order), the record's metadata and each path's rank.
type Hit = memory.Hit

// Memory is a long-term hybrid memory. It is safe for concurrent use by
// multiple goroutines: searches run in parallel; writes are serialised and
// block searches only while the indexes are updated, not while embedding or
// syncing.
type Memory struct {
	emb  embed.Embedder
	dim  int
	opts options

	// wmu serialises writers: id assignment, log order and index order
	// agree, and only one fsync runs at a time.
	wmu sync.Mutex
	// qmu guards queue, the AddBatch calls waiting for a group commit, and
	// committing, set while one of them (the leader) commits.
	qmu        sync.Mutex
	queue      []*commitReq
	committing bool
	// failed is set (under wmu) when a write panicked: the indexes may
	// hold part of it, so writes and snapshots are refused from then on,
	// and a reopened store replays the log instead. Err reads it.
	failed atomic.Pointer[error]

	mu       sync.RWMutex // guards the fields below
	closed   bool
	parents  map[string]*parent
	children map[int64]childRef
	vecs     map[string]*semantic.Vectors // per namespace
	// nsRecords counts each namespace's records (added, removed): a
	// search of every namespace lists them without reading every record.
	nsRecords map[string]int
	tok       keyword.Tokenizer // the keyword path's
	nextChild int64

	// facts is what the memory keeps of its records' validity and
	// versions (facts.go).
	facts facts

	// turns is the keyword path's per-namespace index of whole records
	// (turns.go), made on first use by turnIdx.
	turnsOnce sync.Once
	turns     *turnIndex

	// durable state (nil log: in memory only)
	dir     string
	format  int // the manifest's format (formatVersion or formatFacts)
	lock    *os.File
	log     *logFile
	applied int // records applied since the last snapshot
	// snapshotOnClose makes Close write a snapshot however few records
	// were applied (Repair's rebuilt store).
	snapshotOnClose bool
	// turnsLeft: the latest snapshot (loaded, or an automatic one of this
	// process) lacks the turn index of a namespace; Close writes a
	// snapshot that keeps them all.
	turnsLeft bool
	// turnsUnused is why the snapshot's turn index file was not used
	// (loadTurnsCache), nil when it was or there was none; Verify reports
	// it.
	turnsUnused error
}

// parent is a stored record with its children.
type parent struct {
	rec      Record
	children []logChild
	off      int64 // offset of its frame in the log, -1 without a log
}

type childRef struct {
	p *parent
	i int // index in p.children
}

var (
	_ memory.Memory  = (*Memory)(nil)
	_ memory.Records = (*Memory)(nil)
	_ memory.Querier = (*Memory)(nil)
	_ memory.Lister  = (*Memory)(nil)
)

// New returns an empty memory that lives only in this process (see Open for
// one on disk). It learns the embedder's dimension, embedding a probe text
// if the embedder does not know it yet.
func New(ctx context.Context, emb embed.Embedder, opts ...Option) (*Memory, error) {
	if emb == nil {
		return nil, fmt.Errorf("longterm: %w: nil embedder", ErrInvalidOption)
	}
	o := defaultOptions()
	if err := o.apply(opts); err != nil {
		return nil, err
	}
	o.defaultFusion(emb)
	dim, err := embed.Dimension(ctx, emb)
	if err != nil {
		return nil, fmt.Errorf("longterm: %w", err)
	}
	tok, err := o.keywordTokenizer()
	if err != nil {
		return nil, err
	}
	return &Memory{
		emb:      emb,
		dim:      dim,
		opts:     o,
		parents:  make(map[string]*parent),
		children: make(map[int64]childRef),
		vecs:     make(map[string]*semantic.Vectors),
		tok:      tok,
	}, nil
}

// Len returns the number of stored records (parents).
func (m *Memory) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.parents)
}

// Chunks returns the number of stored children.
func (m *Memory) Chunks() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.children)
}

// Get returns a copy of the stored record with the given id.
func (m *Memory) Get(id string) (Record, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	p, ok := m.parents[id]
	if !ok {
		return Record{}, false
	}
	r := p.rec
	r.Tags = slices.Clone(r.Tags)
	return r, true
}

// closeSnapshotShare: Close writes a snapshot when the records applied
// since the last one are at least 1/closeSnapshotShare of the store. A
// snapshot rewrites every vector (O(store)); paid once per that share of
// the store's records, it costs O(1) per record, where a snapshot on every
// Close made each `agentmem add` into a store of 50,000 memories rewrite
// 205 MB (0.85 s). The tail left for Open to replay stays under that share
// after a Close, and after a crash under WithSnapshotEvery's count or a
// quarter of the store, whichever is larger (an automatic snapshot,
// autoSnapshotShare).
const closeSnapshotShare = 8

// Close writes a snapshot if the memory is on disk and the records
// applied since the last one are at least 1/closeSnapshotShare of the
// store, or the latest snapshot lacks a namespace's keyword index (the
// previous release's, an automatic one, a damaged file) (unless the
// store is read-only or the backend cannot save one),
// and releases the indexes.
// A few records added to a large store stay in the log for the next Open
// to replay (the log carries their vectors: nothing is re-embedded). It is
// idempotent; other methods return ErrClosed afterwards.
func (m *Memory) Close() error {
	m.wmu.Lock()
	defer m.wmu.Unlock()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.mu.Unlock()
	var errs []error
	due := m.snapshotOnClose || m.turnsLeft || (m.applied > 0 && m.applied*closeSnapshotShare >= len(m.parents))
	if m.log != nil && due && !m.opts.store.readOnly && m.Err() == nil {
		// A backend that cannot save (no vdb.Persister) is not an error
		// here: the next Open replays the log, which carries the vectors.
		if err := m.snapshotLocked(context.Background(), true); err != nil && !errors.Is(err, errors.ErrUnsupported) {
			errs = append(errs, err)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	for _, db := range m.vecs {
		if err := db.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if m.log != nil {
		if err := m.log.close(); err != nil {
			errs = append(errs, err)
		}
	}
	if m.lock != nil {
		m.lock.Close()
	}
	if len(errs) > 0 {
		return fmt.Errorf("longterm: close: %w", errors.Join(errs...))
	}
	return nil
}

// Search returns the memories most related to question in every namespace,
// with the memory's default mode and count, asked now: its time references
// ("what did we talk about yesterday?") count back from the clock (Query's
// AsOf), as an agent asking during a conversation means them. It
// implements memory.Memory.
func (m *Memory) Search(ctx context.Context, question string) ([]memory.Hit, error) {
	return m.Query(ctx, Query{Text: question, Mode: m.opts.mode, AsOf: time.Now()})
}

// vectorSearch returns up to depth children by descending cosine ≥
// minScore that pass keep, over the query's namespace (or all of them).
// Namespaces have their own index, so only the time range needs
// over-fetching: the fetch grows fourfold until depth children pass or the
// index is exhausted. m.mu must be held.
func (m *Memory) vectorSearch(ctx context.Context, q Query, qvec []float32, depth int, minScore float32, keep func(int64) bool) ([]vdb.Result, error) {
	var dbs []*semantic.Vectors
	if q.Namespace != "" {
		if db := m.vecs[q.Namespace]; db != nil {
			dbs = append(dbs, db)
		}
	} else {
		for _, db := range m.vecs {
			dbs = append(dbs, db)
		}
	}
	timed := !q.From.IsZero() || !q.To.IsZero()
	var all []vdb.Result
	// floor is the depth-th best score found so far (once depth are):
	// an exact index of a namespace searched after it need not return
	// anything below (ties may still win on their ID), since it could
	// not make the first depth.
	floor := float32(math.Inf(-1))
	for _, db := range dbs {
		n := db.Len()
		if n == 0 {
			continue
		}
		fetch := depth
		if timed {
			fetch = 2 * depth
		}
		ms := minScore
		if m.exactIndex(n) && floor > -1 {
			ms = max(ms, floor)
		}
		for {
			fetch = min(fetch, n)
			res, err := db.Search(ctx, qvec, fetch, ms)
			if err != nil {
				return nil, fmt.Errorf("longterm: vector search: %w", err)
			}
			kept := res[:0:0]
			for _, r := range res {
				if keep == nil || keep(r.ID) {
					kept = append(kept, r)
				}
			}
			// Done when enough passed, when the index had no more
			// (fewer than asked, or everything was asked), or when the
			// minimum score cut the list short.
			if !timed || len(kept) >= depth || len(res) < fetch || fetch >= n {
				all = append(all, kept...)
				break
			}
			fetch *= 4
		}
		if len(dbs) > 1 && len(all) >= depth {
			all = bestResults(all, depth)
			floor = all[depth-1].Score
		}
	}
	return bestResults(all, depth), nil
}

// bestResults returns the first depth of all by descending score, ties by
// ascending ID (sorting all).
func bestResults(all []vdb.Result, depth int) []vdb.Result {
	slices.SortFunc(all, func(a, b vdb.Result) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return all[:min(len(all), depth)]
}

// exactIndex reports whether a namespace's vector index of n vectors
// searches exactly: the default backend below the approximate stage's
// size (WithANN; it is trained from annMin vectors and dropped below half
// of it). Other backends are not assumed exact.
func (m *Memory) exactIndex(n int) bool {
	return m.opts.backend == DefaultBackend && (m.opts.annMin <= 0 || n < m.opts.annMin/2)
}

func (m *Memory) embedQuery(ctx context.Context, text string) ([]float32, error) {
	v, err := embed.EmbedQuery(ctx, m.emb, text)
	if err != nil {
		return nil, fmt.Errorf("longterm: embed query: %w", err)
	}
	return v, nil
}
