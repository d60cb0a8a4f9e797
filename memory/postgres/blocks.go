package postgres

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
)

// The keyword path's postings are kept twice. Each record's row holds its
// distinct terms and their counts (records.terms and tfs, sorted by term):
// a write adds no row per term, and a delete finds the record's terms
// there. Reading a query's postings from the records would cost a row per
// record: a common term of a namespace of 10,000 records is in 10,000 of
// them. So a namespace's postings up to its merged_seq are also packed, per
// term, in blocks of up to blockPostings postings (posting_blocks, one
// bytea each); a query reads the blocks of its terms and the records
// written after merged_seq (the tail, at most about mergeRecords of them)
// that hold one of its terms, and scores them in Go. A write that leaves
// more than mergeRecords records in its namespace's tail packs the tail
// into the blocks, in its own transaction; a deleted record is taken out
// of the blocks that hold it in the deleting transaction. Blocks and tail
// hold exactly the namespace's postings at every commit.

// blockPostings is the most postings a block holds, and mergeRecords how
// many records a namespace's tail holds before a write packs it into
// blocks. Atomics so that tests can lower them (export_test.go) while a
// Memory they opened before packs in the background.
var (
	blockPostings = tunable(1024)
	mergeRecords  = tunable(256)
)

// tunable returns an atomic holding n: a limit tests lower.
func tunable(n int64) *atomic.Int64 {
	var a atomic.Int64
	a.Store(n)
	return &a
}

// posting is a term's occurrence in a record.
type posting struct {
	seq, episode int64
	tf, dl       int32
}

// appendBlock appends ps, sorted by seq, packed as a block to buf: per
// posting the seq's difference from the one before, tf, dl and
// seq − episode, as uvarints.
func appendBlock(buf []byte, ps []posting) []byte {
	var prev int64
	for _, p := range ps {
		buf = binary.AppendUvarint(buf, uint64(p.seq-prev))
		buf = binary.AppendUvarint(buf, uint64(p.tf))
		buf = binary.AppendUvarint(buf, uint64(p.dl))
		buf = binary.AppendUvarint(buf, uint64(p.seq-p.episode))
		prev = p.seq
	}
	return buf
}

var errBadBlock = errors.New("corrupt posting block")

// decodeBlock appends the postings packed in data to out. A block that
// appendBlock cannot have written (seqs not ascending from 1, a tf or dl
// past int32, an episode after its record or before the first) is
// errBadBlock.
func decodeBlock(out []posting, data []byte) ([]posting, error) {
	var prev int64
	for len(data) > 0 {
		var v [4]uint64
		for i := range v {
			x, n := binary.Uvarint(data)
			if n <= 0 {
				return out, errBadBlock
			}
			v[i], data = x, data[n:]
		}
		if v[0] == 0 || v[0] > uint64(math.MaxInt64-prev) || v[1] > math.MaxInt32 || v[2] > math.MaxInt32 || v[3] >= uint64(prev)+v[0] {
			return out, errBadBlock
		}
		seq := prev + int64(v[0])
		out = append(out, posting{seq: seq, tf: int32(v[1]), dl: int32(v[2]), episode: seq - int64(v[3])})
		prev = seq
	}
	return out, nil
}

// written is a record a write stored, for its postings: its seq, episode
// and length, and its terms (in byte order) with their counts.
type written struct {
	seq, episode int64
	dl           int32
	terms        []string
	tfs          []int32
}

// postingsOf returns the postings of ws (in seq order) by term, each
// term's in seq order.
//
// Each term is looked up once a posting, to number it; the postings are
// then placed in one array, each term's slice of it sized by its count
// (a load's pack takes 10,000 records' 760,000 postings at once: appended
// term by term, 85 ms of the load's end went to the map and the slices'
// growth).
func postingsOf(ws []written) map[string][]posting {
	n := 0
	for _, w := range ws {
		n += len(w.terms)
	}
	num := make(map[string]int32, n/8)
	var terms []string
	var counts []int32
	ids := make([]int32, 0, n)
	for _, w := range ws {
		for _, t := range w.terms {
			id, ok := num[t]
			if !ok {
				id = int32(len(terms))
				num[t] = id
				terms = append(terms, t)
				counts = append(counts, 0)
			}
			counts[id]++
			ids = append(ids, id)
		}
	}
	// counts[id] becomes the end of term id's slice, filled backwards.
	all := make([]posting, n)
	end := int32(0)
	for id, c := range counts {
		end += c
		counts[id] = end
	}
	k := n
	for i := len(ws) - 1; i >= 0; i-- {
		w := &ws[i]
		for j := len(w.terms) - 1; j >= 0; j-- {
			k--
			id := ids[k]
			counts[id]--
			all[counts[id]] = posting{seq: w.seq, episode: w.episode, tf: w.tfs[j], dl: w.dl}
		}
	}
	out := make(map[string][]posting, len(terms))
	for id, t := range terms {
		lo := counts[id] // its start, once filled
		hi := int32(n)
		if id+1 < len(terms) {
			hi = counts[id+1]
		}
		out[t] = all[lo:hi:hi]
	}
	return out
}

// block is a posting_blocks row.
type block struct {
	term    string
	lastSeq int64
	ps      []posting
}

// writeBlocks replaces the blocks of namespace ns keyed by old (term,
// last_seq) with nw.
func writeBlocks(ctx context.Context, tx pgx.Tx, ns int32, old, nw []block) error {
	if len(old) > 0 {
		terms := make([]string, len(old))
		lasts := make([]int64, len(old))
		for i, b := range old {
			terms[i], lasts[i] = b.term, b.lastSeq
		}
		if _, err := tx.Exec(ctx, `DELETE FROM posting_blocks b USING unnest($2::text[], $3::bigint[]) AS u(term, last_seq)
			WHERE b.ns = $1 AND b.term = u.term AND b.last_seq = u.last_seq`, ns, terms, lasts); err != nil {
			return err
		}
	}
	n := 0
	for _, b := range nw {
		n += len(b.ps)
	}
	c := newCopyRows(n*6 + len(nw)*48)
	rows := 0
	for _, b := range nw {
		if len(b.ps) == 0 {
			continue
		}
		c.row(5)
		c.int4(ns)
		c.text(b.term)
		c.int8(b.lastSeq)
		c.int4(int32(len(b.ps)))
		at := c.open()
		c.b = appendBlock(c.b, b.ps)
		c.close(at)
		rows++
	}
	if rows == 0 {
		return nil
	}
	return c.send(ctx, tx, "posting_blocks", []string{"ns", "term", "last_seq", "n", "data"})
}

// mergeTail packs the postings of ns's tail (records after ns.mergedSeq,
// up to upTo) into its blocks: each term's last block is filled up, then
// new ones follow. The postings of records after from are written by this
// transaction and given in mem (each term's sorted by seq); the others are
// read. The namespace is locked; ns.mergedSeq becomes upTo.
func mergeTail(ctx context.Context, tx pgx.Tx, ns *nsRow, from, upTo int64, mem map[string][]posting) error {
	tail := map[string][]posting{}
	if from > ns.mergedSeq {
		rows, err := tx.Query(ctx, `SELECT u.term, r.seq, u.tf, r.text_len, r.episode
			FROM records r CROSS JOIN LATERAL unnest(r.terms, r.tfs) AS u(term, tf)
			WHERE r.ns = $1 AND r.seq > $2 AND r.seq <= $3 ORDER BY r.seq`,
			ns.id, ns.mergedSeq, from)
		if err != nil {
			return err
		}
		for rows.Next() {
			var t string
			var p posting
			if err := rows.Scan(&t, &p.seq, &p.tf, &p.dl, &p.episode); err != nil {
				rows.Close()
				return err
			}
			tail[t] = append(tail[t], p)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	if len(tail) == 0 {
		tail = mem // a load's pack: all of it in memory
	} else {
		for t, ps := range mem {
			tail[t] = append(tail[t], ps...)
		}
	}
	terms := make([]string, 0, len(tail))
	for t := range tail {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	// Each term's last block, if it has room.
	rows, err := tx.Query(ctx, `SELECT DISTINCT ON (term) term, last_seq, n, data FROM posting_blocks
		WHERE ns = $1 AND term = ANY($2) ORDER BY term, last_seq DESC`, ns.id, terms)
	if err != nil {
		return err
	}
	var old []block
	lastOf := map[string][]posting{}
	for rows.Next() {
		var b block
		var n int32
		var data []byte
		if err := rows.Scan(&b.term, &b.lastSeq, &n, &data); err != nil {
			rows.Close()
			return err
		}
		if int64(n) >= blockPostings.Load() {
			continue
		}
		if b.ps, err = decodeBlock(nil, data); err != nil {
			rows.Close()
			return fmt.Errorf("term %q: %w", b.term, err)
		}
		old = append(old, b)
		lastOf[b.term] = b.ps
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	var nw []block
	for _, t := range terms {
		ps := tail[t]
		if last := lastOf[t]; last != nil {
			ps = append(last, ps...)
		}
		for len(ps) > 0 {
			n := min(len(ps), int(blockPostings.Load()))
			nw = append(nw, block{term: t, lastSeq: ps[n-1].seq, ps: ps[:n]})
			ps = ps[n:]
		}
	}
	if err := writeBlocks(ctx, tx, ns.id, old, nw); err != nil {
		return err
	}
	ns.mergedSeq, ns.tailDocs = upTo, 0
	return nil
}

// unblock takes deleted records (seqs, all at most their namespace's
// merged_seq) out of the blocks that hold their postings. It runs before
// the records are deleted: their terms say which terms' blocks to read.
func unblock(ctx context.Context, tx pgx.Tx, seqs []int64) error {
	if len(seqs) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, `SELECT DISTINCT ON (b.ns, b.term, b.last_seq) b.ns, b.term, b.last_seq, b.data
		FROM records p CROSS JOIN LATERAL unnest(p.terms) AS u(term)
		CROSS JOIN LATERAL (SELECT ns, term, last_seq, data FROM posting_blocks b
			WHERE b.ns = p.ns AND b.term = u.term AND b.last_seq >= p.seq ORDER BY last_seq LIMIT 1) b
		WHERE p.seq = ANY($1)`, seqs)
	if err != nil {
		return err
	}
	gone := map[int64]bool{}
	for _, s := range seqs {
		gone[s] = true
	}
	type nsBlocks struct{ old, nw []block }
	byNS := map[int32]*nsBlocks{}
	for rows.Next() {
		var ns int32
		var b block
		var data []byte
		if err := rows.Scan(&ns, &b.term, &b.lastSeq, &data); err != nil {
			rows.Close()
			return err
		}
		if b.ps, err = decodeBlock(nil, data); err != nil {
			rows.Close()
			return fmt.Errorf("term %q: %w", b.term, err)
		}
		x := byNS[ns]
		if x == nil {
			x = &nsBlocks{}
			byNS[ns] = x
		}
		x.old = append(x.old, b)
		// The key stays: the block still holds no seq above it.
		x.nw = append(x.nw, block{term: b.term, lastSeq: b.lastSeq, ps: slices.DeleteFunc(slices.Clone(b.ps), func(p posting) bool { return gone[p.seq] })})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for ns, x := range byNS {
		if err := writeBlocks(ctx, tx, ns, x.old, x.nw); err != nil {
			return err
		}
	}
	return nil
}

// recordPostingsSQL reads the postings (term, seq, tf, dl, episode) of
// namespace $1's records after seq $2 from the records' own term arrays.
const recordPostingsSQL = `SELECT u.term, r.seq, u.tf, r.text_len, r.episode FROM records r CROSS JOIN LATERAL unnest(r.terms, r.tfs) AS u(term, tf)
	WHERE r.ns = $1 AND r.seq > $2`

// tailPositionTerms is the most terms for which readPostings finds their
// counts in the tail's records by array_position rather than by unnesting
// each record's arrays.
const tailPositionTerms = 8

// scanPostings adds the postings of rows (term, seq, tf, dl, episode) to
// into, by term, in the rows' order.
func scanPostings(rows pgx.Rows, into map[string][]posting) error {
	for rows.Next() {
		var t string
		var p posting
		if err := rows.Scan(&t, &p.seq, &p.tf, &p.dl, &p.episode); err != nil {
			return err
		}
		into[t] = append(into[t], p)
	}
	return rows.Err()
}

// readPostings returns the postings of terms in namespace ns (terms nil:
// of all its terms): its blocks' and its tail's, sorted by seq, in one
// round trip.
func readPostings(ctx context.Context, tx querier, ns nsInfo, terms []string) (map[string][]posting, error) {
	var b pgx.Batch
	if terms == nil {
		b.Queue(`SELECT term, n, data FROM posting_blocks WHERE ns = $1 ORDER BY term COLLATE "C", last_seq`, ns.id)
		b.Queue(recordPostingsSQL, ns.id, ns.mergedSeq)
	} else {
		b.Queue(`SELECT term, n, data FROM posting_blocks WHERE ns = $1 AND term = ANY($2) ORDER BY term COLLATE "C", last_seq`, ns.id, terms)
		// The tail's records that hold one of the terms (&&: their
		// arrays overlap), each term's count found by array_position
		// for a few terms (measured at a tail of 255 records, 3 terms:
		// 1.7 ms, against 2.5 ms unnesting each record's arrays), by
		// unnesting each record's arrays once for more: array_position
		// reads a record's array again for every term (measured on 300
		// records of 76 terms: 6 terms 3.4 against 4.0 ms, 10 terms 3.6
		// against 3.4, 24 terms 9.3 against 6.9, 63 terms 31.5 against
		// 11.6; a long question in the RealMem development set has
		// dozens).
		if len(terms) <= tailPositionTerms {
			b.Queue(`SELECT t.term, r.seq, r.tfs[array_position(r.terms, t.term)], r.text_len, r.episode
				FROM records r CROSS JOIN unnest($2::text[]) AS t(term)
				WHERE r.ns = $1 AND r.seq > $3 AND r.terms && $2::text[] AND array_position(r.terms, t.term) IS NOT NULL`, ns.id, terms, ns.mergedSeq)
		} else {
			b.Queue(`SELECT u.term, r.seq, u.tf, r.text_len, r.episode
				FROM records r CROSS JOIN LATERAL unnest(r.terms, r.tfs) AS u(term, tf)
				WHERE r.ns = $1 AND r.seq > $3 AND r.terms && $2::text[] AND u.term = ANY($2::text[])`, ns.id, terms, ns.mergedSeq)
		}
	}
	br := tx.SendBatch(ctx, &b)
	defer br.Close()
	type packed struct {
		n    int
		data [][]byte
	}
	blocks := make(map[string]*packed, len(terms))
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var t string
		var n int32
		var data []byte
		if err := rows.Scan(&t, &n, &data); err != nil {
			rows.Close()
			return nil, err
		}
		p := blocks[t]
		if p == nil {
			p = &packed{}
			blocks[t] = p
		}
		p.n += int(n)
		p.data = append(p.data, data)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// The tail first, so that each term's slice is made once at its full
	// size: appending the tail to the decoded blocks copied a frequent
	// term's thousands of postings (measured: 1 ms of CPU a query at 10k
	// records).
	if rows, err = br.Query(); err != nil {
		return nil, err
	}
	tail := make(map[string][]posting, len(terms))
	err = scanPostings(rows, tail)
	rows.Close()
	if err != nil {
		return nil, err
	}
	out := make(map[string][]posting, len(terms))
	for t, p := range blocks {
		ps := make([]posting, 0, p.n+len(tail[t]))
		for _, d := range p.data {
			if ps, err = decodeBlock(ps, d); err != nil {
				return nil, fmt.Errorf("term %q: %w", t, err)
			}
		}
		out[t] = append(ps, tail[t]...)
	}
	for t, ps := range tail {
		if _, ok := blocks[t]; !ok {
			out[t] = ps
		}
	}
	for t, ps := range out {
		if !slices.IsSortedFunc(ps, comparePostings) {
			slices.SortFunc(ps, comparePostings)
			out[t] = ps
		}
	}
	return out, nil
}

func comparePostings(a, b posting) int { return cmp.Compare(a.seq, b.seq) }

// packTails packs the tail of every namespace that holds at least
// mergeRecords records there (a store migrated from schema version 4, or
// whose terms reindex cut again, has all its postings in the tail), each
// loadMergeRecords records at a time, oldest first, in a transaction of
// their own: a pass holds at most that many records' postings in memory
// (all of a namespace's at once would be gigabytes at a million records),
// and blocks and tail hold the namespace's postings at every commit, so a
// pack that stops is taken up by the next open.
func (m *Memory) packTails(ctx context.Context) error {
	rows, err := m.pool.Query(ctx, `SELECT name FROM namespaces WHERE tail_docs >= $1 ORDER BY name`, mergeRecords.Load())
	if err != nil {
		return m.wrap(ctx, "pack postings", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return m.wrap(ctx, "pack postings", err)
	}
	for _, name := range names {
		for more := true; more; {
			err := pgx.BeginFunc(ctx, m.pool, func(tx pgx.Tx) error {
				more = false
				nss, err := lockNamespaces(ctx, tx, map[string]bool{name: true})
				if err != nil {
					return err
				}
				ns := nss[name]
				if ns.tailDocs < mergeRecords.Load() {
					return nil
				}
				rows, err := tx.Query(ctx, `SELECT seq FROM records WHERE ns = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
					ns.id, ns.mergedSeq, loadMergeRecords.Load())
				if err != nil {
					return err
				}
				seqs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
				if err != nil || len(seqs) == 0 {
					return err
				}
				left := max(ns.tailDocs-int64(len(seqs)), 0)
				if err := mergeTail(ctx, tx, ns, seqs[len(seqs)-1], seqs[len(seqs)-1], nil); err != nil {
					return err
				}
				ns.tailDocs = left
				more = left >= mergeRecords.Load()
				return writeStats(ctx, tx, nss)
			})
			if err != nil {
				return m.wrap(ctx, fmt.Sprintf("pack postings of namespace %q", name), err)
			}
		}
	}
	return nil
}
