package postgres

import (
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/memory/engine"
)

// A search right after a write (an agent's turn: write, then search) finds
// the process's keyword cache and vector copy of its namespace one version
// behind. Both are brought forward from the records written since (grow,
// tailVectors), which each path used to read in a round trip of its own
// after the view opened. The view of one namespace now asks for them in the
// round trip that opens it (prefetch), from the newest seq the process
// holds of the namespace: the records after it, whole (link, terms, record
// and chunk texts), and the chunks of those after the copy's, with their
// vectors. In its snapshot, so that grow and tailVectors take what they
// need from it, and check it against the namespace's statistics exactly as
// they check their own reads. With no write since, both statements find
// nothing through records_ns_seq.

// sinceMax is the most records written since that a view reads when it
// opens: past it, grow and tailVectors read what they need themselves.
const sinceMax = inlineTail

// since is what a view read of namespace ns's records after seq from
// (all of them, in seq order, unless more than sinceMax: none kept,
// partial), and of the chunks of its records after chunksFrom (-1: none
// read), with their vectors.
type since struct {
	ns         int32
	from       int64
	recs       []sinceRecord
	partial    bool
	chunksFrom int64
	chunks     []tailChunk
	sparse     bool // the chunks' vectors are sparsevec (Memory.sparse)
}

// sinceRecord is a record written since, as grow needs it.
type sinceRecord struct {
	link        linkRow
	superseding bool
	terms       []string
	tfs         []int32
	dl          int32
	doc         engine.Doc
}

// sinceSQL reads namespace $1's records after seq $2, in seq order,
// sinceMax + 1 at most (a constant, so that the generic plan knows it):
// recordColumns, linkCols (of r), whether it supersedes another, its terms,
// their counts and its length in tokens, and its chunks' texts.
var sinceSQL = `SELECT ` + recordColumns + `, r.seq, r.prev_seq, r.id, r.speaker, r.episode, r.time, coalesce(r.valid_from, r.time), r.valid_until,
	r.supersedes <> '', r.terms, r.tfs, r.text_len,
	array(SELECT c.text FROM chunks c WHERE c.seq = r.seq ORDER BY c.ord)
	FROM records r JOIN namespaces n ON n.id = r.ns WHERE r.ns = $1 AND r.seq > $2 ORDER BY r.ns, r.seq LIMIT ` + sinceLimit

// sinceChunksSQL reads the chunks, with their vectors, of namespace $1's
// first sinceMax + 1 records after seq $2.
var sinceChunksSQL = `SELECT c.id, c.seq, c.ord, c.time, coalesce(c.valid_from, c.time), c.valid_until, c.embedding
	FROM (SELECT seq FROM records WHERE ns = $1 AND seq > $2 ORDER BY seq LIMIT ` + sinceLimit + `) r JOIN chunks c ON c.seq = r.seq`

// sinceLimit is sinceMax + 1, in SQL.
var sinceLimit = strconv.Itoa(sinceMax + 1)

// prefetch queues on b, for a view of the namespace named name, the reads
// of the records written since the process's keyword cache of it and of
// the chunks written since its vector copy, when this process added
// records to the namespace since a search last brought the cache, or the
// copy, forward (a search after another process's writes reads them as
// it did before, in grow and tailVectors; one with no write before it
// costs nothing more).
func (v *view) prefetch(b *pgx.Batch, name string) {
	m := v.m
	cs := &m.caches
	cs.mu.Lock()
	id, known := cs.ids[name]
	c := cs.byNS[id]
	var w nsWrites
	if p := cs.written[name]; p != nil {
		w = *p
	}
	cs.mu.Unlock()
	if !known || w.gen == 0 {
		return
	}
	v.gen, v.genNS = w.gen, name
	from, chunksFrom := int64(-1), int64(-1)
	if c != nil && w.kw < w.gen {
		c.mu.Lock()
		if c.growableLocked() {
			from = c.lastSeq
		}
		c.mu.Unlock()
	}
	m.vecs.mu.Lock()
	nv := m.vecs.byNS[id]
	m.vecs.mu.Unlock()
	if nv != nil && w.vec < w.gen && nv.mu.TryRLock() {
		if nv.ready && nv.db != nil {
			chunksFrom = nv.lastSeq
		}
		nv.mu.RUnlock()
	}
	if from < 0 && chunksFrom < 0 {
		return
	}
	if from < 0 || chunksFrom >= 0 && chunksFrom < from {
		from = chunksFrom
	}
	s := &since{ns: id, from: from, chunksFrom: chunksFrom, sparse: m.sparse}
	v.since = s
	// Both through records_ns_seq in seq order (and chunks_seq), whatever
	// $2 is: their generic plans, which the server would otherwise plan
	// again for each $2 (0.30 and 0.09 ms, against 0.03 and 0.01 ms
	// bound, in its log of BenchmarkTurns).
	b.Queue(`SET LOCAL plan_cache_mode = force_generic_plan`)
	b.Queue(sinceSQL, id, from).Query(func(rows pgx.Rows) error {
		return s.scanRecords(rows)
	})
	if chunksFrom >= 0 {
		b.Queue(sinceChunksSQL, id, chunksFrom).Query(func(rows pgx.Rows) error {
			return s.scanChunks(rows)
		})
	}
	b.Queue(`SET LOCAL plan_cache_mode = auto`)
}

// scanRecords reads sinceSQL's rows into s.
func (s *since) scanRecords(rows pgx.Rows) error {
	for rows.Next() {
		var r sinceRecord
		var ls linkScan
		var dl int64
		if err := scanRecord(rows, &r.doc.Record, append(ls.dest(), &r.superseding, &r.terms, &r.tfs, &dl, &r.doc.Chunks)...); err != nil {
			return err
		}
		r.link = ls.row()
		r.dl = int32(dl)
		r.doc.Record.Seen, r.doc.Record.LastSeen = 0, time.Time{} // as scanDocs
		s.recs = append(s.recs, r)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(s.recs) > sinceMax {
		s.recs, s.partial = nil, true
	}
	return nil
}

// scanChunks reads sinceChunksSQL's rows into s.
func (s *since) scanChunks(rows pgx.Rows) error {
	for rows.Next() {
		var t tailChunk
		vec := vecScan{sparse: s.sparse}
		var err error
		if t.id, t.c, err = scanChunk(rows, vec.dest()); err != nil {
			return err
		}
		t.vec = vec.slice()
		s.chunks = append(s.chunks, t)
	}
	return rows.Err()
}

// after returns the records of namespace ns written after seq from and
// their growth (as grownSQL counts it), if s read all of them.
func (s *since) after(ns int32, from int64) ([]sinceRecord, growth, bool) {
	if s == nil || s.ns != ns || s.partial || from < s.from {
		return nil, growth{}, false
	}
	i := 0
	for i < len(s.recs) && s.recs[i].link.seq <= from {
		i++
	}
	recs := s.recs[i:]
	g := growth{count: int64(len(recs)), last: from}
	for _, r := range recs {
		if r.superseding {
			g.superseding++
		}
		g.last = max(g.last, r.link.seq)
	}
	return recs, g, true
}

// chunksAfter returns the chunks, with their vectors, of namespace ns's
// records written after seq from, scored against unit, and their growth,
// if s read all of them.
func (s *since) chunksAfter(ns int32, from int64, unit []float32) ([]tailChunk, growth, bool) {
	if s == nil || s.chunksFrom < 0 || s.chunksFrom != from {
		return nil, growth{}, false
	}
	_, g, ok := s.after(ns, from)
	if !ok {
		return nil, growth{}, false
	}
	out := make([]tailChunk, len(s.chunks))
	for i, t := range s.chunks {
		t.score = dot(unit, t.vec)
		out[i] = t
	}
	return out, g, true
}

// dot is the inner product of a and b, of the same length.
func dot(a, b []float32) float32 {
	var s float32
	for i := range min(len(a), len(b)) {
		s += a[i] * b[i]
	}
	return s
}

// nsWrites is what this process wrote to a namespace: gen counts its
// writes, kw and vec are the last of them that a search's keyword path,
// and its vector path, saw in its snapshot (a view that opened after
// write gen sees it), having brought the keyword cache, or the vector
// copy, forward past it as far as it could.
type nsWrites struct{ gen, kw, vec uint64 }

// maxWritten bounds caches.written.
const maxWritten = 10_000

// wrote notes that records were added to the namespaces of preps, for
// the next view of each (prefetch).
func (cs *caches) wrote(preps []prepared) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.written == nil || len(cs.written) >= maxWritten {
		// Namespaces written and never searched: hints let go.
		cs.written = map[string]*nsWrites{}
	}
	for i := range preps {
		ns := preps[i].rec.Namespace
		w := cs.written[ns]
		if w == nil {
			w = &nsWrites{}
			cs.written[ns] = w
		}
		if i == 0 || ns != preps[i-1].rec.Namespace {
			w.gen++
		}
	}
}

// saw notes that the keyword path (kw) or the vector path of v searched
// the namespace named ns, having brought what the process keeps of it
// forward to the view's snapshot, which holds the writes that came before
// the view opened.
func (v *view) saw(ns string, kw bool) {
	if v.gen == 0 || ns != v.genNS {
		return
	}
	cs := &v.m.caches
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if w := cs.written[ns]; w != nil {
		if kw {
			w.kw = max(w.kw, v.gen)
		} else {
			w.vec = max(w.vec, v.gen)
		}
	}
}
