package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	pgv "github.com/pgvector/pgvector-go"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/engine"
	"github.com/agentmem/agentmem/vdb"
)

// A memory in PostgreSQL is the engine's source of its records
// (engine.Store), keyed by their seq: a view is a repeatable-read,
// read-only transaction, so that a search reads one snapshot.
var (
	_ engine.SearchStore[int64] = (*Memory)(nil)
	_ engine.During             = (*nsView)(nil)
	_ engine.Selector           = (*nsView)(nil)
)

// View opens a view of the database for one search: a repeatable-read,
// read-only transaction on a connection of the pool, until its Close.
// When the pool can spare a second connection (pairs), the vector path
// runs on it, in a transaction of the same snapshot, beside the keyword
// path on the first (engine.Parallel).
func (m *Memory) View(ctx context.Context) (engine.Source[int64], error) {
	return m.view(ctx, "", false, true)
}

// ViewNamespace is View for the searches of namespace ns (empty: all),
// whose statistics it reads in the round trip that opens the view
// (engine.NamespaceStore).
func (m *Memory) ViewNamespace(ctx context.Context, ns string) (engine.Source[int64], error) {
	return m.view(ctx, ns, true, true)
}

// ViewSearch is ViewNamespace for a search that takes both paths (both)
// or at most one (engine.SearchStore): only a view for both holds a
// second connection for the vector path, whose snapshot it exports
// (pg_export_snapshot writes a file: 0.1–0.4 ms measured).
func (m *Memory) ViewSearch(ctx context.Context, ns string, both bool) (engine.Source[int64], error) {
	return m.view(ctx, ns, true, both)
}

// view opens a view, reading the namespaces named ns when read, with a
// second connection for the vector path when pair and the pool can spare
// one.
func (m *Memory) view(ctx context.Context, ns string, read, pair bool) (engine.Source[int64], error) {
	if err := m.check(ctx); err != nil {
		return nil, err
	}
	c, err := m.acquire(ctx)
	if err != nil {
		return nil, m.wrap(ctx, "query", err)
	}
	v := &view{m: m, c: c, nss: map[string][]nsInfo{}}
	var b pgx.Batch
	b.Queue(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`)
	if pair {
		select {
		case m.pairs <- struct{}{}:
			v.pair = true
			b.Queue(`SELECT pg_export_snapshot()`).QueryRow(func(row pgx.Row) error { return row.Scan(&v.snapshot) })
		default:
		}
	}
	if read {
		sql, args := namespacesSQL(ns)
		b.Queue(sql, args...).Query(func(rows pgx.Rows) error {
			infos, err := collectNamespaces(rows)
			v.pre = &preRead{name: ns, infos: infos}
			return err
		})
		if ns != "" {
			v.prefetch(&b, ns)
		}
	}
	if err := c.SendBatch(ctx, &b).Close(); err != nil {
		v.Close()
		return nil, m.wrap(ctx, "query", err)
	}
	v.q = c
	if v.pair {
		// Safe to wait for: at most cap(pairs) views hold two
		// connections, and the pool has two for each.
		if v.c2, err = m.acquire(ctx); err != nil {
			v.Close()
			return nil, m.wrap(ctx, "query", err)
		}
	}
	return v, nil
}

// querier is what a view's statements run on: a connection in the view's
// transaction (or a pgx.Tx).
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// view is the engine's source over one read-only transaction, or two of
// one snapshot: the keyword path's questions, the records and their
// neighbours are asked on c, one after the other; the vector path's on
// c2 when there is one.
type view struct {
	m *Memory
	c *pgxpool.Conn
	q querier // c, in its transaction (nil until it began)
	// pair: the view holds a place in m.pairs, and snapshot is c's
	// transaction's, exported for c2's; c2 began its transaction when
	// began2.
	pair     bool
	snapshot string
	c2       *pgxpool.Conn
	began2   bool
	nss      map[string][]nsInfo // namespaces read on c, by the name asked ("" all)
	nss2     map[string][]nsInfo // and on c2
	held     []*nsCache          // caches got (caches.getFor), under caches.mu
	pre      *preRead            // read when the view opened, for both paths
	since    *since              // records written since the caches, read when it opened
	docs     *docCaches          // got by Docs
	// gen is the write to namespace genNS that this process made last
	// before the view opened (caches.written), if any.
	gen   uint64
	genNS string
}

// preRead are the namespaces named name ("" all), read with the view's
// first statement.
type preRead struct {
	name  string
	infos []nsInfo
}

// Parallel: with a second connection, the vector path may run beside the
// keyword path.
func (v *view) Parallel() bool { return v.c2 != nil }

// Close ends the view's transactions and gives its connections back, in
// the background: the search that closes it has its results already, and
// the rollbacks need not make it wait (Memory.Close waits for them, as
// the pool's Close waits for every connection).
func (v *view) Close() error {
	if v.c == nil {
		return nil
	}
	v.m.caches.release(v)
	c, c2, began, began2, pair, pairs := v.c, v.c2, v.q != nil, v.began2, v.pair, v.m.pairs
	v.c, v.c2, v.q = nil, nil, nil
	go func() {
		// A server that stopped answering does not hold the connections
		// for long.
		ctx, cancel := context.WithTimeout(context.Background(), DefaultConnectTimeout)
		defer cancel()
		if began {
			c.Exec(ctx, `ROLLBACK`) //nolint:errcheck // read only; a connection left in a transaction is dropped by Release
		}
		c.Release()
		if c2 != nil {
			if began2 {
				c2.Exec(ctx, `ROLLBACK`) //nolint:errcheck // as above
			}
			c2.Release()
		}
		if pair {
			<-pairs
		}
	}()
	return nil
}

// namespaces returns the namespace named ns, or all of them (ns empty),
// read once per view.
func (v *view) namespaces(ctx context.Context, ns string) ([]nsInfo, error) {
	if v.pre != nil && v.pre.name == ns {
		return v.pre.infos, nil
	}
	if got, ok := v.nss[ns]; ok {
		return got, nil
	}
	got, err := namespaces(ctx, v.q, ns)
	if err != nil {
		return nil, v.m.wrap(ctx, "query: namespaces", err)
	}
	v.nss[ns] = got
	return got, nil
}

// vectorNamespaces returns the namespaces the vector path reads, in the
// view's snapshot: those read when it opened, or read on c2 (beginning
// its transaction, the first time, in the same round trip), or on c.
func (v *view) vectorNamespaces(ctx context.Context, ns string) ([]nsInfo, error) {
	if v.pre != nil && v.pre.name == ns {
		return v.pre.infos, nil
	}
	if v.c2 == nil {
		return v.namespaces(ctx, ns)
	}
	if got, ok := v.nss2[ns]; ok {
		return got, nil
	}
	var b pgx.Batch
	if err := v.begin2(&b); err != nil {
		return nil, err
	}
	var got []nsInfo
	sql, args := namespacesSQL(ns)
	b.Queue(sql, args...).Query(func(rows pgx.Rows) error {
		var err error
		got, err = collectNamespaces(rows)
		return err
	})
	if err := v.c2.SendBatch(ctx, &b).Close(); err != nil {
		return nil, v.m.wrap(ctx, "query: namespaces", err)
	}
	if v.nss2 == nil {
		v.nss2 = map[string][]nsInfo{}
	}
	v.nss2[ns] = got
	return got, nil
}

// begin2 queues the statements that begin c2's transaction in c's
// snapshot into b, unless they were sent.
func (v *view) begin2(b *pgx.Batch) error {
	if v.began2 {
		return nil
	}
	v.began2 = true
	// The snapshot's name is the server's (hex digits and dashes): SET
	// TRANSACTION SNAPSHOT takes a literal only.
	if v.snapshot == "" || strings.Trim(v.snapshot, "0123456789ABCDEFabcdef-") != "" {
		return fmt.Errorf("postgres: query: unexpected snapshot name %q", v.snapshot)
	}
	b.Queue(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`)
	b.Queue(`SET TRANSACTION SNAPSHOT '` + v.snapshot + `'`)
	return nil
}

func (v *view) Namespaces(ctx context.Context, ns string) ([]engine.Namespace[int64], error) {
	infos, err := v.namespaces(ctx, ns)
	if err != nil {
		return nil, err
	}
	out := make([]engine.Namespace[int64], len(infos))
	for i, info := range infos {
		c, err := v.cache(ctx, info)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		out[i] = &nsView{v: v, info: info, c: c, table: c.table}
		c.mu.Unlock()
	}
	return out, nil
}

// exactRecords is the largest namespace (in records, of some three chunks
// each) whose queries scan its chunks exactly rather than through HNSW.
const exactRecords = 5000

// searchList is HNSW's search list (hnsw.ef_search) for a search of d
// chunks: ef, or twice d when that is longer, at most pgvector's 1,000.
// Measured (BenchmarkHNSWRecall at 10,000 records, BenchmarkLarge at
// 1,000,000; recall@10 against an exact search): vector 0.965 against
// 0.955–0.957 with a list of d, hybrid at 1,000,000 0.952 against 0.947.
func searchList(ef, d int) int { return min(max(ef, 2*d), 1000) }

// maxVectorFetch bounds how deep the vector path digs for enough distinct
// records.
const maxVectorFetch = 20000

// Vectors finds the n chunks nearest to qvec among the scope's. A
// namespace of up to exactRecords records is scanned exactly (its chunks
// found through the ns index): cheaper than the HNSW graph of the whole
// table, whose iterative scan skips every other namespace's chunks, and
// exact. A larger one, or all of them, use HNSW over the chunks that are
// not pending (the partial index), plus an exact scan of the pending ones
// (fold.go) found through their own partial index; ns + 0 keeps the
// planner from taking the ns index for the HNSW search.
func (v *view) Vectors(ctx context.Context, scope engine.Scope, qvec []float32, n int, minScore float32) ([]engine.Chunk[int64], bool, error) {
	m := v.m
	nss, err := v.vectorNamespaces(ctx, scope.Namespace)
	if err != nil || len(nss) == 0 {
		return nil, true, err
	}
	unit := make([]float32, m.dim)
	if err := vdb.Normalize(unit, qvec); err != nil {
		return nil, false, fmt.Errorf("postgres: query vector: %w", err)
	}
	if scope.Namespace != "" || len(nss) == 1 {
		if out, exhausted, ok, err := v.cachedVectors(ctx, nss[0], scope, unit, n, minScore); ok || err != nil {
			return out, exhausted, err
		}
	} else if out, exhausted, ok, err := v.copiesVectors(ctx, nss, scope, unit, n, minScore); ok || err != nil {
		return out, exhausted, err
	}
	m.recheckIndex()
	exact := m.opts.exact || !m.indexed.Load() || scope.Namespace != "" && nss[0].textDocs <= exactRecords
	// $1: the query (scores are computed dense: sparse.go).
	args := []any{pgv.NewVector(unit)}
	arg := func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }
	var conds []string // time range and validity, for every search
	if !scope.From.IsZero() {
		conds = append(conds, "time >= "+arg(scope.From))
	}
	if !scope.To.IsZero() {
		conds = append(conds, "time < "+arg(scope.To))
	}
	if filters(nss, scope) {
		at := arg(scope.AsOf)
		conds = append(conds, "coalesce(valid_from, time) <= "+at, "(valid_until IS NULL OR valid_until > "+at+")")
	}
	// where is the WHERE of a search of the chunks that match cond, with
	// the namespace's column as nsCol.
	where := func(cond, nsCol string) string {
		cs := []string{cond}
		if scope.Namespace != "" {
			cs = append(cs, nsCol+" = "+strconv.Itoa(int(nss[0].id)))
		}
		return strings.Join(append(cs, conds...), " AND ")
	}
	type res struct {
		id, seq int64
		ord     int32
		score   float64
	}
	collect := func(dst *[]res) func(pgx.Rows) error {
		return func(rows pgx.Rows) error {
			var err error
			*dst, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (res, error) {
				var r res
				err := row.Scan(&r.id, &r.seq, &r.ord, &r.score)
				return r, err
			})
			return err
		}
	}
	// exactScan ranks the chunks that match cond by an exact scan.
	exactScan := func(d int, cond string) string {
		return `SELECT id, seq, ord, ` + m.innerProduct("$1") + ` FROM chunks WHERE ` + where(cond, "ns") +
			fmt.Sprintf(` ORDER BY 4 DESC, id LIMIT %d`, d)
	}
	d := min(n, maxVectorFetch)
	// One round trip: c2's transaction (if not begun), the settings, the
	// index search, the settings back, the pending chunks.
	var batch pgx.Batch
	q := v.q
	if v.c2 != nil {
		q = v.c2
		if err := v.begin2(&batch); err != nil {
			return nil, false, err
		}
	}
	var all, pending []res
	if exact {
		batch.Queue(exactScan(d, "true"), args...).Query(collect(&all))
	} else {
		// The planner estimates the namespace filter (an expression) to
		// keep a few rows and then prefers scanning every chunk exactly
		// (measured: all 30,000 chunks of a namespace of 10,000 records,
		// 30 ms a query, instead of a few through HNSW): without
		// sequential scans and sorts, only the HNSW index gives the order.
		// The settings live in a savepoint that is rolled back after the
		// search (it wrote nothing), so the statements that follow, and
		// the user's own values of these settings, are as they were. The
		// index is partial: the search names its predicate.
		batch.Queue(`SAVEPOINT agentmem_vector_search`)
		batch.Queue(`SELECT set_config('hnsw.ef_search', $1, true), set_config('hnsw.iterative_scan', 'strict_order', true),
			set_config('enable_seqscan', 'off', true), set_config('enable_sort', 'off', true)`,
			strconv.Itoa(searchList(m.opts.efSearch, d)))
		batch.Queue(`SELECT id, seq, ord, `+m.innerProduct("$1")+` FROM chunks WHERE `+where("NOT pending", "ns + 0")+
			fmt.Sprintf(` ORDER BY %s <#> $1 LIMIT %d`, m.indexExpr(), d), args...).Query(collect(&all))
		batch.Queue(`ROLLBACK TO SAVEPOINT agentmem_vector_search`)
		batch.Queue(`RELEASE SAVEPOINT agentmem_vector_search`)
		batch.Queue(exactScan(d, "pending"), args...).Query(collect(&pending))
	}
	if err := q.SendBatch(ctx, &batch).Close(); err != nil {
		return nil, false, m.wrap(ctx, "query: vector search", err)
	}
	// Exhausted when neither search found d chunks.
	exhausted := len(all) < d && len(pending) < d || d >= maxVectorFetch
	all = append(all, pending...)
	slices.SortFunc(all, func(a, b res) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.id, b.id))
	})
	all = all[:min(len(all), d)]
	// The minimum score cuts the list (vdb.SearchMinScore's rule).
	if i := slices.IndexFunc(all, func(r res) bool { return float32(r.score) < minScore }); i >= 0 {
		all, exhausted = all[:i], true
	}
	out := make([]engine.Chunk[int64], len(all))
	for i, r := range all {
		out[i] = engine.Chunk[int64]{Record: r.seq, Index: int(r.ord), Score: r.score}
	}
	return out, exhausted, nil
}

// read returns the namespaces the view read, each once, when it read
// each at one version: the records it was asked about are theirs.
func (v *view) read() ([]nsInfo, bool) {
	var all []nsInfo
	if v.pre != nil {
		all = append(all, v.pre.infos...)
	}
	for _, m := range []map[string][]nsInfo{v.nss, v.nss2} {
		for _, infos := range m {
			all = append(all, infos...)
		}
	}
	byID := map[int32]nsInfo{}
	var out []nsInfo
	for _, info := range all {
		if seen, ok := byID[info.id]; ok {
			if seen.version() != info.version() {
				return nil, false
			}
			continue
		}
		byID[info.id] = info
		out = append(out, info)
	}
	return out, len(out) > 0
}

// Docs reads the records of seqs with their chunks' texts; those of the
// namespaces the view read are kept in their caches (cache.go), where a
// background read (fill) may have put all of them, grown from the
// version before as the keyword path grows it (a vector search after a
// write keeps the namespace's cache, rather than starting an empty one).
// A search of several namespaces reads their caches alike (before, it
// read its hits from the server each time: 11 statements and 4 ms of a
// search of 10 namespaces of 1,000 records).
func (v *view) Docs(ctx context.Context, seqs []int64) ([]engine.Doc, error) {
	bySeq := make(map[int64]engine.Doc, len(seqs))
	caches, err := v.docCaches(ctx)
	if err != nil {
		return nil, err
	}
	need := seqs
	if caches != nil {
		// The cache that held the last call's records first: a search
		// asks for one namespace's records at a time.
		all := caches.complete // until a cache lacks some of its records
		found := 0
		for i, c := range caches.order {
			c.mu.Lock()
			all = all && c.allDocs
			n := found
			for _, s := range seqs {
				if _, ok := bySeq[s]; ok {
					continue
				}
				if d, ok := c.docs[s]; ok {
					bySeq[s] = d
					found++
				}
			}
			c.mu.Unlock()
			if found > n && i > 0 {
				caches.order[0], caches.order[i] = caches.order[i], caches.order[0]
			}
			if found == len(seqs) {
				break
			}
		}
		need = nil
		if !all && found < len(seqs) {
			for _, s := range seqs {
				if _, ok := bySeq[s]; !ok {
					need = append(need, s)
				}
			}
		}
	}
	if len(need) > 0 {
		v.m.caches.docReads.Add(1)
		if err := v.readDocs(ctx, need, bySeq); err != nil {
			return nil, err
		}
		for _, s := range need {
			d, ok := bySeq[s]
			if c := caches.get(d.Record.Namespace); ok && c != nil {
				c.mu.Lock()
				c.room(1)
				c.docs[s] = d
				c.mu.Unlock()
			}
		}
	}
	out := make([]engine.Doc, len(seqs))
	for i, s := range seqs {
		out[i] = bySeq[s]
	}
	return out, nil
}

// docCaches are the caches Docs reads a view's records from: by
// namespace name, and in the order Docs tries them.
type docCaches struct {
	byName map[string]*nsCache
	order  []*nsCache
	// infos is how many namespaces the view had read when they were got;
	// complete: each of them has its cache.
	infos    int
	complete bool
}

// get returns the cache of namespace name, or nil.
func (dc *docCaches) get(name string) *nsCache {
	if dc == nil {
		return nil
	}
	return dc.byName[name]
}

// docCaches returns the caches of the namespaces the view read (nil when
// it read one at two versions), got once a view: one namespace's as the
// keyword path gets it (grown from the version before, if need be); of
// several, those kept at the view's versions only.
func (v *view) docCaches(ctx context.Context) (*docCaches, error) {
	infos, ok := v.read()
	if !ok {
		return nil, nil
	}
	if v.docs != nil && v.docs.infos == len(infos) {
		return v.docs, nil
	}
	dc := &docCaches{byName: make(map[string]*nsCache, len(infos)), infos: len(infos)}
	for _, info := range infos {
		var c *nsCache
		if len(infos) == 1 {
			var err error
			if c, err = v.cache(ctx, info); err != nil {
				return nil, err
			}
		} else if c = v.m.caches.kept(v, info); c == nil {
			continue
		}
		dc.byName[info.name] = c
		dc.order = append(dc.order, c)
	}
	dc.complete = len(dc.order) == len(infos)
	v.docs = dc
	return dc, nil
}

// readDocs reads the records of seqs with their chunks' texts into bySeq.
func (v *view) readDocs(ctx context.Context, seqs []int64, bySeq map[int64]engine.Doc) error {
	return v.m.wrap(ctx, "query: records", readDocs(ctx, v.q, `r.seq = ANY($1)`, seqs, bySeq))
}

// readDocs reads the records that match where (over records r, with
// arg as $1) with their chunks' texts into bySeq.
func readDocs(ctx context.Context, q querier, where string, arg any, bySeq map[int64]engine.Doc) error {
	rows, err := q.Query(ctx, docsSQL(where), arg)
	if err != nil {
		return err
	}
	return scanDocs(rows, bySeq)
}

// docsSQL reads the records that match where (over records r) with their
// chunks' texts, for scanDocs.
func docsSQL(where string) string {
	return `SELECT ` + recordColumns + `, r.seq,
		array(SELECT c.text FROM chunks c WHERE c.seq = r.seq ORDER BY c.ord)
		FROM records r JOIN namespaces n ON n.id = r.ns WHERE ` + where
}

// scanDocs reads docsSQL's rows into bySeq, without the records'
// sightings (Seen, LastSeen), which no search reads: they are all a write
// changes in place in a record without adding or ending one (a
// duplicate), so that a namespace's records, once read, stay as read
// while it only grows (nsCache.grow carries them).
func scanDocs(rows pgx.Rows, bySeq map[int64]engine.Doc) error {
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var d engine.Doc
		if err := scanRecord(rows, &d.Record, &seq, &d.Chunks); err != nil {
			return err
		}
		d.Record.Seen, d.Record.LastSeen = 0, time.Time{}
		bySeq[seq] = d
	}
	return rows.Err()
}

// Neighbours returns up to n records on each side of each of seqs in its
// conversation: following prev_seq back, and the records whose prev_seq
// is the current one forward.
func (v *view) Neighbours(ctx context.Context, seqs []int64, n int) (before, after [][]memory.Record, err error) {
	before, after = make([][]memory.Record, len(seqs)), make([][]memory.Record, len(seqs))
	rows, err := v.q.Query(ctx, `
WITH RECURSIVE back(seed, seq, prev, depth) AS (
	SELECT seq, seq, prev_seq, 0 FROM records WHERE seq = ANY($1)
	UNION ALL
	SELECT b.seed, p.seq, p.prev_seq, b.depth + 1 FROM back b JOIN records p ON p.seq = b.prev WHERE b.depth < $2
), fwd(seed, seq, depth) AS (
	SELECT seq, seq, 0 FROM records WHERE seq = ANY($1)
	UNION ALL
	SELECT d.seed, f.seq, d.depth + 1 FROM fwd d JOIN records f ON f.prev_seq = d.seq WHERE d.depth < $2
), around(seed, seq, pos) AS (
	SELECT seed, seq, -depth FROM back WHERE depth > 0
	UNION ALL
	SELECT seed, seq, depth FROM fwd WHERE depth > 0
)
SELECT `+recordColumns+`, a.seed, a.pos
FROM around a JOIN records r ON r.seq = a.seq JOIN namespaces n ON n.id = r.ns
ORDER BY a.seed, a.pos`, seqs, n)
	if err != nil {
		return nil, nil, v.m.wrap(ctx, "query: neighbours", err)
	}
	defer rows.Close()
	at := make(map[int64][]int, len(seqs))
	for i, s := range seqs {
		at[s] = append(at[s], i)
	}
	for rows.Next() {
		var seed int64
		var pos int
		var r memory.Record
		if err := scanRecord(rows, &r, &seed, &pos); err != nil {
			return nil, nil, v.m.wrap(ctx, "query: neighbours", err)
		}
		for _, i := range at[seed] {
			if pos < 0 {
				before[i] = append(before[i], r) // oldest first: ORDER BY pos
			} else {
				after[i] = append(after[i], r)
			}
		}
	}
	return before, after, v.m.wrap(ctx, "query: neighbours", rows.Err())
}
