// Package semantic stores values under text keys and finds them again by
// meaning: the chain embedder → vector database → index map of seed 000's
// SemanticMap and SemanticSet.
//
// A [SemanticMap] embeds each key with an [embed.Embedder], stores the
// vector in a [vdb.VectorDatabase] under an ID it hands out (monotonically,
// never reusing one), and keeps the key and value in an [IndexMap] under the
// same ID. Search embeds the query, asks the vector database for the nearest
// IDs and maps them back. A [SemanticSet] is a SemanticMap whose value is its
// key.
//
// Index maps come in two kinds: [MemIndexMap], in memory with JSON
// save/load, and [JSONLIndexMap], an append-only JSON Lines log that makes
// every write durable and repairs a torn tail after a crash.
//
// Under SemanticMap, [Vectors] is the lowest rung of the chain: a vector
// database opened by spec through the vdb registry (with the namespace it
// serves) that holds vectors the caller computed under ids the caller chose.
// memory/longterm — and so memory/short, which runs on its engine — keeps one
// per namespace: it embeds in batches before it logs, and replays vectors
// from its own log without re-embedding.
//
// Nothing in this package knows which vector database backend it was given.
package semantic

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/vdb"
)

// Defaults from seed 000: SemanticSet.search(query, number: 5, minDistance: 0.3).
const (
	DefaultK        = 5
	DefaultMinScore = 0.3
)

// rebuildBatch is how many keys Rebuild and Replay embed per Embed call.
const rebuildBatch = 512

// Entry is what a [SemanticMap] keeps in its index map under each ID: the
// key text (needed to re-embed it) and the value. A zero Value is omitted
// from JSON, so a [SemanticSet]'s log holds each text once.
type Entry[T any] struct {
	Key   string `json:"key"`
	Value T      `json:"value,omitzero"`
}

// Hit is one search result.
type Hit[T any] struct {
	ID    int64
	Key   string
	Value T
	Score float32 // cosine similarity of query and key, in [-1, 1]
}

// SemanticMap maps text keys to values of type T and finds values by the
// meaning of their keys. It is safe for concurrent use by multiple
// goroutines: writes are serialised (IDs, vectors and index records are
// written in one order) except for the fsync of a [JSONLIndexMap], which
// concurrent writers share (group commit); searches run concurrently with
// each other and with writes, and see a write once both its vector and its
// index record are stored (for a JSONL index: durable).
//
// A SemanticMap owns the vector database and index map it was given: Close
// closes them.
type SemanticMap[T any] struct {
	emb   embed.Embedder
	db    vdb.VectorDatabase
	index IndexMap[Entry[T]]

	mu     sync.Mutex  // serialises writes; guards next
	next   int64       // the next ID to hand out
	closed atomic.Bool // set under mu; read without it so searches never wait for a write
	// inflight counts vectors that may be in db without a visible index
	// entry (a put waiting for its fsync, a delete between its two steps);
	// Search asks db for that many more results so that skipping them
	// still leaves k.
	inflight atomic.Int64
}

// NewMap returns a SemanticMap over emb, db and index. A nil index means a
// new [MemIndexMap]. IDs are handed out from index.MaxID()+1 on.
//
// NewMap does not make db and index agree: when db is new or was restored
// from an older snapshot, call [SemanticMap.Rebuild] or
// [SemanticMap.Replay]. If emb already knows its dimension and it differs
// from db's, the error wraps [vdb.ErrDimension].
func NewMap[T any](emb embed.Embedder, db vdb.VectorDatabase, index IndexMap[Entry[T]]) (*SemanticMap[T], error) {
	if emb == nil || db == nil {
		return nil, errors.New("semantic: NewMap needs an embedder and a vector database")
	}
	if d := emb.Dim(); d > 0 && d != db.Dim() {
		return nil, fmt.Errorf("%w: embedder %s makes %d-d vectors, the database holds %d-d", vdb.ErrDimension, emb.Name(), d, db.Dim())
	}
	if index == nil {
		index = NewMemIndexMap[Entry[T]]()
	}
	return &SemanticMap[T]{emb: emb, db: db, index: index, next: index.MaxID() + 1}, nil
}

// checkTexts returns an error wrapping embed.ErrEmptyText if a text is empty
// or white space, naming its position.
func checkTexts(what string, texts []string) error {
	for i, s := range texts {
		if strings.TrimSpace(s) == "" {
			if len(texts) == 1 {
				return fmt.Errorf("semantic: %s: %w", what, embed.ErrEmptyText)
			}
			return fmt.Errorf("semantic: %s %d: %w", what, i, embed.ErrEmptyText)
		}
	}
	return nil
}

// embedKeys embeds texts and checks the answer's shape.
func embedKeys(ctx context.Context, e embed.Embedder, texts []string, query bool) ([][]float32, error) {
	var vecs [][]float32
	var err error
	if qe, ok := e.(embed.QueryEmbedder); ok && query {
		vecs, err = qe.EmbedQuery(ctx, texts)
	} else {
		vecs, err = e.Embed(ctx, texts)
	}
	if err != nil {
		return nil, fmt.Errorf("semantic: embed with %s: %w", e.Name(), err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("semantic: embedder %s returned %d vectors for %d texts", e.Name(), len(vecs), len(texts))
	}
	return vecs, nil
}

// Put stores value under key and returns its ID.
func (m *SemanticMap[T]) Put(ctx context.Context, key string, value T) (int64, error) {
	ids, err := m.PutBatch(ctx, []Entry[T]{{Key: key, Value: value}})
	if err != nil {
		return -1, err
	}
	return ids[0], nil
}

// PutBatch stores entries, embedding all keys in one Embed call, and
// returns their IDs in order. It is all or nothing: an empty key (an error
// wrapping embed.ErrEmptyText), a failed embedding or a failed vector add
// stores nothing, and if the index map cannot record the entries their
// vectors are removed again.
func (m *SemanticMap[T]) PutBatch(ctx context.Context, entries []Entry[T]) ([]int64, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	keys := make([]string, len(entries))
	for i, e := range entries {
		keys[i] = e.Key
	}
	if err := checkTexts("key", keys); err != nil {
		return nil, err
	}
	if err := m.checkOpen(); err != nil {
		return nil, err
	}
	vecs, err := embedKeys(ctx, m.emb, keys, false)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	if m.closed.Load() {
		m.mu.Unlock()
		return nil, ErrClosed
	}
	ids := make([]int64, len(entries))
	items := make([]Item[Entry[T]], len(entries))
	for i, e := range entries {
		ids[i] = m.next + int64(i)
		items[i] = Item[Entry[T]]{ID: ids[i], Value: e}
	}
	if err := m.db.Add(ctx, ids, vecs); err != nil {
		m.mu.Unlock()
		return nil, fmt.Errorf("semantic: add vectors: %w", err)
	}
	m.inflight.Add(int64(len(ids)))
	defer m.inflight.Add(-int64(len(ids)))
	// The IDs are spent even if the index put fails: a vector might have
	// been seen by a concurrent search, and an ID is never reused.
	m.next += int64(len(entries))
	// An index map that can group-commit is written under the lock (so the
	// log keeps ID order) and made durable after it is released, so that
	// concurrent writers share one fsync.
	var wait func() error
	if ap, ok := m.index.(asyncPutter[Entry[T]]); ok {
		wait, err = ap.putAsyncItems(items)
	} else {
		err = m.index.Put(items...)
	}
	m.mu.Unlock()
	if err == nil && wait != nil {
		err = wait()
	}
	if err != nil {
		// Leave nothing behind. A cancelled ctx must not stop the undo.
		if _, derr := m.db.Delete(context.WithoutCancel(ctx), ids...); derr != nil {
			return nil, fmt.Errorf("semantic: index put: %w (and removing the vectors again failed: %v)", err, derr)
		}
		return nil, fmt.Errorf("semantic: index put: %w", err)
	}
	return ids, nil
}

// asyncPutter is implemented by index maps that can append under the
// caller's lock and wait for durability after it (JSONLIndexMap).
type asyncPutter[V any] interface {
	putAsyncItems(items []Item[V]) (wait func() error, err error)
}

// Search returns at most k entries whose keys are most similar to query,
// with a score of at least minScore, best first (ties by ascending ID). No
// match is an empty slice and a nil error. k ≤ 0 is an error wrapping
// [vdb.ErrInvalidK]; an empty query one wrapping embed.ErrEmptyText.
func (m *SemanticMap[T]) Search(ctx context.Context, query string, k int, minScore float32) ([]Hit[T], error) {
	if k <= 0 {
		return nil, fmt.Errorf("semantic: search: %w (got %d)", vdb.ErrInvalidK, k)
	}
	if err := checkTexts("query", []string{query}); err != nil {
		return nil, err
	}
	if err := m.checkOpen(); err != nil {
		return nil, err
	}
	vecs, err := embedKeys(ctx, m.emb, []string{query}, true)
	if err != nil {
		return nil, err
	}
	kk := k
	if extra := int(min(m.inflight.Load(), 1024)); k <= math.MaxInt-extra {
		kk += extra
	}
	res, err := vdb.SearchMinScore(ctx, m.db, vecs[0], kk, minScore)
	if err != nil {
		return nil, fmt.Errorf("semantic: search: %w", err)
	}
	hits := make([]Hit[T], 0, min(k, len(res)))
	for _, r := range res {
		if len(hits) == k {
			break
		}
		// A vector whose index record is not (or no longer) there belongs
		// to a write or delete in flight: skip it.
		e, ok := m.index.Get(r.ID)
		if !ok {
			continue
		}
		hits = append(hits, Hit[T]{ID: r.ID, Key: e.Key, Value: e.Value, Score: r.Score})
	}
	return hits, nil
}

// Get returns the entry stored under id.
func (m *SemanticMap[T]) Get(id int64) (Entry[T], bool) {
	return m.index.Get(id)
}

// Delete removes the given IDs and reports how many were present. Unknown
// IDs are not an error. The index record goes first, so a search never
// returns a deleted entry even if removing its vector fails.
func (m *SemanticMap[T]) Delete(ctx context.Context, ids ...int64) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed.Load() {
		return 0, ErrClosed
	}
	m.inflight.Add(int64(len(ids)))
	defer m.inflight.Add(-int64(len(ids)))
	n, err := m.index.Delete(ids...)
	if err != nil {
		return 0, fmt.Errorf("semantic: delete: %w", err)
	}
	if _, err := m.db.Delete(context.WithoutCancel(ctx), ids...); err != nil {
		return n, fmt.Errorf("semantic: delete vectors: %w", err)
	}
	return n, nil
}

// Len returns the number of stored entries.
func (m *SemanticMap[T]) Len() int { return m.index.Len() }

// Embedder returns the embedder the map was built with.
func (m *SemanticMap[T]) Embedder() embed.Embedder { return m.emb }

// DB returns the map's vector database, e.g. to save a snapshot with
// [vdb.Save]. Writing to it directly breaks the map's consistency.
func (m *SemanticMap[T]) DB() vdb.VectorDatabase { return m.db }

// Index returns the map's index map. Writing to it directly breaks the
// map's consistency.
func (m *SemanticMap[T]) Index() IndexMap[Entry[T]] { return m.index }

// Rebuild embeds every entry of the index map and adds it to the vector
// database, in batches: use it when the database is new or lost, e.g. after
// a restart with an in-memory database. Vectors already present under the
// same IDs are replaced.
func (m *SemanticMap[T]) Rebuild(ctx context.Context) error {
	var ops []Op[Entry[T]]
	for id, e := range m.index.All() {
		ops = append(ops, Op[Entry[T]]{ID: id, Value: e})
	}
	return m.Replay(ctx, ops)
}

// Replay applies log records to the vector database only: puts are
// re-embedded and added, deletes removed. Use it to bring a database
// restored from a snapshot up to date with records logged after the
// snapshot ([JSONLIndexMap.ReadSince]). Replaying a record that the
// snapshot already holds is harmless. Puts whose ID is no longer in the
// index map are skipped.
func (m *SemanticMap[T]) Replay(ctx context.Context, ops []Op[Entry[T]]) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed.Load() {
		return ErrClosed
	}
	var ids []int64
	var keys []string
	flush := func() error {
		if len(ids) == 0 {
			return nil
		}
		vecs, err := embedKeys(ctx, m.emb, keys, false)
		if err != nil {
			return err
		}
		if err := m.db.Add(ctx, ids, vecs); err != nil {
			return fmt.Errorf("semantic: replay: %w", err)
		}
		ids, keys = ids[:0], keys[:0]
		return nil
	}
	for _, op := range ops {
		if op.Deleted {
			// Keep the order of a put and a later delete of the same ID.
			if err := flush(); err != nil {
				return err
			}
			if _, err := m.db.Delete(ctx, op.ID); err != nil {
				return fmt.Errorf("semantic: replay: %w", err)
			}
			continue
		}
		if _, ok := m.index.Get(op.ID); !ok {
			continue
		}
		ids = append(ids, op.ID)
		keys = append(keys, op.Value.Key)
		if len(ids) == rebuildBatch {
			if err := flush(); err != nil {
				return err
			}
		}
		m.next = max(m.next, op.ID+1)
	}
	return flush()
}

func (m *SemanticMap[T]) checkOpen() error {
	if m.closed.Load() {
		return ErrClosed
	}
	return nil
}

// Close closes the index map and the vector database. It is idempotent;
// other methods return [ErrClosed] afterwards.
func (m *SemanticMap[T]) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed.Load() {
		return nil
	}
	m.closed.Store(true)
	return errors.Join(m.index.Close(), m.db.Close())
}

// SemanticSet is a set of texts searched by meaning: a [SemanticMap] whose
// value is its key (seed 000: "a SemanticMap whose key and value are the
// same"). It is safe for concurrent use by multiple goroutines.
type SemanticSet struct {
	m *SemanticMap[struct{}]
}

// NewSet returns a SemanticSet over emb, db and index (nil: in memory). See
// [NewMap].
func NewSet(emb embed.Embedder, db vdb.VectorDatabase, index IndexMap[Entry[struct{}]]) (*SemanticSet, error) {
	m, err := NewMap(emb, db, index)
	if err != nil {
		return nil, err
	}
	return &SemanticSet{m: m}, nil
}

// Put adds text and returns its ID. Adding the same text twice stores it
// twice, under two IDs.
func (s *SemanticSet) Put(ctx context.Context, text string) (int64, error) {
	return s.m.Put(ctx, text, struct{}{})
}

// PutBatch adds texts, embedded in one call, and returns their IDs.
func (s *SemanticSet) PutBatch(ctx context.Context, texts []string) ([]int64, error) {
	entries := make([]Entry[struct{}], len(texts))
	for i, t := range texts {
		entries[i].Key = t
	}
	return s.m.PutBatch(ctx, entries)
}

// Search returns at most k texts most similar to query with a score of at
// least minScore, best first; each hit's Value and Key are the text.
func (s *SemanticSet) Search(ctx context.Context, query string, k int, minScore float32) ([]Hit[string], error) {
	hits, err := s.m.Search(ctx, query, k, minScore)
	if err != nil {
		return nil, err
	}
	out := make([]Hit[string], len(hits))
	for i, h := range hits {
		out[i] = Hit[string]{ID: h.ID, Key: h.Key, Value: h.Key, Score: h.Score}
	}
	return out, nil
}

// Delete removes texts by ID and reports how many were present.
func (s *SemanticSet) Delete(ctx context.Context, ids ...int64) (int, error) {
	return s.m.Delete(ctx, ids...)
}

// Len returns the number of stored texts.
func (s *SemanticSet) Len() int { return s.m.Len() }

// Map returns the SemanticMap under the set.
func (s *SemanticSet) Map() *SemanticMap[struct{}] { return s.m }

// Close closes the set's index map and vector database. It is idempotent.
func (s *SemanticSet) Close() error { return s.m.Close() }
