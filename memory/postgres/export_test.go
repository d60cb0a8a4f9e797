package postgres

import (
	"context"
	"fmt"
)

// MigrationSQL returns migration i's SQL (0: the first) for dimension dim.
func MigrationSQL(i, dim int) string { return migrations[i].sql(dim) }

// SetBlocks sets how many postings a block holds and how many records a
// namespace's tail holds before a write packs it, until the returned
// function restores them.
func SetBlocks(postings int, records int64) (restore func()) {
	p, r := blockPostings, mergeRecords
	blockPostings, mergeRecords = postings, records
	return func() { blockPostings, mergeRecords = p, r }
}

// CheckBlocks returns an error unless every namespace's posting blocks
// hold exactly its postings up to its merged_seq, each block's in seq
// order, at most blockPostings of them, none above the block's last_seq
// or at or below the previous block's.
func CheckBlocks(ctx context.Context, m *Memory) error {
	type key struct {
		ns   int32
		term string
		seq  int64
	}
	want := map[key]posting{}
	rows, err := m.pool.Query(ctx, `SELECT p.ns, p.term, p.seq, p.tf, p.dl, p.episode FROM postings p JOIN namespaces n ON n.id = p.ns WHERE p.seq <= n.merged_seq`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var k key
		var p posting
		if err := rows.Scan(&k.ns, &k.term, &k.seq, &p.tf, &p.dl, &p.episode); err != nil {
			return err
		}
		p.seq = k.seq
		want[k] = p
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows, err = m.pool.Query(ctx, `SELECT b.ns, b.term, b.last_seq, b.n, b.data, coalesce(lag(b.last_seq) OVER (PARTITION BY b.ns, b.term ORDER BY b.last_seq), 0), n.merged_seq
		FROM posting_blocks b JOIN namespaces n ON n.id = b.ns`)
	if err != nil {
		return err
	}
	got := 0
	for rows.Next() {
		var k key
		var last, prev, merged int64
		var n int32
		var data []byte
		if err := rows.Scan(&k.ns, &k.term, &last, &n, &data, &prev, &merged); err != nil {
			return err
		}
		ps, err := decodeBlock(nil, data)
		if err != nil {
			return err
		}
		if len(ps) != int(n) || len(ps) == 0 || len(ps) > blockPostings || last > merged {
			return fmt.Errorf("block %d %q %d: %d postings, n = %d, merged_seq %d", k.ns, k.term, last, len(ps), n, merged)
		}
		for i, p := range ps {
			k.seq = p.seq
			if p.seq > last || p.seq <= prev || i > 0 && p.seq <= ps[i-1].seq {
				return fmt.Errorf("block %d %q %d (previous %d): posting of %d out of order", k.ns, k.term, last, prev, p.seq)
			}
			if want[k] != p {
				return fmt.Errorf("block %d %q %d: posting %+v, postings table has %+v", k.ns, k.term, last, p, want[k])
			}
			got++
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if got != len(want) {
		return fmt.Errorf("%d postings in blocks, %d in the postings table up to merged_seq", got, len(want))
	}
	return nil
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
	w, c := pendingWriteChunks, pendingCapChunks
	pendingWriteChunks, pendingCapChunks = writeChunks, capChunks
	return func() { pendingWriteChunks, pendingCapChunks = w, c }
}
