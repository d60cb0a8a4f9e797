package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/engine"
)

// nsInfo is a namespace's id and keyword statistics.
type nsInfo struct {
	id                int32
	name              string
	textDocs, textLen int64
	episodeDocs       int64
	mergedSeq         int64    // postings up to it are in blocks (blocks.go)
	speakers          []string // its speakers, sorted
}

// Query searches the memory with its engine (package engine: the ranking
// every store shares; see WithEngine), as memory/longterm's Memory.Query
// does: the same records rank alike in both. It reads one snapshot of the
// database (a repeatable-read, read-only transaction; a second one for
// the neighbours of a reranked search).
func (m *Memory) Query(ctx context.Context, q memory.Query) ([]memory.Hit, error) {
	return engine.Search(ctx, m.opts.engine, m, q)
}

// namespaces reads the namespace named ns, or all of them (ns empty).
func namespaces(ctx context.Context, tx pgx.Tx, ns string) ([]nsInfo, error) {
	sql := `SELECT id, name, text_docs, text_len, episode_docs, merged_seq,
		array(SELECT speaker FROM speakers s WHERE s.ns = namespaces.id AND s.n > 0 ORDER BY speaker)
		FROM namespaces WHERE text_docs > 0`
	args := []any{}
	if ns != "" {
		sql += ` AND name = $1`
		args = append(args, ns)
	}
	rows, err := tx.Query(ctx, sql+` ORDER BY name`, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (nsInfo, error) {
		var n nsInfo
		err := row.Scan(&n.id, &n.name, &n.textDocs, &n.textLen, &n.episodeDocs, &n.mergedSeq, &n.speakers)
		return n, err
	})
}
