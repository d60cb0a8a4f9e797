package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Verify checks that the store's rows agree with each other, as a reader
// of a consistent snapshot (one read-only, repeatable-read transaction:
// concurrent writers neither disturb the checks nor wait for them). It
// returns each kind of damage it found as a sentence that names it, how
// many rows it touches and one of them, oldest first:
//
//   - the schema: every table present, the migrations 1 to SchemaVersion
//     each recorded once, the vector column of the manifest's dimension;
//   - the keyword statistics: each namespace's record count, total length
//     and newest record, each record's terms (distinct, in order, their
//     counts positive and summing to its length), the episodes' lengths and
//     counts, the speakers' counts, the posting blocks against the records'
//     terms;
//   - orphans: records, chunks, blocks, episodes and speakers of no
//     namespace, chunks of no record, records without chunks, links to a
//     record that is gone.
//
// No problems is a store whose rows agree. The error is for checks that
// could not run (a server that cannot be reached wraps
// memory.ErrUnavailable); the schema version and the manifest's embedder
// are Open's to check.
func (m *Memory) Verify(ctx context.Context) ([]string, error) {
	if err := m.check(ctx); err != nil {
		return nil, err
	}
	var problems []string
	err := pgx.BeginTxFunc(ctx, m.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var err error
		problems, err = m.verifySchema(ctx, tx)
		if err != nil || len(problems) > 0 {
			return err // the row checks need every table
		}
		for _, c := range rowChecks {
			var n int64
			var example *string
			if err := tx.QueryRow(ctx, c.sql).Scan(&n, &example); err != nil {
				return fmt.Errorf("%s: %w", c.what, err)
			}
			if n > 0 {
				p := fmt.Sprintf("%s: %d", c.what, n)
				if example != nil {
					p += " (first: " + *example + ")"
				}
				problems = append(problems, p)
			}
		}
		if err := checkBlocks(ctx, tx); errors.Is(err, errBlocks) {
			problems = append(problems, err.Error())
		} else if err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return nil, m.wrap(ctx, "verify", err)
	}
	return problems, nil
}

// storeTables are the tables of a store at SchemaVersion.
var storeTables = []string{"manifest", "schema_migrations", "namespaces", "records", "chunks", "posting_blocks", "episodes", "speakers", "deferred_indexes"}

// verifySchema checks that the store's tables are there, that its
// migrations were each recorded once, and that the vector column has the
// manifest's dimension and the type the embedder's vectors are held in.
func (m *Memory) verifySchema(ctx context.Context, tx pgx.Tx) ([]string, error) {
	var problems []string
	var missing []string
	for _, t := range storeTables {
		var ok bool
		if err := tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, pgx.Identifier{m.schema, t}.Sanitize()).Scan(&ok); err != nil {
			return nil, err
		}
		if !ok {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		return []string{fmt.Sprintf("schema %q lacks the tables %s", m.schema, strings.Join(missing, ", "))}, nil
	}
	var versions, distinct, lowest, highest int
	if err := tx.QueryRow(ctx, `SELECT count(*), count(DISTINCT version), coalesce(min(version), 0), coalesce(max(version), 0) FROM schema_migrations`).
		Scan(&versions, &distinct, &lowest, &highest); err != nil {
		return nil, err
	}
	if versions != distinct || lowest != 1 || highest != distinct {
		problems = append(problems, fmt.Sprintf("schema_migrations: %d rows, versions %d to %d (%d distinct): want each of 1 to %d once", versions, lowest, highest, distinct, highest))
	}
	var manifests, dim int
	if err := tx.QueryRow(ctx, `SELECT count(*), coalesce(max(dim), 0) FROM manifest`).Scan(&manifests, &dim); err != nil {
		return nil, err
	}
	if manifests != 1 {
		problems = append(problems, fmt.Sprintf("manifest: %d rows, want 1", manifests))
	}
	colType, colDim, err := vecColumn(ctx, tx)
	if err != nil {
		return nil, err
	}
	if colDim != dim {
		problems = append(problems, fmt.Sprintf("chunks.embedding holds vectors of dimension %d, the manifest says %d", colDim, dim))
	}
	// Migration 10 holds a lexical embedder's vectors sparse (sparse.go).
	want := "vector"
	if holdsSparse(m.emb, dim) {
		want = "sparsevec"
	}
	if highest >= 10 && colType != want {
		problems = append(problems, fmt.Sprintf("chunks.embedding is of type %s, want %s for embedder %s at schema version %d", colType, want, m.emb.Name(), highest))
	}
	return problems, nil
}

// nsName is SQL for the name of the namespace whose id col holds (the id
// when there is no such namespace).
func nsName(col string) string {
	return `coalesce((SELECT name FROM namespaces WHERE id = ` + col + `), ` + col + `::text)`
}

// rowChecks are Verify's checks of the rows: each statement returns how
// many rows are wrong and a description of the first (NULL for none).
var rowChecks = []struct{ what, sql string }{
	{"namespaces whose statistics disagree with their records", `
SELECT count(*), min(format('namespace %s: text_docs %s, text_len %s, last_seq %s; its records: %s, %s tokens, newest %s',
	n.name, n.text_docs, n.text_len, coalesce(n.last_seq::text, 'none'), r.n, r.len, coalesce(r.newest::text, 'none')))
FROM namespaces n CROSS JOIN LATERAL (SELECT count(*) AS n, coalesce(sum(text_len), 0) AS len, max(seq) AS newest FROM records WHERE ns = n.id) r
WHERE n.text_docs <> r.n OR n.text_len <> r.len OR n.last_seq IS NOT NULL AND n.last_seq IS DISTINCT FROM r.newest`},
	{"records whose terms disagree with them", `
SELECT count(*), min(format('record %s: %s tokens, %s terms and %s counts summing to %s, %s of them not above 0, %s distinct, %s out of order',
	r.id, r.text_len, cardinality(r.terms), cardinality(r.tfs), t.sum, t.bad, t.distinct, t.unordered))
FROM records r CROSS JOIN LATERAL (SELECT coalesce(sum(tf), 0) AS sum, count(*) FILTER (WHERE tf IS NULL OR tf <= 0) AS bad,
	count(DISTINCT term) AS distinct, count(*) FILTER (WHERE term <= prev COLLATE "C") AS unordered
	FROM (SELECT term, tf, lag(term) OVER (ORDER BY o) AS prev FROM unnest(r.terms, r.tfs) WITH ORDINALITY AS u(term, tf, o)) u) t
WHERE cardinality(r.terms) <> cardinality(r.tfs) OR t.sum <> r.text_len OR t.bad > 0 OR t.distinct <> cardinality(r.terms) OR t.unordered > 0`},
	{"namespaces whose episode count disagrees with their episodes", `
SELECT count(*), min(format('namespace %s: episode_docs %s, %s episodes', n.name, n.episode_docs, e.n))
FROM namespaces n CROSS JOIN LATERAL (SELECT count(*) AS n FROM episodes WHERE ns = n.id) e WHERE n.episode_docs <> e.n`},
	{"episodes whose length or record count disagrees with their records", `
SELECT count(*), min(format('episode %s of namespace %s: len %s, records %s; its records: %s tokens, %s', e.episode, ` + nsName("e.ns") + `, e.len, e.records, coalesce(r.len, 0), coalesce(r.n, 0)))
FROM episodes e LEFT JOIN (SELECT ns, episode, sum(text_len) AS len, count(*) AS n FROM records GROUP BY ns, episode) r USING (ns, episode)
WHERE r.n IS NULL OR r.len <> e.len OR r.n <> e.records`},
	{"records of an episode that has no row", `
SELECT count(*), min(format('record %s: episode %s', r.id, r.episode)) FROM records r
WHERE NOT EXISTS (SELECT 1 FROM episodes e WHERE e.ns = r.ns AND e.episode = r.episode)`},
	{"records linked to a previous record that is gone, in another namespace, newer or in another episode", `
SELECT count(*), min(format('record %s: prev_seq %s', r.id, r.prev_seq)) FROM records r LEFT JOIN records l ON l.seq = r.prev_seq
WHERE r.prev_seq IS NOT NULL AND (l.seq IS NULL OR l.ns <> r.ns OR l.seq >= r.seq OR l.episode <> r.episode)`},
	{"records without chunks", `
SELECT count(*), min(format('record %s', r.id)) FROM records r WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.seq = r.seq)`},
	{"chunks of no record, or of another namespace or time than their record's", `
SELECT count(*), min(format('chunk %s: record seq %s', c.id, c.seq)) FROM chunks c LEFT JOIN records r ON r.seq = c.seq
WHERE r.seq IS NULL OR r.ns <> c.ns OR r.time <> c.time`},
	{"rows of a namespace that does not exist", `
SELECT count(*), min(format('%s of namespace %s', t, ns)) FROM (
	SELECT 'a record' AS t, ns FROM records UNION ALL SELECT 'a posting block', ns FROM posting_blocks UNION ALL
	SELECT 'an episode', ns FROM episodes UNION ALL SELECT 'a speaker', ns FROM speakers UNION ALL SELECT 'a chunk', ns FROM chunks) x
WHERE NOT EXISTS (SELECT 1 FROM namespaces n WHERE n.id = x.ns)`},
	{"speakers whose record count disagrees with their records", `
SELECT count(*), min(format('speaker %s of namespace %s: n %s, %s records', speaker, ` + nsName("ns") + `, coalesce(s.n, 0), coalesce(r.n, 0)))
FROM speakers s FULL JOIN (SELECT ns, speaker, count(*) AS n FROM records WHERE speaker <> '' GROUP BY ns, speaker) r USING (ns, speaker)
WHERE s.n IS DISTINCT FROM r.n`},
	{"indexes dropped by a load that is running or did not finish (the next open builds them)", `
SELECT count(*), min(name) FROM deferred_indexes`},
}

// errBlocks marks checkBlocks's findings (damage, not a failed query).
var errBlocks = errors.New("posting blocks disagree with the records' terms")

// checkBlocks returns an error wrapping errBlocks unless every namespace's
// posting blocks hold exactly its records' terms up to its merged_seq, each
// block's in seq order, at most blockPostings of them, none above the
// block's last_seq or at or below the previous block's.
func checkBlocks(ctx context.Context, tx pgx.Tx) error {
	type key struct {
		ns   int32
		term string
		seq  int64
	}
	want := map[key]posting{}
	prows, err := tx.Query(ctx, `SELECT r.ns, u.term, r.seq, u.tf, r.text_len, r.episode FROM records r JOIN namespaces n ON n.id = r.ns
		CROSS JOIN LATERAL unnest(r.terms, r.tfs) AS u(term, tf) WHERE r.seq <= n.merged_seq`)
	if err != nil {
		return err
	}
	defer prows.Close()
	for prows.Next() {
		var k key
		var p posting
		if err := prows.Scan(&k.ns, &k.term, &k.seq, &p.tf, &p.dl, &p.episode); err != nil {
			return err
		}
		p.seq = k.seq
		want[k] = p
	}
	if err := prows.Err(); err != nil {
		return err
	}
	rows, err := tx.Query(ctx, `SELECT b.ns, b.term, b.last_seq, b.n, b.data, coalesce(lag(b.last_seq) OVER (PARTITION BY b.ns, b.term ORDER BY b.last_seq), 0), n.merged_seq
		FROM posting_blocks b JOIN namespaces n ON n.id = b.ns`)
	if err != nil {
		return err
	}
	defer rows.Close()
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
			return fmt.Errorf("%w: block of term %q of namespace %d up to seq %d: %w", errBlocks, k.term, k.ns, last, err)
		}
		if len(ps) != int(n) || len(ps) == 0 || len(ps) > int(blockPostings.Load()) || last > merged {
			return fmt.Errorf("%w: block of term %q of namespace %d up to seq %d: %d postings, n = %d, merged_seq %d", errBlocks, k.term, k.ns, last, len(ps), n, merged)
		}
		for i, p := range ps {
			k.seq = p.seq
			if p.seq > last || p.seq <= prev || i > 0 && p.seq <= ps[i-1].seq {
				return fmt.Errorf("%w: block of term %q of namespace %d up to seq %d (previous %d): posting of seq %d out of order", errBlocks, k.term, k.ns, last, prev, p.seq)
			}
			if want[k] != p {
				return fmt.Errorf("%w: block of term %q of namespace %d up to seq %d: posting %+v, the records' terms have %+v", errBlocks, k.term, k.ns, last, p, want[k])
			}
			got++
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if got != len(want) {
		return fmt.Errorf("%w: %d postings in blocks, %d terms of records up to merged_seq", errBlocks, got, len(want))
	}
	return nil
}
