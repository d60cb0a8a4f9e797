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
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentmem/agentmem/chunk"
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

	mu        sync.RWMutex // guards the fields below
	closed    bool
	parents   map[string]*parent
	children  map[int64]childRef
	vecs      map[string]*semantic.Vectors // per namespace
	tok       keyword.Tokenizer            // the keyword path's
	nextChild int64

	// turns is the keyword path's per-namespace index of whole records
	// (turns.go), made on first use by turnIdx.
	turnsOnce sync.Once
	turns     *turnIndex

	// durable state (nil log: in memory only)
	dir     string
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

// Update stores segment as a record in DefaultNamespace with a generated id
// and the current time. It implements memory.Memory.
func (m *Memory) Update(ctx context.Context, segment string) error {
	_, err := m.Add(ctx, Record{Text: segment})
	return err
}

// Add stores rec and returns its id. When Add returns nil the record is in
// the log and synced (unless WithoutSync), and searchable.
func (m *Memory) Add(ctx context.Context, rec Record) (string, error) {
	ids, err := m.AddBatch(ctx, []Record{rec})
	if err != nil {
		return "", err
	}
	return ids[0], nil
}

// prepared is a validated record with its children, before id assignment.
type prepared struct {
	rec    Record
	chunks []chunk.Chunk
	vecs   [][]float32
	// terms are the record's indexed text (header and text) tokenized for
	// the turn index, in the parallel prepare phase, when its namespace's
	// index is built; nil otherwise (added tokenizes then, if needed).
	terms []string
	// code is vecs as the log writes them, encoded beside the other
	// records' before the commit, for a store on disk.
	code vectorCode
}

// embedBatch is how many child texts go to the embedder in one call.
const embedBatch = 512

// AddBatch stores the records in order and returns their ids. The batch is
// validated and embedded before anything is written: on a validation or
// embedding error nothing is stored (the error names the record's index). The
// batch is written to the log with one fsync (group commit).
func (m *Memory) AddBatch(ctx context.Context, recs []Record) ([]string, error) {
	if err := m.writable(); err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, nil
	}
	for i := range recs {
		if err := m.checkSize(&recs[i]); err != nil {
			if len(recs) > 1 {
				return nil, fmt.Errorf("record %d: %w", i, err)
			}
			return nil, err
		}
	}
	preps, err := m.prepareAll(ctx, recs)
	if err != nil {
		return nil, err
	}
	var texts []string
	for i := range preps {
		header := m.header(&preps[i].rec)
		for _, c := range preps[i].chunks {
			texts = append(texts, header+c.Text)
		}
	}
	buf, release := m.vecBuf(len(texts) * m.dim)
	defer release()
	vecs, err := embed.EmbedAllInto(ctx, m.emb, buf, texts, embedBatch)
	if err != nil {
		return nil, fmt.Errorf("longterm: %w", err)
	}
	for i, v := range vecs {
		if err := vdb.CheckVector(v, m.dim); err != nil {
			return nil, fmt.Errorf("longterm: embedder %s, text %q: %w", m.emb.Name(), texts[i], err)
		}
	}
	k := 0
	for i := range preps {
		n := len(preps[i].chunks)
		preps[i].vecs = vecs[k : k+n]
		k += n
	}
	if m.dir != "" {
		inParts(len(preps), len(vecs)*m.dim, func(lo, hi int) {
			var buf []byte // one buffer for the part's codes
			for i := lo; i < hi; i++ {
				start := len(buf)
				code := encodeVectors(buf, m.dim, preps[i].vecs)
				buf = code.b
				code.b = buf[start:len(buf):len(buf)]
				preps[i].code = code
			}
		})
	}
	return m.commit(ctx, preps)
}

// maxPooledFloats is the largest embedding buffer AddBatch reuses (16 MiB):
// a larger batch's vectors are allocated, and the allocation is small
// beside the batch's own work.
const maxPooledFloats = 1 << 22

// vecBufs holds *[]float32 buffers that AddBatch embeds into (when the
// embedder is an embed.IntoEmbedder) and hands back once the vectors are
// copied into the index and the log. One pool for every Memory: a program
// that opens memories for short jobs reuses them too.
var vecBufs sync.Pool

// vecBuf returns a reused buffer of n floats for a batch's vectors, and
// the function that hands it back to vecBufs, to call once nothing refers
// to the vectors (the vector index and the log copy them). It returns no
// buffer (and a release that does nothing) when the embedder cannot write
// into one or n is larger than maxPooledFloats.
func (m *Memory) vecBuf(n int) (buf []float32, release func()) {
	if _, ok := m.emb.(embed.IntoEmbedder); !ok || n > maxPooledFloats {
		return nil, func() {}
	}
	b, _ := vecBufs.Get().(*[]float32)
	if b == nil {
		b = new([]float32)
	}
	if cap(*b) < n {
		*b = make([]float32, n, min(max(n, 2*cap(*b)), maxPooledFloats))
	}
	*b = (*b)[:n]
	return *b, func() { vecBufs.Put(b) }
}

// inParts calls do on contiguous parts of [0, n), on GOMAXPROCS goroutines
// when the work (size bytes of text or vector entries) is large enough to
// pay for them.
func inParts(n, size int, do func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), n, size/parallelTurns)
	if workers <= 1 {
		do(0, n)
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { do(w*n/workers, (w+1)*n/workers) })
	}
	wg.Wait()
}

// prepareAll prepares every record; a large batch is split into contiguous
// parts prepared in parallel (chunking is a record's own business). The
// error is that of the first record that fails.
func (m *Memory) prepareAll(ctx context.Context, recs []Record) ([]prepared, error) {
	preps := make([]prepared, len(recs))
	errs := make([]error, len(recs))
	size := 0
	for i := range recs {
		size += len(recs[i].Text)
	}
	inParts(len(recs), size, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r := recs[i]
			errs[i] = m.prepare(ctx, &r, &preps[i])
		}
	})
	for i, err := range errs {
		if err != nil {
			if len(recs) > 1 {
				return nil, fmt.Errorf("record %d: %w", i, err)
			}
			return nil, err
		}
	}
	return preps, nil
}

// prepare validates rec, fills in defaults and splits it into chunks (one
// chunk, the whole text, with WithWholeRecords). Splitting checks ctx, so a
// long text can be cancelled; its size was checked before (checkSize).
func (m *Memory) prepare(ctx context.Context, rec *Record, out *prepared) error {
	for _, s := range append([]string{rec.ID, rec.Text, rec.Namespace, rec.Speaker}, rec.Tags...) {
		if !utf8.ValidString(s) {
			return fmt.Errorf("%w in record %q", ErrInvalidUTF8, strings.ToValidUTF8(rec.ID, "\uFFFD"))
		}
	}
	if !hasWord(rec.Text) {
		if strings.TrimSpace(rec.Text) == "" {
			return fmt.Errorf("%w (record %q)", ErrEmptyText, rec.ID)
		}
		return fmt.Errorf("%w: record %q has no letter or digit to index", ErrEmptyText, rec.ID)
	}
	if rec.Namespace == "" {
		rec.Namespace = DefaultNamespace
	}
	if rec.Time.IsZero() {
		rec.Time = time.Now().UTC()
	}
	if rec.ID == "" {
		var b [12]byte
		_, _ = rand.Read(b[:])
		rec.ID = hex.EncodeToString(b[:])
	}
	rec.Tags = slices.Clone(rec.Tags)
	out.rec = *rec
	if ti := m.turnIdx(); ti.built(rec.Namespace) {
		out.terms = ti.tok.Tokens(m.header(&out.rec) + out.rec.Text)
	}
	if m.opts.wholeRecord {
		out.chunks = []chunk.Chunk{{Text: rec.Text, Start: 0, End: len(rec.Text)}}
		return nil
	}
	co := chunk.Options{MaxBytes: -1} // the record's size limit is WithMaxRecordBytes'
	if m.opts.chunkOpts != nil {
		co.MinRunes, co.MaxRunes = m.opts.chunkOpts.MinRunes, m.opts.chunkOpts.MaxRunes
	}
	chunks, err := chunk.SplitContext(ctx, rec.Text, &co)
	if err != nil {
		return err
	}
	for _, c := range chunks {
		if hasWord(c.Text) {
			out.chunks = append(out.chunks, c)
		}
	}
	if len(out.chunks) == 0 {
		// Chunking dropped nothing with words in it, so this cannot happen
		// unless chunk changes; index the whole text then.
		out.chunks = []chunk.Chunk{{Text: strings.TrimSpace(rec.Text), Start: 0, End: len(rec.Text)}}
	}
	return nil
}

// hasWord reports whether s has a letter or a digit.
func hasWord(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) {
			return true
		}
	}
	return false
}

// commitReq is one AddBatch call waiting for its records to be committed.
type commitReq struct {
	ctx   context.Context
	preps []prepared
	done  chan struct{} // closed when ids and err are set
	lead  chan struct{} // closed when the call is to commit the queue
	ids   []string
	err   error
	// finished is set with done's closing, by the leader (under wmu).
	finished bool
}

// commit writes the records to the log and applies them to the indexes.
// Concurrent calls share one log write and one fsync (group commit): each
// call queues its records; one call at a time, the leader, commits every
// queued call, in queue order, and hands the lead to the first call queued
// meanwhile, if any. The others only wait for their result (they do not
// each take the writer lock to find it). Log order and index order stay
// the same, and a record is searchable only once it is durable.
func (m *Memory) commit(ctx context.Context, preps []prepared) ([]string, error) {
	req := &commitReq{ctx: ctx, preps: preps, done: make(chan struct{}), lead: make(chan struct{})}
	m.qmu.Lock()
	m.queue = append(m.queue, req)
	lead := !m.committing
	m.committing = true
	m.qmu.Unlock()
	if !lead {
		select {
		case <-req.done: // committed by the leader
			return req.ids, req.err
		case <-req.lead:
		}
	}
	m.wmu.Lock()
	defer m.handOff()
	m.qmu.Lock()
	batch := m.queue
	m.queue = nil
	m.qmu.Unlock()
	// A panic (a backend's bug, say) must not leave the calls this one
	// commits for waiting forever: they fail, the memory refuses writes
	// from then on, and the panic goes on up this call's stack.
	defer func() {
		if p := recover(); p != nil {
			err := fmt.Errorf("longterm: a write panicked (%v); writes are refused until the memory is reopened", p)
			m.failed.Store(&err)
			for _, r := range batch {
				if !r.finished {
					r.finished, r.err = true, err
					close(r.done)
				}
			}
			panic(p)
		}
	}()
	m.commitLocked(batch)
	m.maybeSnapshot(ctx)
	return req.ids, req.err
}

// Err returns why the memory refuses writes, or nil: a write that
// panicked (a bug, in a backend say) may have left part of itself in the
// indexes, so from then on writes and snapshots fail with this error, and
// reads go on. Reopening the store replays its log, which holds every
// acknowledged write. A server reports it as unhealthy.
func (m *Memory) Err() error {
	if p := m.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// handOff ends a leader's turn: it releases the writer lock and passes the
// lead to the first call queued meanwhile, if any.
func (m *Memory) handOff() {
	m.wmu.Unlock()
	m.qmu.Lock()
	defer m.qmu.Unlock()
	if len(m.queue) > 0 {
		close(m.queue[0].lead)
	} else {
		m.committing = false
	}
}

// payloadSize is an upper bound of the size of p's log payload
// (appendAdd): its strings and vectors plus room for the varints.
func payloadSize(p *prepared) int {
	r := &p.rec
	n := 64 + len(r.ID) + len(r.Namespace) + len(r.Speaker) + len(r.Text) + len(p.code.b) + len(p.chunks)*(3*binary.MaxVarintLen64+1)
	for _, t := range r.Tags {
		n += binary.MaxVarintLen64 + len(t)
	}
	for _, c := range p.chunks {
		n += binary.MaxVarintLen64 + len(c.Text) // a child whose text is not its span's
	}
	return n
}

// commitLocked commits the queued calls in batch with one log append and
// one fsync, and sets each call's result. m.wmu must be held.
func (m *Memory) commitLocked(batch []*commitReq) {
	finish := func(r *commitReq, ids []string, err error) {
		r.ids, r.err, r.finished = ids, err, true
		close(r.done)
	}
	if err := m.Err(); err != nil {
		for _, r := range batch {
			finish(r, nil, err)
		}
		return
	}
	m.mu.RLock()
	closed, next := m.closed, m.nextChild
	m.mu.RUnlock()
	type part struct {
		r        *commitReq
		adds     []*addRecord
		payloads [][]byte
		next     int64 // next child id after the part
	}
	var parts []part
	// The log payloads of the whole batch share one buffer, sized up front:
	// appending a record's vectors float by float into a growing slice
	// cost more than the rest of the encoding.
	var buf []byte
	if m.log != nil {
		size := 0
		for _, r := range batch {
			for i := range r.preps {
				size += payloadSize(&r.preps[i])
			}
		}
		buf = make([]byte, 0, size)
	}
	for _, r := range batch {
		if closed {
			finish(r, nil, ErrClosed)
			continue
		}
		if err := r.ctx.Err(); err != nil {
			finish(r, nil, err)
			continue
		}
		pt := part{r: r, adds: make([]*addRecord, len(r.preps))}
		for i := range r.preps {
			p := &r.preps[i]
			a := &addRecord{rec: p.rec, dim: m.dim, children: make([]logChild, len(p.chunks))}
			for j, c := range p.chunks {
				a.children[j] = logChild{id: next, start: c.Start, end: c.End, text: c.Text}
				next++
			}
			pt.adds[i] = a
			if m.log != nil {
				start := len(buf)
				buf = appendAdd(buf, &a.rec, a.children, p.code)
				pt.payloads = append(pt.payloads, buf[start:len(buf):len(buf)])
			}
		}
		pt.next = next
		parts = append(parts, pt)
	}
	// Append every part, then apply them in order. A part that the indexes
	// refuse (e.g. a Faiss IVF index that cannot train on so few vectors)
	// is undone in the indexes and cut from the log with every part after
	// it; the later parts are appended again. So an error means the part
	// is stored nowhere, and success that it is durable and searchable.
	for len(parts) > 0 {
		offs := make([][]int64, len(parts))
		if m.log != nil {
			var all [][]byte
			for _, pt := range parts {
				all = append(all, pt.payloads...)
			}
			flat, err := m.log.append(all, m.opts.sync)
			if err != nil {
				for _, pt := range parts {
					finish(pt.r, nil, err)
				}
				return
			}
			k := 0
			for i, pt := range parts {
				offs[i] = flat[k : k+len(pt.adds)]
				k += len(pt.adds)
			}
		}
		rest := []part(nil)
		for i, pt := range parts {
			o := offs[i]
			if o == nil {
				o = make([]int64, len(pt.adds))
				for j := range o {
					o[j] = -1
				}
			}
			ids, err := m.applyAll(pt.r.ctx, pt.adds, o, pt.next, pt.r.preps)
			if err == nil {
				finish(pt.r, ids, nil)
				continue
			}
			if m.log != nil {
				if terr := m.log.truncate(o[0]); terr != nil {
					m.log.broken = terr
					err = fmt.Errorf("%w; cutting it from the log failed too, so the log may hold it: %v", err, terr)
					for _, later := range parts[i+1:] {
						finish(later.r, nil, fmt.Errorf("longterm: not stored: %w", terr))
					}
					finish(pt.r, nil, err)
					return
				}
			}
			finish(pt.r, nil, err)
			rest = parts[i+1:]
			break
		}
		parts = rest
	}
}

// applyAll applies one AddBatch call's records to the indexes. If one
// fails, the ones before it are undone (records they replaced are restored
// from their log frames) and the error is returned: the call then changed
// nothing in the indexes.
func (m *Memory) applyAll(ctx context.Context, adds []*addRecord, offs []int64, next int64, preps []prepared) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ids, ok := m.applyNew(ctx, adds, offs, preps); ok {
		m.nextChild = max(m.nextChild, next)
		m.applied += len(adds)
		return ids, nil
	}
	ids := make([]string, len(adds))
	replaced := make([]*parent, len(adds))
	for i, a := range adds {
		replaced[i] = m.parents[a.rec.ID]
		if err := m.apply(ctx, a, preps[i].vecs, offs[i]); err != nil {
			err = fmt.Errorf("longterm: index record %q: %w", a.rec.ID, err)
			if uerr := m.undo(ctx, adds[:i+1], replaced[:i+1]); uerr != nil {
				err = fmt.Errorf("%w; undoing the batch's earlier records failed: %v", err, uerr)
			}
			return nil, err
		}
		ids[i] = a.rec.ID
	}
	m.nextChild = max(m.nextChild, next)
	m.applied += len(adds)
	return ids, nil
}

// parallelTurns is the text size of a batch from which applyNew indexes
// its keyword part on a goroutine of its own, beside the vector adds, and
// the size of text from which prepareAll gives a goroutine a share.
const parallelTurns = 4 << 10

// applyNew is applyAll's fast path for the common batch, records with new
// ids: each namespace's vectors go to its index in one Add (not one per
// record), while the keyword index takes the records, in order, on
// another goroutine when the batch is large. It reports false, having
// changed nothing, when the batch replaces records or an index refuses
// it; applyAll then applies the records one by one, which undoes and
// names the failing record. m.mu must be held for writing.
func (m *Memory) applyNew(ctx context.Context, adds []*addRecord, offs []int64, preps []prepared) ([]string, bool) {
	type nsAdd struct {
		ns   string
		ids  []int64
		vecs [][]float32
	}
	var groups []nsAdd
	seen := make(map[string]struct{}, len(adds))
	size := 0
	for i, a := range adds {
		if _, dup := seen[a.rec.ID]; dup {
			return nil, false
		}
		if _, old := m.parents[a.rec.ID]; old {
			return nil, false
		}
		seen[a.rec.ID] = struct{}{}
		size += len(a.rec.Text)
		g := slices.IndexFunc(groups, func(g nsAdd) bool { return g.ns == a.rec.Namespace })
		if g < 0 {
			groups = append(groups, nsAdd{ns: a.rec.Namespace})
			g = len(groups) - 1
		}
		for _, c := range a.children {
			groups[g].ids = append(groups[g].ids, c.id)
		}
		groups[g].vecs = append(groups[g].vecs, preps[i].vecs...)
	}
	ps := make([]*parent, len(adds))
	for i, a := range adds {
		ps[i] = &parent{rec: a.rec, children: a.children, off: offs[i]}
	}
	var done chan struct{}
	ti := m.turnIdx()
	indexTurns := func() {
		for i, p := range ps {
			ti.added(p, m.header(&p.rec), preps[i].terms)
		}
	}
	if size >= parallelTurns {
		done = make(chan struct{})
		go func() {
			defer close(done)
			indexTurns()
		}()
	}
	for gi, g := range groups {
		db, err := m.namespaceDB(ctx, g.ns)
		if err == nil {
			err = db.Add(ctx, g.ids, g.vecs)
		}
		if err == nil {
			continue
		}
		// Take back what this call added, so that applyAll starts from
		// where it was.
		if done != nil {
			<-done
			for i := len(ps) - 1; i >= 0; i-- {
				ti.removed(ps[i], m.header(&ps[i].rec))
			}
		}
		for _, g := range groups[:gi+1] {
			if db := m.vecs[g.ns]; db != nil {
				_, _ = db.Delete(ctx, g.ids...)
			}
		}
		return nil, false
	}
	ids := make([]string, len(adds))
	for i, p := range ps {
		for j, c := range p.children {
			m.children[c.id] = childRef{p: p, i: j}
		}
		m.parents[p.rec.ID] = p
		ids[i] = p.rec.ID
	}
	if done != nil {
		<-done
	} else {
		indexTurns()
	}
	return ids, true
}

// undo takes the records adds out of the indexes, last first, and puts
// back the records they replaced. m.mu must be held for writing.
func (m *Memory) undo(ctx context.Context, adds []*addRecord, replaced []*parent) error {
	var errs []error
	for i := len(adds) - 1; i >= 0; i-- {
		id := adds[i].rec.ID
		if p := m.parents[id]; p != nil && p != replaced[i] {
			if err := m.remove(ctx, p); err != nil {
				errs = append(errs, err)
			}
		}
		old := replaced[i]
		if old == nil || m.parents[id] == old {
			continue
		}
		if err := m.restore(ctx, old); err != nil {
			errs = append(errs, fmt.Errorf("restore %q: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// restore re-applies a parent from its log frame (which carries its
// vectors). m.mu must be held for writing.
func (m *Memory) restore(ctx context.Context, p *parent) error {
	if m.log == nil || p.off < 0 {
		return errors.New("no log to restore it from")
	}
	payload, err := m.log.readFrame(p.off)
	if err != nil {
		return err
	}
	typ, body, err := decodeRecord(payload)
	if err != nil {
		return err
	}
	if !isAdd(typ) {
		return fmt.Errorf("%w: frame at %d is not an add", ErrCorrupt, p.off)
	}
	a, err := decodeAdd(typ, body)
	if err != nil {
		return err
	}
	vecs := make([][]float32, len(a.children))
	for i := range vecs {
		vecs[i] = a.vecs[i*a.dim : (i+1)*a.dim : (i+1)*a.dim]
	}
	return m.apply(ctx, a, vecs, p.off)
}

// maybeSnapshot writes a snapshot when WithSnapshotEvery's count of
// records since the last one is reached, so that a process that is killed
// rather than closed does not leave a long log tail to replay (and
// re-tokenise) on the next Open. m.wmu must be held; searches go on. A
// failure is logged, not returned: the records are safe in the log.
func (m *Memory) maybeSnapshot(ctx context.Context) {
	if m.log == nil || m.opts.snapshotEvery <= 0 || m.applied < m.opts.snapshotEvery {
		return
	}
	if err := m.snapshotLocked(ctx, false); err != nil {
		m.opts.logger.Warn("longterm: automatic snapshot failed", "dir", m.dir, "err", err)
	}
}

// apply adds a record (replacing one with the same id) to the in-memory
// indexes. m.mu must be held for writing.
func (m *Memory) apply(ctx context.Context, a *addRecord, vecs [][]float32, off int64) error {
	if old, ok := m.parents[a.rec.ID]; ok {
		if err := m.remove(ctx, old); err != nil {
			return err
		}
	}
	p := &parent{rec: a.rec, children: a.children, off: off}
	db, err := m.namespaceDB(ctx, p.rec.Namespace)
	if err != nil {
		return err
	}
	ids := make([]int64, len(p.children))
	for i, c := range p.children {
		ids[i] = c.id
	}
	if err := db.Add(ctx, ids, vecs); err != nil {
		return err
	}
	header := m.header(&p.rec)
	for i, c := range p.children {
		m.children[c.id] = childRef{p: p, i: i}
		if c.id >= m.nextChild {
			m.nextChild = c.id + 1
		}
	}
	m.parents[p.rec.ID] = p
	m.turnIdx().added(p, header, nil)
	return nil
}

// header returns the text indexed before each of r's children.
func (m *Memory) header(r *Record) string {
	if m.opts.header == nil {
		return ""
	}
	return m.opts.header(*r)
}

// remove deletes a parent and its children from the indexes. m.mu must be
// held for writing.
func (m *Memory) remove(ctx context.Context, p *parent) error {
	ids := make([]int64, len(p.children))
	for i, c := range p.children {
		ids[i] = c.id
		delete(m.children, c.id)
	}
	if db := m.vecs[p.rec.Namespace]; db != nil {
		if _, err := db.Delete(ctx, ids...); err != nil {
			return err
		}
	}
	delete(m.parents, p.rec.ID)
	m.turnIdx().removed(p, m.header(&p.rec))
	return nil
}

// namespaceDB returns the vector index of namespace ns, opening it through
// the backend registry on first use. m.mu must be held for writing.
func (m *Memory) namespaceDB(ctx context.Context, ns string) (*semantic.Vectors, error) {
	if db := m.vecs[ns]; db != nil {
		return db, nil
	}
	db, err := semantic.OpenVectors(ctx, m.opts.backend, vdb.Config{Dim: m.dim, Namespace: ns})
	if err != nil {
		return nil, fmt.Errorf("longterm: namespace %q: %w", ns, err)
	}
	m.vecs[ns] = db
	return db, nil
}

// Forget removes the record with the given id and its children from both
// indexes and, for a memory on disk, appends a forget record to the log
// (Compact then drops both from the file). An unknown id is ErrNotFound.
func (m *Memory) Forget(ctx context.Context, id string) error {
	if err := m.writable(); err != nil {
		return err
	}
	m.wmu.Lock()
	defer m.wmu.Unlock()
	if err := m.Err(); err != nil {
		return err
	}
	m.mu.RLock()
	closed := m.closed
	_, ok := m.parents[id]
	m.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	if !ok {
		return fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if m.log != nil {
		if _, err := m.log.append([][]byte{encodeForget(nil, id)}, m.opts.sync); err != nil {
			return err
		}
	}
	m.mu.Lock()
	m.applied++
	err := m.remove(ctx, m.parents[id])
	m.mu.Unlock()
	if err != nil {
		return err
	}
	m.maybeSnapshot(ctx)
	return nil
}

// closeSnapshotShare: Close writes a snapshot when the records applied
// since the last one are at least 1/closeSnapshotShare of the store. A
// snapshot rewrites every vector (O(store)); paid once per that share of
// the store's records, it costs O(1) per record, where a snapshot on every
// Close made each `agentmem add` into a store of 50,000 memories rewrite
// 205 MB (0.85 s). The tail left for Open to replay stays under that share
// and under WithSnapshotEvery's count (an automatic snapshot).
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
// with the memory's default mode and count. It implements memory.Memory.
func (m *Memory) Search(ctx context.Context, question string) ([]memory.Hit, error) {
	return m.Query(ctx, Query{Text: question, Mode: m.opts.mode})
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
	for _, db := range dbs {
		n := db.Len()
		if n == 0 {
			continue
		}
		fetch := depth
		if timed {
			fetch = 2 * depth
		}
		for {
			fetch = min(fetch, n)
			res, err := db.Search(ctx, qvec, fetch, minScore)
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
	}
	slices.SortFunc(all, func(a, b vdb.Result) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	if len(all) > depth {
		all = all[:depth]
	}
	return all, nil
}

func (m *Memory) embedQuery(ctx context.Context, text string) ([]float32, error) {
	v, err := embed.EmbedQuery(ctx, m.emb, text)
	if err != nil {
		return nil, fmt.Errorf("longterm: embed query: %w", err)
	}
	return v, nil
}
