// Package postgres is agentmem's long-term memory kept in PostgreSQL (with
// the pgvector extension), so that several processes — `agentmem serve`
// replicas, CLIs, batch jobs — share one memory: what one writes, the
// others find on their next query.
//
// It ranks as the in-process engine (memory/longterm) does: records are
// split into sentence-sized chunks (package chunk) whose vectors are
// searched by cosine; the keyword path is BM25 over whole records with
// per-namespace statistics, plus what the records written just before and
// after a record score (its neighbours: WithNeighbourWeight,
// WithNextWeight), what its episode — the run of records each at most 12
// hours after the one before, scored as one document — scores
// (WithEpisodeWeight), a boost for speakers the query names, and the
// query's question words left out; hybrid search
// fuses the two with the same function (memory/internal/ranking.Fuse). The
// keyword path does not approximate BM25 with ts_rank: records are
// tokenized by package keyword's tokenizer in Go, their term frequencies
// and lengths are stored as postings, and each namespace's document count
// and total length are kept in its row, each episode's length in the
// episodes table and a record's episode in its postings, all in the
// write's transaction. A namespace's postings are also packed per term in
// blocks (posting_blocks; a write packs the newest ones every few hundred
// records, see blocks.go), so that a query reads its terms' postings as a
// few rows rather than one per matching record, and scores them in Go as
// keyword.Index does (see score.go). The same records give the same hits
// and scores as memory/longterm (TestRanksLikeLongterm).
//
// # Schema
//
// A store is one PostgreSQL schema (DefaultSchema, or schema=NAME in the
// URL): tables manifest (embedder, dimension and, since schema version
// 13, the keyword tokenizer that cut the records' terms), schema_migrations,
// namespaces (with the BM25 statistics), records, chunks (text,
// vector(dim) — sparsevec(dim) for a lexical embedder of at most 1,000
// dimensions, since schema version 10 (sparse.go) — and whether it is
// pending, with an HNSW index over the chunks that are not unless exact=1
// or the store is below WithIndexAfter's size), postings,
// posting_blocks, episodes and speakers.
// Open creates and migrates it (versioned migrations in one transaction,
// under an advisory lock; a store from before schema version 5 then has
// its postings packed into blocks, one pass over them per namespace, one
// from before version 6 its HNSW index built again as the partial one,
// and one from before version 10 of a lexical embedder its vectors
// converted to sparsevec and its HNSW index built again over them). A
// store whose manifest names another tokenizer than this build's (or,
// from before version 13, none) has every record's text cut into terms
// again in the same transaction, and the namespaces whose terms changed
// their statistics summed and postings packed again (reindex.go): every
// process that opens a store must run the same build, as with any
// migration. A schema newer than this build is
// memory.ErrVersion, a store built with another embedder or dimension
// memory.ErrEmbedderMismatch.
//
// Vectors live in the chunks table with their records rather than in
// vdb/pgvector's per-namespace tables: a batch of records, their chunks,
// vectors, postings and statistics is then one transaction, so a
// connection lost mid-batch leaves nothing half-written, and a namespace is
// a column filter (HNSW with pgvector's iterative scan) rather than a
// table per user.
//
// # Concurrency and durability
//
// A write is one transaction that locks the rows of the namespaces it
// touches (in name order, so writers do not deadlock): writers of different
// namespaces run in parallel, writers of one namespace in turn, and the
// insertion order (the neighbour links) is the commit order. Adding a record
// whose id is stored replaces it, in whichever process; concurrent adds of
// one id leave exactly one record. Add returns after COMMIT, so an
// acknowledged write survives a crash of the process (and, with the
// server's synchronous_commit on, of the server). A single new record
// (an id not stored, no fact to deduplicate or supersede) is written by
// one call of the server-side function add_record (schema version 8), in
// its own transaction, instead of a dozen statements each a round trip;
// it does what the general path does, or nothing when the record needs
// the general path (addone.go).
//
// # Speed
//
// A query of one namespace of up to 5,000 records scans its chunks'
// vectors exactly (through the ns index); a larger namespace, or a query
// of all of them, searches the HNSW index, which a store gets once it
// reaches WithIndexAfter's size (before, every query scans exactly). The index is what a write would
// pay for: pgvector inserts into the graph one vector at a time, several
// milliseconds each, about eight times what building the index over the
// same vectors at once costs (measured on two cores), two thirds of a
// single Add. So a small write (at most 256 chunks) does not insert: its
// chunks are stored pending (schema version 6), outside the index, which
// is partial (WHERE NOT pending). A larger batch inserts its own chunks,
// and so does every write while the store holds about four times
// WithFoldAfter's threshold pending (by the process's estimate): the
// pending chunks stay few enough to scan. A query that searches the
// index also scans the pending chunks exactly (through their own partial
// index, in the same round trip) and merges the two lists, so a pending
// chunk is found as an indexed one is, at the cost of scanning them. A fold moves pending chunks into the
// index, a few hundred per transaction: in the background once the store
// holds WithFoldAfter's pending chunks (2,000; one process folds a store
// at a time, the others skip; Close cancels a fold, whose current batch
// stays pending), or at once with Fold. An AddBatch of at least
// WithBulkLoad's records (1,000) and at least as many as the store holds
// (loading a new store, say) drops the index, copies its rows and builds
// the index again over every chunk in its transaction
// (BenchmarkStores/postgres-batch). With exact=1 there is no index and
// nothing is pending: to load many records in smaller batches, open with
// exact=1 (the load then runs at the speed of COPY), and open without it
// afterwards, which builds the index over what is there
// (BenchmarkStores/postgres-bulk). Load does that for an import in
// batches: when its records are at least as many as the store holds, it
// drops the index and the B-tree indexes of the postings and chunks
// tables (a B-tree insert per term of every record was two thirds of a
// batch's time), commits batch after batch without them and builds them
// once at the end (the next Open builds those a load that died left
// dropped, listed in deferred_indexes). The builds run with
// WithMaintenanceWorkMem (1 GB): PostgreSQL's default of 64 MB holds the
// graph of some 25,000 chunks, and a build that does not fit is several
// times slower.
//
// # URL
//
//	postgres://agent:pw@db.example:5432/memory?sslmode=require&schema=team_a&exact=0&index_after=20000
//
// schema, exact and index_after (WithIndexAfter; the URL's wins over the
// option) are agentmem's; every other parameter is pgx's (libpq keywords,
// pool_max_conns, server settings).
package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmem/agentmem/chunk"
	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/internal/errs"
	"github.com/agentmem/agentmem/internal/pgpool"
	"github.com/agentmem/agentmem/internal/recordid"
	"github.com/agentmem/agentmem/internal/redact"
	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/engine"
	"github.com/agentmem/agentmem/memory/internal/fact"
	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/pgvector"
)

// Errors besides memory's shared ones: they are vdb/pgvector's, so one
// errors.Is covers both.
var (
	// ErrUnavailable: the server could not be reached (down, wrong host,
	// unknown database, authentication refused) or the connection was lost
	// during a call. Nothing of a failed write was stored (unless the
	// connection broke during COMMIT); retrying is safe, since a record
	// with an id replaces itself.
	ErrUnavailable = pgvector.ErrUnavailable
	// ErrNoExtension: the server lacks pgvector, or the database lacks the
	// extension and the user may not create it. The error says what to do.
	ErrNoExtension = pgvector.ErrNoExtension
)

// Memory is a long-term memory in PostgreSQL. It implements memory.Memory,
// memory.Records, memory.Querier and memory.Lister, and is safe for
// concurrent use; any number of Memory values, in any number of processes,
// may share one store.
type Memory struct {
	pool   *pgxpool.Pool
	dsn    string // without the password, for errors
	schema string
	emb    embed.Embedder
	dim    int
	sparse bool // the chunks hold sparsevec, not vector (sparse.go)
	tok    keyword.Tokenizer
	opts   options
	closed atomic.Bool

	// The background fold (fold.go); nil without one.
	foldCancel   context.CancelFunc
	foldSignal   chan struct{}
	foldDone     chan struct{}
	sincePending atomic.Int64 // pending chunks written since the fold last counted
	// pendingEst estimates the table's pending chunks: the fold's last
	// count (or 0 after a fold) plus what this process wrote pending
	// since. Past pendingCap, writes go into the index.
	pendingEst atomic.Int64
	// indexed is whether this process last found the HNSW index
	// (index.go); sinceIndexCheck counts the records written without it
	// since the store's size was last checked.
	indexed         atomic.Bool
	sinceIndexCheck atomic.Int64
	indexCheckedAt  atomic.Int64 // UnixNano of the last check
	// foldSkips counts the background folds that found the fold lock
	// held by another session and skipped (tests wait for one).
	foldSkips atomic.Int64
	// caches keep what searches read of each namespace (cache.go).
	caches caches
	// pairs holds a place for each view that runs its vector path on a
	// second connection (View): half the pool's connections.
	pairs chan struct{}
	// vecs keep small namespaces' vectors in process (vectors.go).
	vecs vectorCaches
}

var (
	_ memory.Memory  = (*Memory)(nil)
	_ memory.Records = (*Memory)(nil)
	_ memory.Querier = (*Memory)(nil)
	_ memory.Lister  = (*Memory)(nil)
)

// Open opens the store at url (a postgres:// URL, see the package
// documentation) for embedder emb, creating it with WithCreate. It checks
// the server, the vector extension (creating it when the user may), the
// schema version and the manifest before it returns. Errors: a bad URL or
// option wraps memory.ErrInvalidArgument; a server that cannot be reached
// ErrUnavailable; no pgvector ErrNoExtension; no store (without
// WithCreate) fs.ErrNotExist; a newer schema memory.ErrVersion; another
// embedder memory.ErrEmbedderMismatch. Each says what to do, and none
// holds the URL's password.
func Open(ctx context.Context, url string, emb embed.Embedder, opts ...Option) (*Memory, error) {
	m, err := open(ctx, url, emb, opts)
	return m, redact.Error(err, url)
}

func open(ctx context.Context, url string, emb embed.Embedder, opts []Option) (*Memory, error) {
	if emb == nil {
		return nil, fmt.Errorf("postgres: %w: nil embedder", errs.InvalidArgument)
	}
	o := defaultOptions()
	if err := o.apply(opts); err != nil {
		return nil, err
	}
	pc, up, err := parseURL(url)
	if err != nil {
		return nil, err
	}
	schema := up.schema
	o.exact = o.exact || up.exact
	if up.indexAfter >= 0 {
		o.indexAfter = up.indexAfter
	}
	pc.ConnConfig.RuntimeParams["search_path"] = schema + ", public"
	dim, err := embed.Dimension(ctx, emb)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	tok := o.tokenizer
	if tok == nil {
		if tok, err = keyword.NewTokenizer(); err != nil {
			return nil, fmt.Errorf("postgres: keyword tokenizer: %w", err)
		}
	}
	if o.engine, err = engine.New(emb, tok, o.ranking...); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	m := &Memory{dsn: pgvector.RedactedDSN(pc), schema: schema, emb: emb, dim: dim, tok: tok, opts: o}
	m.pool, err = pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, m.wrap(ctx, "connect", err)
	}
	m.pairs = make(chan struct{}, pc.MaxConns/2)
	m.caches.filling = make(chan struct{}, 1)
	if !o.noBackground { // WithoutBackgroundReads: background starts nothing
		m.vecs.ctx, m.vecs.cancel = context.WithCancel(context.Background())
	}
	m.vecs.records, m.vecs.chunks = vectorCacheRecords, o.vectorCache
	if err := m.init(ctx); err != nil {
		m.vecs.close()
		m.pool.Close()
		return nil, err
	}
	if !m.opts.exact && m.opts.foldAfter > 0 {
		m.startFolder()
	}
	return m, nil
}

func (m *Memory) init(ctx context.Context) error {
	if err := m.pool.Ping(ctx); err != nil {
		return m.wrap(ctx, "connect", err)
	}
	if err := pgvector.EnsureExtension(ctx, m.pool); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if err := m.migrate(ctx, m.opts.create); err != nil {
		return err
	}
	if err := m.readVecType(ctx); err != nil {
		return err
	}
	// Indexes a load dropped and did not build again (it failed, or its
	// process ended).
	if err := m.buildDeferred(ctx); err != nil {
		return m.wrap(ctx, "build indexes a load dropped", err)
	}
	if err := m.packTails(ctx); err != nil {
		return err
	}
	// Built over the rows already there when missing and due (faster
	// than growing it one insert at a time after a bulk load with
	// exact=1).
	return m.indexIfDue(ctx)
}

// createIndex creates the HNSW index over the chunks that are not pending
// when it is missing, with the session's maintenance_work_mem set for the transaction.
func (m *Memory) createIndex(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, fmt.Sprintf(`SET LOCAL maintenance_work_mem = '%dMB'`, m.opts.maintenanceMem)); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, hnswIndexSQL(m.indexExpr(), false))
	return err
}

// Schema returns the PostgreSQL schema that holds the store.
func (m *Memory) Schema() string { return m.schema }

// Pool returns the connection pool (for administration and tests).
func (m *Memory) Pool() *pgxpool.Pool { return m.pool }

// Close stops the background fold (cancelling a fold in progress, whose
// chunks stay pending) and closes the connection pool; it is idempotent,
// and other methods return memory.ErrClosed afterwards. Nothing needs
// flushing: every acknowledged write is committed.
func (m *Memory) Close() error {
	if m.closed.Swap(true) {
		return nil
	}
	m.stopFolder()
	m.vecs.close()
	m.pool.Close()
	return nil
}

// wrap turns a driver error into the package's.
func (m *Memory) wrap(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	if m.closed.Load() {
		return fmt.Errorf("postgres: %s: %w (%v)", op, errs.Closed, err)
	}
	return fmt.Errorf("postgres: %w", pgvector.WrapError(ctx, m.dsn, op, err))
}

func (m *Memory) check(ctx context.Context) error {
	if m.closed.Load() {
		return fmt.Errorf("postgres: %w", errs.Closed)
	}
	return ctx.Err()
}

// acquire takes a connection with pgvector's types registered.
func (m *Memory) acquire(ctx context.Context) (*pgxpool.Conn, error) {
	return pgpool.Acquire(ctx, m.pool)
}

// Len returns the number of stored records (0 when the server cannot be
// reached; Counts tells that apart).
func (m *Memory) Len() int { return m.count(`SELECT count(*) FROM records`) }

// count runs a count(*) query, giving 0 when the store is closed or the
// server cannot be reached within lookupTimeout.
func (m *Memory) count(sql string) int {
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	var n int
	if m.closed.Load() || m.pool.QueryRow(ctx, sql).Scan(&n) != nil {
		return 0
	}
	return n
}

// Get returns the record with the given id and whether it is stored (false
// also when the server cannot be reached; GetContext tells that apart).
func (m *Memory) Get(id string) (memory.Record, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	r, ok, err := m.GetContext(ctx, id)
	if err != nil {
		return memory.Record{}, false
	}
	return r, ok
}

// recordColumns are a record's columns, from records r joined with
// namespaces n, in the order scanRecord reads them.
const recordColumns = `r.id, r.text, r.time, n.name, r.speaker, r.tags, ` + factColumns

// scanRecord reads recordColumns into r, then the row's further columns
// into more; times come back in UTC and no tags as nil, as stored.
func scanRecord(row pgx.Row, r *memory.Record, more ...any) error {
	var f factScan
	if err := row.Scan(slices.Concat([]any{&r.ID, &r.Text, &r.Time, &r.Namespace, &r.Speaker, &r.Tags}, f.dest(), more)...); err != nil {
		return err
	}
	f.into(r)
	r.Time = r.Time.UTC()
	if len(r.Tags) == 0 {
		r.Tags = nil
	}
	return nil
}

// Update stores segment in DefaultNamespace with a generated id. It
// implements memory.Memory. A segment is a round of conversation, an
// event: one that repeats an earlier one's text is stored again (Add of a
// record without an ID is not).
func (m *Memory) Update(ctx context.Context, segment string) error {
	_, err := m.Add(ctx, memory.Record{ID: recordid.New(), Text: segment})
	return err
}

// Search runs the memory's default mode over every namespace, asked now:
// its time references ("what did we talk about yesterday?") count back
// from the clock (memory.Query.AsOf), as an agent asking during a
// conversation means them. It implements memory.Memory.
func (m *Memory) Search(ctx context.Context, question string) ([]memory.Hit, error) {
	return m.Query(ctx, memory.Query{Text: question, Mode: m.opts.mode, AsOf: time.Now()})
}

// Add stores rec and returns its id; the record is committed and
// searchable (by every process) when Add returns. A record without an ID
// is a fact, stored once: if a current record of its namespace holds the
// same text (memory.NormalText), Add returns that record's id and stores
// nothing new (Remember says which happened).
func (m *Memory) Add(ctx context.Context, rec memory.Record) (string, error) {
	ids, err := m.AddBatch(ctx, []memory.Record{rec})
	if err != nil {
		return "", err
	}
	return ids[0], nil
}

// prepared is a validated, chunked, embedded and tokenized record.
type prepared struct {
	rec    memory.Record
	chunks []chunk.Chunk
	vecs   [][]float32 // normalised
	// vecBin are vecs in the binary form of the embedding column
	// (appendVector), as a write copies them.
	vecBin  [][]byte
	textLen int
	// termList and tfs are its distinct terms in byte order and their
	// counts (the row's terms and tfs: termArrays); textKey is fact.Key
	// of the text. prepare
	// computes them, which Load does for a batch while the one before it
	// is written.
	termList []string
	tfs      []int32
	textKey  int64
	// dedup: the record came without an ID, so it is a fact that is not
	// stored twice (Remember); dupOf is the stored record it turned out to
	// repeat, set when it commits.
	dedup bool
	dupOf string
	// nearOf is the near-duplicate the record merges into, if it is
	// still current when it commits (engine.NearMerge); similar are the
	// near-duplicates found for it.
	nearOf  string
	similar []memory.Similar
}

const embedBatch = 512

// AddBatch stores recs in order, all or nothing, in one transaction, and
// returns their ids. Validation and embedding come first; on any error
// nothing is stored. A record whose id is stored replaces it; when recs
// repeat an id the last one is stored.
func (m *Memory) AddBatch(ctx context.Context, recs []memory.Record) ([]string, error) {
	outs, err := m.Remember(ctx, recs...)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(outs))
	for i, o := range outs {
		ids[i] = o.ID
	}
	return ids, nil
}

// addBatch is AddBatch, which returns the prepared records: what each
// write did (prepared.outcome).
func (m *Memory) addBatch(ctx context.Context, recs []memory.Record) ([]prepared, error) {
	return m.addBatchMode(ctx, recs, false, nil)
}

// addBatchMode is addBatch; load writes the chunks as Load's batches do:
// neither pending nor rebuilding the index (Load has dropped it). lt, if
// not nil, is the load's tails (loadTails): the batch packs its
// namespaces' tails only as a load does.
func (m *Memory) addBatchMode(ctx context.Context, recs []memory.Record, load bool, lt *loadTails) ([]prepared, error) {
	preps, release, err := m.prepareBatch(ctx, recs)
	if err != nil || len(preps) == 0 {
		return nil, err
	}
	defer release()
	return m.writeBatch(ctx, preps, load, lt)
}

// batchBufs are the buffers of a prepared batch's vectors and of their
// binary form, which prepareBatch takes from batchBufPool and its release
// gives back: a load's batches allocated 90 MB a 10,000 records in them.
type batchBufs struct {
	vecs []float32
	bin  []byte
}

var batchBufPool = sync.Pool{New: func() any { return new(batchBufs) }}

// maxPooledBatchBytes is the largest buffer batchBufPool keeps.
const maxPooledBatchBytes = 64 << 20

// prepareBatch prepares recs (prepare) and embeds their chunks: the part
// of a write that reads nothing from the store, which Load runs for its
// next batch while the server writes the current one. Once the batch is
// written, release hands its buffers back: the prepared records' vecs and
// vecBin are then nil.
func (m *Memory) prepareBatch(ctx context.Context, recs []memory.Record) (preps []prepared, release func(), err error) {
	if err := m.check(ctx); err != nil {
		return nil, nil, err
	}
	if len(recs) == 0 {
		return nil, func() {}, nil
	}
	preps = make([]prepared, len(recs))
	var texts []string
	tc := termCounter{}
	for i, r := range recs {
		if err := m.prepare(r, &preps[i], tc); err != nil {
			if len(recs) > 1 {
				return nil, nil, fmt.Errorf("postgres: record %d: %w", i, err)
			}
			return nil, nil, fmt.Errorf("postgres: %w", err)
		}
		header := m.header(&preps[i].rec)
		for _, c := range preps[i].chunks {
			texts = append(texts, header+c.Text)
		}
	}
	bufs := batchBufPool.Get().(*batchBufs)
	release = func() {
		for i := range preps {
			preps[i].vecs, preps[i].vecBin = nil, nil
		}
		if 4*cap(bufs.vecs) <= maxPooledBatchBytes && cap(bufs.bin) <= maxPooledBatchBytes {
			batchBufPool.Put(bufs)
		}
	}
	defer func() {
		if err != nil {
			release()
		}
	}()
	// The batch's vectors in one buffer when the embedder writes into
	// one; they are the caller's either way (embed.Embedder), so they
	// are normalised in place.
	var buf []float32
	if _, ok := m.emb.(embed.IntoEmbedder); ok {
		n := len(texts) * m.dim
		if cap(bufs.vecs) < n {
			bufs.vecs = make([]float32, n)
		}
		buf = bufs.vecs[:n]
	}
	vecs, err := embed.EmbedAllInto(ctx, m.emb, buf, texts, embedBatch)
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: %w", err)
	}
	// Their binary form (appendVector) in one buffer too: each vector's
	// is a slice of it (of an earlier array, once it grew).
	size := 4 + 4*m.dim
	if m.sparse {
		size = 12 + 2*m.dim // a guess: a quarter of the elements
	}
	if cap(bufs.bin) < len(texts)*size {
		bufs.bin = make([]byte, 0, len(texts)*size)
	}
	bin := bufs.bin[:0]
	k := 0
	for i := range preps {
		n := len(preps[i].chunks)
		preps[i].vecs = vecs[k : k+n : k+n]
		preps[i].vecBin = make([][]byte, n)
		for j, v := range preps[i].vecs {
			if err := vdb.CheckVector(v, m.dim); err != nil {
				return nil, nil, fmt.Errorf("postgres: embedder %s, text %q: %w", m.emb.Name(), texts[k+j], err)
			}
			if err := vdb.Normalize(v, v); err != nil {
				return nil, nil, fmt.Errorf("postgres: embedder %s, text %q: %w", m.emb.Name(), texts[k+j], err)
			}
			at := len(bin)
			bin = appendVector(bin, v, m.sparse)
			preps[i].vecBin[j] = bin[at:len(bin):len(bin)]
		}
		k += n
	}
	bufs.bin = bin
	return preps, release, nil
}

// writeBatch writes prepared records (prepareBatch) as addBatchMode does:
// it looks for their near duplicates among the stored records and commits
// them.
func (m *Memory) writeBatch(ctx context.Context, preps []prepared, load bool, lt *loadTails) ([]prepared, error) {
	if err := m.check(ctx); err != nil {
		return nil, err
	}
	if err := m.near(ctx, preps); err != nil {
		return nil, err
	}
	pending, err := m.commit(ctx, preps, load, lt)
	if err != nil {
		return nil, err
	}
	m.wrotePending(pending)
	m.caches.wrote(preps)
	if !load {
		m.wroteUnindexed(ctx, len(preps))
	}
	return preps, nil
}

// prepare validates rec, fills in its defaults, chunks and tokenizes it
// (counting its terms with tc). It mirrors memory/longterm's prepare.
func (m *Memory) prepare(rec memory.Record, out *prepared, tc termCounter) error {
	for _, s := range append([]string{rec.ID, rec.Text, rec.Namespace, rec.Speaker}, rec.Tags...) {
		if !utf8.ValidString(s) {
			return fmt.Errorf("%w: invalid UTF-8 in record %q", errs.InvalidArgument, strings.ToValidUTF8(rec.ID, "\uFFFD"))
		}
		if strings.IndexByte(s, 0) >= 0 {
			// PostgreSQL text cannot hold NUL.
			return fmt.Errorf("%w: NUL byte in record %q", errs.InvalidArgument, strings.ToValidUTF8(rec.ID, "\uFFFD"))
		}
	}
	if !engine.HasWord(rec.Text) {
		if strings.TrimSpace(rec.Text) == "" {
			return fmt.Errorf("%w (record %q)", errs.EmptyInput, rec.ID)
		}
		return fmt.Errorf("%w: record %q has no letter or digit to index", errs.EmptyInput, rec.ID)
	}
	if rec.Namespace == "" {
		rec.Namespace = DefaultNamespace
	}
	if rec.Time.IsZero() {
		rec.Time = time.Now()
	}
	// PostgreSQL keeps microseconds.
	rec.Time = rec.Time.UTC().Truncate(time.Microsecond)
	for _, t := range []*time.Time{&rec.ValidFrom, &rec.ValidUntil} {
		if !t.IsZero() {
			*t = t.UTC().Truncate(time.Microsecond)
		}
	}
	if err := fact.Check(&rec); err != nil {
		return err
	}
	if rec.ID == "" {
		out.dedup = true
		rec.ID = recordid.New()
	}
	rec.Tags = slices.Clone(rec.Tags)
	out.rec = rec
	for _, c := range chunk.Split(rec.Text, m.opts.chunkOpts) {
		if engine.HasWord(c.Text) {
			out.chunks = append(out.chunks, c)
		}
	}
	if len(out.chunks) == 0 {
		out.chunks = []chunk.Chunk{{Text: strings.TrimSpace(rec.Text), Start: 0, End: len(rec.Text)}}
	}
	toks := m.tok.Tokens(m.keywordText(&rec))
	out.textLen = len(toks)
	out.termList, out.tfs = tc.arrays(toks)
	out.textKey, _ = fact.Key(rec.Text)
	return nil
}

func termCounts(toks []string) map[string]int {
	tf := make(map[string]int, len(toks))
	for _, t := range toks {
		tf[t]++
	}
	return tf
}

// termArrays returns the distinct terms of toks in byte order and each
// one's count: a record's row's terms and tfs.
func termArrays(toks []string) ([]string, []int32) { return termCounter{}.arrays(toks) }

// termCounter is termArrays' map, which a batch's records reuse (a map a
// record was 50 MB of a 10,000-record load's allocations).
type termCounter map[string]int32

// arrays is termArrays, counting in c.
func (c termCounter) arrays(toks []string) ([]string, []int32) {
	clear(c)
	for _, t := range toks {
		c[t]++
	}
	terms := make([]string, 0, len(c))
	for t := range c {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	tfs := make([]int32, len(terms))
	for i, t := range terms {
		tfs[i] = c[t]
	}
	return terms, tfs
}

// keywordText is what the keyword path cuts r's terms from: its header
// (WithHeader) and its text.
func (m *Memory) keywordText(r *memory.Record) string { return m.header(r) + r.Text }

func (m *Memory) header(r *memory.Record) string {
	if m.opts.header == nil {
		return ""
	}
	return m.opts.header(*r)
}

// List returns the records that match opts, oldest first (by Time, then
// id), and how many match before Offset and Limit. It implements
// memory.Lister.
func (m *Memory) List(ctx context.Context, opts memory.ListOptions) ([]memory.Record, int, error) {
	if opts.Offset < 0 || opts.Limit < 0 {
		return nil, 0, fmt.Errorf("postgres: %w: offset %d, limit %d", errs.InvalidArgument, opts.Offset, opts.Limit)
	}
	if err := m.check(ctx); err != nil {
		return nil, 0, err
	}
	where := []string{"true"}
	var args []any
	arg := func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }
	if opts.Namespace != "" {
		where = append(where, "n.name = "+arg(opts.Namespace))
	}
	if !opts.From.IsZero() {
		where = append(where, "r.time >= "+arg(opts.From))
	}
	if !opts.To.IsZero() {
		where = append(where, "r.time < "+arg(opts.To))
	}
	from := ` FROM records r JOIN namespaces n ON n.id = r.ns WHERE ` + strings.Join(where, " AND ")
	var total int
	if err := m.pool.QueryRow(ctx, `SELECT count(*)`+from, args...).Scan(&total); err != nil {
		return nil, 0, m.wrap(ctx, "list", err)
	}
	limit := "ALL"
	if opts.Limit > 0 {
		limit = fmt.Sprint(opts.Limit)
	}
	rows, err := m.pool.Query(ctx, `SELECT `+recordColumns+from+
		` ORDER BY r.time, r.id OFFSET `+fmt.Sprint(opts.Offset)+` LIMIT `+limit, args...)
	if err != nil {
		return nil, 0, m.wrap(ctx, "list", err)
	}
	defer rows.Close()
	out := []memory.Record{}
	for rows.Next() {
		var r memory.Record
		if err := scanRecord(rows, &r); err != nil {
			return nil, 0, m.wrap(ctx, "list", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, m.wrap(ctx, "list", err)
	}
	return out, total, nil
}

// retryable reports whether a write transaction failed for a reason a
// retry cures (a concurrent writer of the same new id, a deadlock).
func retryable(err error) bool {
	var pe interface{ SQLState() string }
	if errors.As(err, &pe) {
		switch pe.SQLState() {
		case "23505", "40P01", "40001":
			return true
		}
	}
	return false
}

// Chunks returns the number of stored chunks (0 when the server cannot be
// reached; Counts tells that apart).
func (m *Memory) Chunks() int { return m.count(`SELECT count(*) FROM chunks`) }
