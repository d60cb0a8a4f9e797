package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

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
	// ended counts its records with a valid_until; latest is the latest
	// moment one starts (zero: unknown, as in a namespace that holds
	// none).
	ended  int64
	latest time.Time
	// newest is the time of its newest record (the one of the highest
	// seq: last_seq's), when hasNewest (a namespace of an older schema
	// may not know it).
	newest    time.Time
	hasNewest bool
	// xmin is the row's xmin: with the statistics, its version
	// (nsVersion).
	xmin string
}

// filters reports whether a search of scope over the namespaces nss must
// leave records out for their validity: it does not read history, and a
// record has ended or starts after the search's moment.
func filters(nss []nsInfo, scope engine.Scope) bool {
	if scope.History {
		return false
	}
	for _, n := range nss {
		if n.ended > 0 || n.latest.After(scope.AsOf) {
			return true
		}
	}
	return false
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
func namespaces(ctx context.Context, q querier, ns string) ([]nsInfo, error) {
	sql, args := namespacesSQL(ns)
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return collectNamespaces(rows)
}

// namespacesSQL is the statement namespaces runs.
func namespacesSQL(ns string) (string, []any) {
	sql := `SELECT id, name, text_docs, text_len, episode_docs, merged_seq,
		array(SELECT speaker FROM speakers s WHERE s.ns = namespaces.id AND s.n > 0 ORDER BY speaker),
		ended, coalesce(latest, 'infinity'), CASE WHEN last_seq IS NOT NULL THEN last_time END, xmin::text
		FROM namespaces WHERE text_docs > 0`
	args := []any{}
	if ns != "" {
		sql += ` AND name = $1`
		args = append(args, ns)
	}
	return sql + ` ORDER BY name`, args
}

// collectNamespaces reads namespacesSQL's rows.
func collectNamespaces(rows pgx.Rows) ([]nsInfo, error) {
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (nsInfo, error) {
		var n nsInfo
		var latest, newest pgtype.Timestamptz
		err := row.Scan(&n.id, &n.name, &n.textDocs, &n.textLen, &n.episodeDocs, &n.mergedSeq, &n.speakers, &n.ended, &latest, &newest, &n.xmin)
		n.newest, n.hasNewest = newest.Time, newest.Valid
		n.latest = latest.Time
		if latest.InfinityModifier != pgtype.Finite {
			// Not known (a namespace of the previous schema, whose
			// migration found no record): filter.
			n.latest = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
		}
		return n, err
	})
}
