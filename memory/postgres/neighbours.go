package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/memory"
)

// neighbours fills each hit's Before and After (memory.Query.Neighbours)
// with up to n records on each side of it in its conversation: following
// prev_seq back, and the records whose prev_seq is the current one
// forward, as memory/longterm walks its neighbour links. seqs[i] is
// hits[i]'s record.
func (m *Memory) neighbours(ctx context.Context, tx pgx.Tx, hits []memory.Hit, seqs []int64, n int) error {
	if n <= 0 || len(hits) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, `
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
		return m.wrap(ctx, "query: neighbours", err)
	}
	defer rows.Close()
	at := make(map[int64]int, len(seqs))
	for i, s := range seqs {
		at[s] = i
	}
	for rows.Next() {
		var seed int64
		var pos int
		var r memory.Record
		if err := scanRecord(rows, &r, &seed, &pos); err != nil {
			return m.wrap(ctx, "query: neighbours", err)
		}
		h := &hits[at[seed]]
		if pos < 0 {
			h.Before = append(h.Before, r) // oldest first: ORDER BY pos
		} else {
			h.After = append(h.After, r)
		}
	}
	return m.wrap(ctx, "query: neighbours", rows.Err())
}
