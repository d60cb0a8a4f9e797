package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/agentmem/agentmem/internal/errs"
	"github.com/agentmem/agentmem/memory"
)

// neighbourGap: a record is linked to the previous record of its namespace
// (prev_seq) only if their times are at most this far apart, as in
// memory/longterm (turns.go, neighbourGap).
const neighbourGap = 12 * time.Hour

// nsRow is a namespace's row, locked by the writing transaction.
type nsRow struct {
	id                int32
	name              string
	textDocs, textLen int64
	// lastSeq is the newest record, the previous one of the next record
	// written (0: none); lastTime its time.
	lastSeq  int64
	lastTime time.Time
	// lastEpisode is lastSeq's episode, the one a record linked to it
	// joins; episodeDocs the namespace's number of episodes.
	lastEpisode, episodeDocs int64
	// mergedSeq: the postings of records up to it are in posting_blocks;
	// tailDocs records were written after it (blocks.go).
	mergedSeq, tailDocs int64
	// ended counts the records that have a valid_until; latest is the
	// latest moment one starts (facts.go).
	ended    int64
	latest   time.Time
	speakers map[string]int         // change in each speaker's record count
	episodes map[int64]*episodeDiff // change in each episode's length and records
}

// episodeDiff is a write's change to an episode's row.
type episodeDiff struct {
	len     int64
	records int
}

// episode returns the change to episode ep.
func (r *nsRow) episode(ep int64) *episodeDiff {
	d := r.episodes[ep]
	if d == nil {
		d = &episodeDiff{}
		r.episodes[ep] = d
	}
	return d
}

// oldRec is a stored record that a write replaces (or supersedes).
type oldRec struct {
	seq int64
	id  string
	// facts are the record's validity, versions and count (the rest of
	// the record is left empty).
	facts   memory.Record
	ns      string
	speaker string
	textLen int
	episode int64
}

const maxWriteAttempts = 5

// commit writes the prepared records in one transaction, retrying when a
// concurrent writer of the same id or a deadlock made it fail. It returns
// how many chunks it wrote pending (outside the HNSW index, see fold.go).
// A batch of Load's (load) writes its chunks as if indexed: Load builds
// the index over them at its end. lt is the load's tails (nil: not a
// load).
func (m *Memory) commit(ctx context.Context, preps []prepared, load bool, lt *loadTails) (int, error) {
	// The last occurrence of a repeated id is the one stored.
	last := map[string]int{}
	for i := range preps {
		last[preps[i].rec.ID] = i
	}
	batch := make([]*prepared, 0, len(last))
	for i := range preps {
		if last[preps[i].rec.ID] == i {
			batch = append(batch, &preps[i])
		}
	}
	var pending int
	var err error
	if m.fastWrite(batch, load) {
		for range maxWriteAttempts {
			var done bool
			done, pending, err = m.addFast(ctx, batch)
			if err == nil && done {
				return pending, nil
			}
			if err == nil || !retryable(errors.Unwrap(err)) && !retryable(err) {
				break
			}
		}
		if err != nil {
			return 0, err
		}
	}
	for range maxWriteAttempts {
		if pending, err = m.commitOnce(ctx, batch, load, lt); err == nil || !retryable(errors.Unwrap(err)) && !retryable(err) {
			break
		}
	}
	return pending, err
}

func (m *Memory) commitOnce(ctx context.Context, batch []*prepared, load bool, lt *loadTails) (int, error) {
	c, err := m.acquire(ctx)
	if err != nil {
		return 0, m.wrap(ctx, "add", err)
	}
	defer c.Release()
	tx, err := c.Begin(ctx)
	if err != nil {
		return 0, m.wrap(ctx, "add: begin", err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // after Commit it is a no-op

	ids := make([]string, len(batch))
	for i, p := range batch {
		ids[i] = p.rec.ID
	}
	olds, err := readOld(ctx, tx, ids)
	if err != nil {
		return 0, m.wrap(ctx, "add: read replaced records", err)
	}
	names := map[string]bool{}
	for _, p := range batch {
		names[p.rec.Namespace] = true
	}
	for _, o := range olds {
		names[o.ns] = true
	}
	nss, err := lockNamespaces(ctx, tx, names)
	if err != nil {
		return 0, m.wrap(ctx, "add: lock namespaces", err)
	}
	// Re-read under the locks: a record moved to an unlocked namespace in
	// the meantime makes the transaction start over.
	if olds, err = readOld(ctx, tx, ids); err != nil {
		return 0, m.wrap(ctx, "add: read replaced records", err)
	}
	for _, o := range olds {
		if nss[o.ns] == nil {
			return 0, fmt.Errorf("postgres: record %q moved during the write: %w", o.id, errRetry)
		}
	}
	all := batch
	if batch, err = m.resolve(ctx, tx, batch, olds); err != nil {
		return 0, err
	}
	if err := m.deleteRecords(ctx, tx, olds, nss); err != nil {
		return 0, err
	}
	var seqs []int64
	rows, err := tx.Query(ctx, nextSeqsSQL, len(batch))
	if err != nil {
		return 0, m.wrap(ctx, "add: sequence", err)
	}
	seqs, err = pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return 0, m.wrap(ctx, "add: sequence", err)
	}
	slices.Sort(seqs)

	// The batch's records, then their chunks (copyRows), are written
	// with a COPY each.
	nChunks, recBytes, chunkBytes := 0, 0, 0
	for _, p := range batch {
		nChunks += len(p.chunks)
		recBytes += rowBytes(p)
		chunkBytes += len(p.rec.Text) + chunkRowBytes*len(p.chunks)
		for _, b := range p.vecBin {
			chunkBytes += len(b)
		}
	}
	recs := newCopyRows(recBytes)
	// The batch's records by namespace, in seq order, whose postings a
	// pack of the namespace's tail (mergeTail) takes.
	wrote := map[int32][]written{}
	for i, p := range batch {
		r := &p.rec
		ns := nss[r.Namespace]
		seq := seqs[i]
		prev := int64(0) // 0: no previous record (NULL)
		// A record linked to the one before it is in its episode; any
		// other starts one.
		episode := seq
		if ns.lastSeq != 0 && absDur(r.Time.Sub(ns.lastTime)) <= neighbourGap {
			prev, episode = ns.lastSeq, ns.lastEpisode
		}
		ns.lastSeq, ns.lastTime, ns.lastEpisode = seq, r.Time, episode
		ns.textDocs++
		ns.tailDocs++
		ns.textLen += int64(p.textLen)
		d := ns.episode(episode)
		d.len += int64(p.textLen)
		d.records++
		wrote[ns.id] = append(wrote[ns.id], written{seq: seq, episode: episode, dl: int32(p.textLen), terms: p.termList, tfs: p.tfs})
		if r.Speaker != "" {
			ns.speakers[r.Speaker]++
		}
		if s := r.Since(); s.After(ns.latest) {
			ns.latest = s
		}
		if !r.ValidUntil.IsZero() {
			ns.ended++
		}
		recs.record(p, ns.id, seq, prev, episode)
	}
	if err := recs.send(ctx, tx, "records", writeRecordColumns); err != nil {
		return 0, m.wrap(ctx, "add: records", err)
	}
	bulk := false
	if !load {
		if bulk, err = m.bulk(ctx, tx, len(batch)); err != nil {
			return 0, m.wrap(ctx, "add: bulk load", err)
		}
	}
	if bulk {
		// Its vectors go in without the index, which is built again
		// over the whole table below, with the chunks that were pending.
		if _, err := tx.Exec(ctx, `DROP INDEX IF EXISTS chunks_hnsw`); err != nil {
			return 0, m.wrap(ctx, "add: bulk load: drop HNSW index", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE chunks SET pending = false WHERE pending`); err != nil {
			return 0, m.wrap(ctx, "add: bulk load: fold pending chunks", err)
		}
	}
	// With the index kept, a small write's chunks are written pending:
	// outside the index until a fold (fold.go), so that the write does
	// not pay for inserting them into the graph. A larger batch (an
	// import) pays for its own, as does any write while the store holds
	// about pendingCap pending chunks: every query that searches the
	// index scans those exactly, so their number stays bounded even when
	// writes outpace the fold.
	pending := !m.opts.exact && m.indexed.Load() && !bulk && !load && nChunks <= int(pendingWriteChunks.Load()) && m.pendingEst.Load() < m.pendingCap()
	chunks := newCopyRows(chunkBytes)
	for i, p := range batch {
		chunks.chunks(p, nss[p.rec.Namespace].id, seqs[i], pending)
	}
	if err := chunks.send(ctx, tx, "chunks", writeChunkColumns); err != nil {
		return 0, m.wrap(ctx, "add: chunks", err)
	}
	if bulk {
		if err := m.createIndex(ctx, tx); err != nil {
			return 0, m.wrap(ctx, "add: bulk load: build HNSW index", err)
		}
	}
	packed := map[int32]bool{}
	for _, p := range batch {
		ns := nss[p.rec.Namespace]
		if packed[ns.id] || !lt.due(ns) {
			continue
		}
		// The batch's records follow seqs[0] − 1 (seqs ascend).
		if err := lt.pack(ctx, tx, ns, seqs[0]-1, wrote[ns.id]); err != nil {
			return 0, m.wrap(ctx, "add: pack postings", err)
		}
		packed[ns.id] = true
	}
	if err := m.applyFacts(ctx, tx, all, nss); err != nil {
		return 0, err
	}
	if err := writeStats(ctx, tx, nss); err != nil {
		return 0, m.wrap(ctx, "add: statistics", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, m.wrap(ctx, "add: commit", err)
	}
	lt.committed(nss, wrote, packed)
	if !pending {
		return 0, nil
	}
	return nChunks, nil
}

// record writes p's row of records (writeRecordColumns), in namespace
// ns with its seq, previous record (0: none) and episode.
func (c *copyRows) record(p *prepared, ns int32, seq, prev, episode int64) {
	r := &p.rec
	c.row(len(writeRecordColumns))
	c.int8(seq)
	c.text(r.ID)
	c.int4(ns)
	c.text(r.Text)
	c.time(r.Time)
	c.text(r.Speaker)
	c.texts(r.Tags)
	c.int4(int32(p.textLen))
	if prev == 0 {
		c.null()
	} else {
		c.int8(prev)
	}
	c.int8(episode)
	c.nullTime(r.ValidFrom)
	c.nullTime(r.ValidUntil)
	c.text(r.Supersedes)
	c.text(r.SupersededBy)
	c.int4(int32(r.Seen))
	c.nullTime(r.LastSeen)
	c.int8(p.textKey)
	c.texts(p.termList)
	c.int4s(p.tfs)
}

// chunks writes the rows of p's chunks (writeChunkColumns), of record seq
// in namespace ns.
func (c *copyRows) chunks(p *prepared, ns int32, seq int64, pending bool) {
	r := &p.rec
	for j, ch := range p.chunks {
		c.row(len(writeChunkColumns))
		c.int8(seq)
		c.int4(ns)
		c.time(r.Time)
		c.int4(int32(j))
		c.int4(int32(ch.Start))
		c.int4(int32(ch.End))
		c.text(ch.Text)
		c.field(p.vecBin[j])
		c.nullTime(r.ValidFrom)
		c.nullTime(r.ValidUntil)
		c.bool(pending)
	}
}

// chunkRowBytes is the size of a chunk's row in chunks' binary COPY data
// (copyRows.chunks) but for its text and vector: the row's field count,
// its fields' sizes and its scalars (exactly, when none is NULL).
const chunkRowBytes = 2 + 4*11 + 8 + 4 + 8 + 3*4 + 2*8 + 1

// rowBytes is the size of p's row in records' binary COPY data (copyRows)
// (exactly, when none of its fields is NULL): its fields' sizes, its
// scalars and arrays' headers.
func rowBytes(p *prepared) int {
	r := &p.rec
	n := 2 + 4*len(writeRecordColumns) + 76 + 3*20 + // scalars, arrays' headers
		len(r.ID) + len(r.Text) + len(r.Speaker) + len(r.Supersedes) + len(r.SupersededBy) +
		8*len(p.tfs) + 4*len(p.termList) + 4*len(r.Tags)
	for _, t := range p.termList {
		n += len(t)
	}
	for _, t := range r.Tags {
		n += len(t)
	}
	return n
}

// writeRecordColumns and writeChunkColumns are the columns a write copies into
// records and chunks, in commitOnce's order.
var (
	writeRecordColumns = []string{"seq", "id", "ns", "text", "time", "speaker", "tags", "text_len", "prev_seq", "episode",
		"valid_from", "valid_until", "supersedes", "superseded_by", "seen", "last_seen", "text_key", "terms", "tfs"}
	writeChunkColumns = []string{"seq", "ns", "time", "ord", "start_byte", "end_byte", "text", "embedding",
		"valid_from", "valid_until", "pending"}
)

// nextSeqsSQL takes $1 values of the records' sequence. The sequence is
// looked up once (OFFSET 0 keeps the subquery from being pulled up into
// the join, where pg_get_serial_sequence ran once a row: 6.3–8.5 ms for
// 1,000 values against 0.9 ms, measured with psql).
const nextSeqsSQL = `SELECT nextval(s.seq) FROM (SELECT pg_get_serial_sequence('records', 'seq')::regclass AS seq OFFSET 0) s, generate_series(1, $1)`

// bulk reports whether a batch of n records rebuilds the HNSW index
// (WithBulkLoad): the index is kept and there (a store without it builds
// it after the batch if due: wroteUnindexed), the batch has at least
// opts.bulkRecords records and at least as many as the store holds.
func (m *Memory) bulk(ctx context.Context, tx pgx.Tx, n int) (bool, error) {
	if m.opts.exact || !m.indexed.Load() || m.opts.bulkRecords == 0 || n < m.opts.bulkRecords {
		return false, nil
	}
	var stored int64
	if err := tx.QueryRow(ctx, `SELECT coalesce(sum(text_docs), 0) FROM namespaces`).Scan(&stored); err != nil {
		return false, err
	}
	if int64(n) < stored {
		return false, nil
	}
	// The index lock, before the table's (index.go); while a concurrent
	// build holds it the batch is written as any other.
	if err := m.lockIndex(ctx, tx); errors.Is(err, errIndexBusy) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return true, nil
}

// errRetry marks a transaction to run again.
var errRetry = &retryErr{}

type retryErr struct{}

func (*retryErr) Error() string    { return "retry" }
func (*retryErr) SQLState() string { return "40001" }

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func readOld(ctx context.Context, tx pgx.Tx, ids []string) ([]oldRec, error) {
	rows, err := tx.Query(ctx, `SELECT r.seq, r.id, n.name, r.speaker, r.text_len, r.episode, `+factColumns+`, r.time
		FROM records r JOIN namespaces n ON n.id = r.ns WHERE r.id = ANY($1) ORDER BY r.seq`, ids)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (oldRec, error) {
		var o oldRec
		var f factScan
		err := row.Scan(append([]any{&o.seq, &o.id, &o.ns, &o.speaker, &o.textLen, &o.episode}, append(f.dest(), &o.facts.Time)...)...)
		f.into(&o.facts)
		o.facts.ID, o.facts.Namespace = o.id, o.ns
		return o, err
	})
}

// lockNamespaces creates the namespaces that are missing and locks the
// rows of all of them, in name order (so concurrent writers cannot
// deadlock on them).
func lockNamespaces(ctx context.Context, tx pgx.Tx, names map[string]bool) (map[string]*nsRow, error) {
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	slices.Sort(sorted)
	if _, err := tx.Exec(ctx, `INSERT INTO namespaces (name) SELECT n FROM unnest($1::text[]) AS u(n) ORDER BY n ON CONFLICT (name) DO NOTHING`, sorted); err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, `SELECT id, name, text_docs, text_len, coalesce(last_seq, 0), coalesce(last_time, 'epoch'), episode_docs,
		merged_seq, tail_docs, ended, coalesce(latest, '-infinity') FROM namespaces WHERE name = ANY($1) ORDER BY name FOR UPDATE`, sorted)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[string]*nsRow, len(sorted))
	for rows.Next() {
		var name string
		r := &nsRow{speakers: map[string]int{}, episodes: map[int64]*episodeDiff{}}
		var latest pgtype.Timestamptz
		if err := rows.Scan(&r.id, &name, &r.textDocs, &r.textLen, &r.lastSeq, &r.lastTime, &r.episodeDocs, &r.mergedSeq, &r.tailDocs,
			&r.ended, &latest); err != nil {
			return nil, err
		}
		if latest.Valid && latest.InfinityModifier == pgtype.Finite {
			r.latest = latest.Time
		}
		r.name = name
		out[name] = r
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, lastEpisodes(ctx, tx, out)
}

// lastEpisodes reads the episodes of the namespaces' newest records. It
// runs after the namespaces are locked, in a statement of its own: one
// that waited for a row lock sees the row as its holder committed it, but
// the holder's records only from a snapshot taken after the wait.
func lastEpisodes(ctx context.Context, tx pgx.Tx, nss map[string]*nsRow) error {
	bySeq := map[int64]*nsRow{}
	var seqs []int64
	for _, r := range nss {
		if r.lastSeq != 0 {
			bySeq[r.lastSeq] = r
			seqs = append(seqs, r.lastSeq)
		}
	}
	if len(seqs) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, `SELECT seq, episode FROM records WHERE seq = ANY($1)`, seqs)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var seq, ep int64
		if err := rows.Scan(&seq, &ep); err != nil {
			return err
		}
		bySeq[seq].lastEpisode = ep
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, r := range bySeq {
		if r.lastEpisode == 0 {
			return fmt.Errorf("namespace %d: newest record %d not found", r.id, r.lastSeq)
		}
	}
	return nil
}

// deleteRecords removes records and their chunks, takes their postings out
// of the posting blocks, and takes them out of their namespaces'
// statistics (in nss, locked).
func (m *Memory) deleteRecords(ctx context.Context, tx pgx.Tx, olds []oldRec, nss map[string]*nsRow) error {
	if len(olds) == 0 {
		return nil
	}
	seqs := make([]int64, len(olds))
	var newest []int32 // namespaces whose newest record goes
	for i, o := range olds {
		seqs[i] = o.seq
		ns := nss[o.ns]
		ns.textDocs--
		ns.textLen -= int64(o.textLen)
		if ns.lastSeq == o.seq {
			ns.lastSeq = 0
			newest = append(newest, ns.id)
		}
		if o.speaker != "" {
			ns.speakers[o.speaker]--
		}
		if !o.facts.ValidUntil.IsZero() {
			ns.ended--
		}
		d := ns.episode(o.episode)
		d.len -= int64(o.textLen)
		d.records--
	}
	if err := unblock(ctx, tx, seqs); err != nil {
		return m.wrap(ctx, "delete records: posting blocks", err)
	}
	// A record that followed a forgotten one is linked to the newest
	// record before it that stays, if at most neighbourGap apart, as
	// memory/longterm links them (and as they would have been linked had
	// the forgotten record never been written).
	if _, err := tx.Exec(ctx, `UPDATE records r SET prev_seq = (
		SELECT CASE WHEN abs(extract(epoch FROM r.time - p.time)) <= $2 THEN p.seq END
		FROM records p WHERE p.ns = r.ns AND p.seq < r.seq AND p.seq <> ALL($1) ORDER BY p.seq DESC LIMIT 1)
		WHERE r.prev_seq = ANY($1) AND r.seq <> ALL($1)`, seqs, neighbourGap.Seconds()); err != nil {
		return m.wrap(ctx, "delete records: relink neighbours", err)
	}
	for _, q := range []string{
		`DELETE FROM chunks WHERE seq = ANY($1)`,
		`DELETE FROM records WHERE seq = ANY($1)`,
	} {
		if _, err := tx.Exec(ctx, q, seqs); err != nil {
			return m.wrap(ctx, "delete records", err)
		}
	}
	if err := newestRecords(ctx, tx, newest, nss); err != nil {
		return m.wrap(ctx, "delete records: newest record", err)
	}
	return nil
}

// newestRecords sets lastSeq, lastTime and lastEpisode of the namespaces
// ids (in nss) to their newest record's, after theirs was forgotten: the
// next record written is linked to it.
func newestRecords(ctx context.Context, tx pgx.Tx, ids []int32, nss map[string]*nsRow) error {
	if len(ids) == 0 {
		return nil
	}
	byID := make(map[int32]*nsRow, len(ids))
	for _, r := range nss {
		byID[r.id] = r
	}
	rows, err := tx.Query(ctx, `SELECT n.id, r.seq, r.time, r.episode FROM unnest($1::int[]) AS n(id)
		CROSS JOIN LATERAL (SELECT seq, time, episode FROM records WHERE ns = n.id ORDER BY seq DESC LIMIT 1) r`, ids)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int32
		var seq, ep int64
		var at time.Time
		if err := rows.Scan(&id, &seq, &at, &ep); err != nil {
			return err
		}
		if r := byID[id]; r != nil {
			r.lastSeq, r.lastTime, r.lastEpisode = seq, at, ep
		}
	}
	return rows.Err()
}

// writeStats writes the namespaces' statistics, episodes and speaker
// counts.
func writeStats(ctx context.Context, tx pgx.Tx, nss map[string]*nsRow) error {
	if err := writeEpisodes(ctx, tx, nss); err != nil {
		return err
	}
	var ids []int32
	var td, tl, last, ed, merged, tail, ended []int64
	var latest []pgtype.Timestamptz
	var spNS []int32
	var spName []string
	var spN []int32
	for _, r := range nss {
		ids = append(ids, r.id)
		td, tl, last, ed = append(td, r.textDocs), append(tl, r.textLen), append(last, r.lastSeq), append(ed, r.episodeDocs)
		merged, tail = append(merged, r.mergedSeq), append(tail, r.tailDocs)
		ended, latest = append(ended, r.ended), append(latest, pgtype.Timestamptz{Time: r.latest, Valid: !r.latest.IsZero()})
		for s, n := range r.speakers {
			if n != 0 {
				spNS, spName, spN = append(spNS, r.id), append(spName, s), append(spN, int32(n))
			}
		}
	}
	// last_time is the newest record's, read from it (0: none).
	if _, err := tx.Exec(ctx, `UPDATE namespaces n SET text_docs = u.td, text_len = u.tl, last_seq = nullif(u.last, 0),
		last_time = (SELECT time FROM records r WHERE r.seq = u.last), episode_docs = u.ed, merged_seq = u.merged, tail_docs = u.tail,
		ended = u.ended, latest = u.latest
		FROM unnest($1::int[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::timestamptz[])
			AS u(id, td, tl, last, ed, merged, tail, ended, latest)
		WHERE n.id = u.id`,
		ids, td, tl, last, ed, merged, tail, ended, latest); err != nil {
		return err
	}
	if len(spNS) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, `INSERT INTO speakers (ns, speaker, n) SELECT * FROM unnest($1::int[], $2::text[], $3::int[]) ORDER BY 1, 2
		ON CONFLICT (ns, speaker) DO UPDATE SET n = speakers.n + EXCLUDED.n`, spNS, spName, spN); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `DELETE FROM speakers WHERE ns = ANY($1) AND n <= 0`, spNS)
	return err
}

// writeEpisodes applies the namespaces' episode changes to the episodes
// table, counting the episodes that begin (in episodeDocs) and deleting
// those left without records.
func writeEpisodes(ctx context.Context, tx pgx.Tx, nss map[string]*nsRow) error {
	byID := make(map[int32]*nsRow, len(nss))
	var epNS []int32
	var epID, epLen []int64
	var epRecs []int32
	for _, r := range nss {
		byID[r.id] = r
		for ep, d := range r.episodes {
			if d.len != 0 || d.records != 0 {
				epNS, epID, epLen, epRecs = append(epNS, r.id), append(epID, ep), append(epLen, d.len), append(epRecs, int32(d.records))
			}
		}
	}
	if len(epNS) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, `INSERT INTO episodes (ns, episode, len, records)
		SELECT * FROM unnest($1::int[], $2::bigint[], $3::bigint[], $4::int[]) ORDER BY 1, 2
		ON CONFLICT (ns, episode) DO UPDATE SET len = episodes.len + EXCLUDED.len, records = episodes.records + EXCLUDED.records
		RETURNING ns, episode, records, xmax = 0`, epNS, epID, epLen, epRecs)
	if err != nil {
		return err
	}
	var goneNS []int32
	var goneID []int64
	for rows.Next() {
		var ns int32
		var ep int64
		var recs int32
		var inserted bool
		if err := rows.Scan(&ns, &ep, &recs, &inserted); err != nil {
			rows.Close()
			return err
		}
		switch {
		case recs <= 0:
			goneNS, goneID = append(goneNS, ns), append(goneID, ep)
			if !inserted {
				byID[ns].episodeDocs--
			}
		case inserted:
			byID[ns].episodeDocs++
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(goneNS) == 0 {
		return nil
	}
	_, err = tx.Exec(ctx, `DELETE FROM episodes e USING unnest($1::int[], $2::bigint[]) AS u(ns, episode) WHERE e.ns = u.ns AND e.episode = u.episode`, goneNS, goneID)
	return err
}

// Forget removes the record with the given id; a missing id is an error
// wrapping memory.ErrNotFound.
func (m *Memory) Forget(ctx context.Context, id string) error {
	if err := m.check(ctx); err != nil {
		return err
	}
	var err error
	for range maxWriteAttempts {
		if err = m.forgetOnce(ctx, id); err == nil || !retryable(err) {
			break
		}
	}
	return err
}

func (m *Memory) forgetOnce(ctx context.Context, id string) error {
	tx, err := m.pool.Begin(ctx)
	if err != nil {
		return m.wrap(ctx, "forget", err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // after Commit it is a no-op
	olds, err := readOld(ctx, tx, []string{id})
	if err != nil {
		return m.wrap(ctx, "forget", err)
	}
	if len(olds) == 0 {
		return fmt.Errorf("postgres: %w: %q", errs.NotFound, id)
	}
	nss, err := lockNamespaces(ctx, tx, map[string]bool{olds[0].ns: true})
	if err != nil {
		return m.wrap(ctx, "forget: lock namespace", err)
	}
	if olds, err = readOld(ctx, tx, []string{id}); err != nil {
		return m.wrap(ctx, "forget", err)
	}
	if len(olds) == 0 {
		return fmt.Errorf("postgres: %w: %q", errs.NotFound, id)
	}
	if nss[olds[0].ns] == nil {
		return errRetry
	}
	if err := m.deleteRecords(ctx, tx, olds, nss); err != nil {
		return err
	}
	if err := writeStats(ctx, tx, nss); err != nil {
		return m.wrap(ctx, "forget: statistics", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return m.wrap(ctx, "forget: commit", err)
	}
	return nil
}
