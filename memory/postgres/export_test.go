package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/keyword"
)

// WithTokenizer makes the store cut terms with tok instead of
// keyword.NewTokenizer()'s, as a build with another tokenizer did.
func WithTokenizer(tok keyword.Tokenizer) Option {
	return func(o *options) error {
		o.tokenizer = tok
		return nil
	}
}

// MigrationSQL returns migration i's SQL (0: the first) for dimension dim.
func MigrationSQL(i, dim int) string { return migrations[i].sql(shape{dim: dim}) }

// SetBlocks sets how many postings a block holds and how many records a
// namespace's tail holds before a write packs it, until the returned
// function restores them.
func SetBlocks(postings int, records int64) (restore func()) {
	p, r := blockPostings.Swap(int64(postings)), mergeRecords.Swap(records)
	return func() { blockPostings.Store(p); mergeRecords.Store(r) }
}

// CheckBlocks returns an error unless every namespace's posting blocks
// hold exactly its postings up to its merged_seq (Verify's check).
func CheckBlocks(ctx context.Context, m *Memory) error {
	return pgx.BeginFunc(ctx, m.pool, func(tx pgx.Tx) error { return checkBlocks(ctx, tx) })
}

// FoldLockKey returns the name of the advisory lock that serialises the
// folds of m's store (hashtextextended(key, 0) is the lock's key).
func FoldLockKey(m *Memory) string { return m.foldLockKey() }

// FoldSkips returns how many background folds of m found the fold lock
// held by another session and skipped.
func FoldSkips(m *Memory) int64 { return m.foldSkips.Load() }

// SetPendingLimits sets the most chunks a write stores pending and the
// estimated pending chunks past which writes go into the index, until the
// returned function restores them.
func SetPendingLimits(writeChunks int, capChunks int64) (restore func()) {
	w, c := pendingWriteChunks.Swap(int64(writeChunks)), pendingCapChunks.Swap(capChunks)
	return func() { pendingWriteChunks.Store(w); pendingCapChunks.Store(c) }
}

// DeferIndexes drops table's indexes as a load does, recording them in
// deferred_indexes for the next Open (or load) to build.
func DeferIndexes(ctx context.Context, m *Memory, table string) error {
	return pgx.BeginFunc(ctx, m.pool, func(tx pgx.Tx) error { return deferIndexes(ctx, tx, table) })
}

// SetCacheLimit sets how many entries a namespace's search cache holds
// before it is let go, until the returned function restores it.
func SetCacheLimit(n int) (restore func()) {
	old := cacheLimit.Swap(int64(n))
	return func() { cacheLimit.Store(old) }
}

// SetVectorCache sets the largest namespace (records) whose vectors a
// Memory keeps in process, until the returned function restores it.
func SetVectorCache(records int64) (restore func()) {
	old := vectorCacheRecords
	vectorCacheRecords = records
	return func() { vectorCacheRecords = old }
}

// VectorCacheSearches waits for m's vector copies' refreshes to end, lets
// the next ones start at once, and returns how many searches the copies
// answered.
func VectorCacheSearches(m *Memory) int64 {
	m.vecs.wg.Wait()
	m.vecs.mu.Lock()
	for _, nv := range m.vecs.byNS {
		nv.next.Store(0)
		nv.nextAppend.Store(0)
	}
	m.vecs.mu.Unlock()
	return m.vecs.searched.Load()
}

// LinkFills waits for m's background reads to end, lets the next ones
// start at once, and returns how many caches got all their namespace's
// links.
func LinkFills(m *Memory) int64 {
	m.vecs.wg.Wait()
	m.caches.mu.Lock()
	clear(m.caches.fillNext)
	m.caches.mu.Unlock()
	return m.caches.filled.Load()
}

// SetFastBatch sets the most records a write sends through add_record,
// until the returned function restores it (0: every write takes the
// general path).
func SetFastBatch(records int) (restore func()) {
	r := fastBatchRecords
	fastBatchRecords = records
	return func() { fastBatchRecords = r }
}

// The package's tests of the HNSW path (folds, bulk loads, migrations that
// rebuild the index) run with the index from the first record, as stores
// did before WithIndexAfter; TestIndexAfter and the benchmarks pass
// WithIndexAfter themselves.
func init() { defaultIndexAfter = 0 }

// Indexed reports whether m last found its store's HNSW index.
func Indexed(m *Memory) bool { return m.indexed.Load() }

// RecheckIndex has m's background fold look for the HNSW index again at
// once, as if m had found none (a concurrent build may be due).
func RecheckIndex(m *Memory) {
	m.indexed.Store(false)
	m.indexCheckedAt.Store(0)
	m.recheckIndex()
}

// SetLoadMerge sets how many records a load's batches leave in a
// namespace's tail before one packs it, until the returned function
// restores it.
func SetLoadMerge(records int64) (restore func()) {
	r := loadMergeRecords.Swap(records)
	return func() { loadMergeRecords.Store(r) }
}

// HoldVectorRefreshes keeps m's vector copies as they are, not refreshed,
// until VectorCacheSearches lets them be again.
func HoldVectorRefreshes(m *Memory) {
	m.vecs.wg.Wait()
	m.vecs.mu.Lock()
	defer m.vecs.mu.Unlock()
	for _, nv := range m.vecs.byNS {
		nv.next.Store(time.Now().Add(time.Hour).UnixNano())
		nv.nextAppend.Store(time.Now().Add(time.Hour).UnixNano())
	}
}

// HoldVectorReads waits for m's vector copies' refreshes to end and keeps
// the next ones from reading a copy again for an hour, as after a read
// that took six minutes, until VectorCacheSearches lets them be again: a
// refresh that adds the chunks written since a copy still may.
func HoldVectorReads(m *Memory) {
	m.vecs.wg.Wait()
	m.vecs.mu.Lock()
	defer m.vecs.mu.Unlock()
	for _, nv := range m.vecs.byNS {
		nv.next.Store(time.Now().Add(time.Hour).UnixNano())
	}
}

// VectorTailSearches returns how many searches of m read a vector copy
// with the chunks written since it, scanned in the server, and how many
// refreshes added those chunks to a copy rather than reading it again.
func VectorTailSearches(m *Memory) (tail, appended int64) {
	return m.vecs.tailSearched.Load(), m.vecs.appended.Load()
}

// CacheGrows returns how many of m's keyword caches were made from the
// one before with the records written since added.
func CacheGrows(m *Memory) int64 { return m.caches.grown.Load() }

// DocReads returns how many times m's searches read records (their texts)
// that their namespace's cache did not hold.
func DocReads(m *Memory) int64 { return m.caches.docReads.Load() }

// Prefetched returns how many keyword caches m's searches grew, and how
// many vector tails they scanned, from the records their view read when
// it opened (view.prefetch).
func Prefetched(m *Memory) (caches, tails int64) {
	return m.caches.prefetched.Load(), m.vecs.prefetched.Load()
}

// IndexOrder is the ORDER BY of a vector search through m's HNSW index,
// with the query as $1.
func IndexOrder(m *Memory) string { return m.indexExpr() + " <#> $1" }

// FillOvertaken reads all of namespace ns's links and postings as a
// background fill does for the cache of its version now, but only after
// write has written to it (writes that outpaced the fill), and reports
// whether m then keeps a complete cache of the namespace.
func FillOvertaken(ctx context.Context, m *Memory, ns string, write func()) (bool, error) {
	nss, err := namespaces(ctx, m.pool, ns)
	if err != nil || len(nss) != 1 {
		return false, err
	}
	c := m.caches.get(nss[0])
	write()
	// The search after the write keeps an empty cache of the new version.
	nss, err = namespaces(ctx, m.pool, ns)
	if err != nil || len(nss) != 1 {
		return false, err
	}
	m.caches.get(nss[0])
	if err := m.readAll(ctx, nss[0], c); err != nil {
		return false, err
	}
	m.caches.mu.Lock()
	kept := m.caches.byNS[nss[0].id]
	m.caches.mu.Unlock()
	return kept.isComplete(), nil
}

// WithBigNamespace sets the size (records) past which the HNSW index's
// rule counts a namespace's chunks (exactRecords otherwise).
func WithBigNamespace(records int) Option {
	return func(o *options) error {
		o.bigNamespace = records
		return nil
	}
}

// Vector is a value CopyValues writes as a pgvector vector, or as a
// sparsevec if Sparse.
type Vector struct {
	V      []float32
	Sparse bool
}

// CopyValues copies rows into table's columns through the binary COPY
// encoder of writes (copyRows): int64 as int8, int32 as int4, string as
// text, time.Time as timestamptz (zero: NULL), []string as text[],
// []int32 as int4[], bool, Vector, nil as NULL.
func CopyValues(ctx context.Context, tx pgx.Tx, table string, columns []string, rows [][]any) error {
	c := newCopyRows(0)
	for _, row := range rows {
		c.row(len(row))
		for _, v := range row {
			switch v := v.(type) {
			case nil:
				c.null()
			case int64:
				c.int8(v)
			case int32:
				c.int4(v)
			case string:
				c.text(v)
			case time.Time:
				c.nullTime(v)
			case []string:
				c.texts(v)
			case []int32:
				c.int4s(v)
			case bool:
				c.bool(v)
			case Vector:
				c.field(appendVector(nil, v.V, v.Sparse))
			default:
				return fmt.Errorf("CopyValues: %T", v)
			}
		}
	}
	return c.send(ctx, tx, table, columns)
}
