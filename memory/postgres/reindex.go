package postgres

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory"
)

// reindexPage is how many records reindex reads and tokenizes at a time.
const reindexPage = 4096

// reindex cuts every record's text into terms again with m's tokenizer,
// in tx (migrate's, under the schema lock), when the manifest names
// another tokenizer or none: a record's terms, counts and token count
// (records.terms, tfs, text_len) are kept in its row, so a build whose
// tokenizer cuts some text differently ("KPIs" was kpis, is kpi) would
// otherwise score its queries' terms against another tokenizer's. Only the
// records whose terms change are written. A namespace that holds one has
// its statistics summed again (namespaces.text_len, episodes.len) and its
// posting blocks dropped, its every record left in the tail, which Open's
// packTails then packs into blocks again, as it does for a store migrated
// from schema version 4; blocks and tail hold the namespace's postings at
// every commit. The namespaces' rows are locked first, as writers lock
// them, so that no record is written meanwhile. A page of records at a
// time is read, cut and its changed rows copied to a temporary table, so
// that memory does not grow with the store. It returns how many records
// it read and how many it changed.
func (m *Memory) reindex(ctx context.Context, tx pgx.Tx) (read, changed int, err error) {
	if _, err := tx.Exec(ctx, `SELECT 1 FROM namespaces ORDER BY name FOR UPDATE`); err != nil {
		return 0, 0, err
	}
	type row struct {
		seq     int64
		terms   []string
		tfs     []int32
		textLen int32
	}
	if _, err := tx.Exec(ctx, `CREATE TEMP TABLE reindexed (seq bigint PRIMARY KEY, terms text[] NOT NULL, tfs int[] NOT NULL,
		text_len int NOT NULL) ON COMMIT DROP`); err != nil {
		return 0, 0, err
	}
	touched := map[string]bool{}
	var last int64
	for {
		rows, err := tx.Query(ctx, `SELECT `+recordColumns+`, r.seq, r.terms, r.tfs, r.text_len
			FROM records r JOIN namespaces n ON n.id = r.ns WHERE r.seq > $1 ORDER BY r.seq LIMIT $2`, last, reindexPage)
		if err != nil {
			return 0, 0, err
		}
		var recs []memory.Record
		var stored []row
		for rows.Next() {
			var r memory.Record
			var s row
			if err := scanRecord(rows, &r, &s.seq, &s.terms, &s.tfs, &s.textLen); err != nil {
				rows.Close()
				return 0, 0, err
			}
			recs, stored = append(recs, r), append(stored, s)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, 0, err
		}
		if len(recs) == 0 {
			break
		}
		var out [][]any
		texts := make([]string, len(recs))
		for i := range recs {
			texts[i] = m.keywordText(&recs[i])
		}
		for i, toks := range keyword.TokensEach(m.tok, texts) {
			terms, tfs := termArrays(toks)
			s := stored[i]
			if int(s.textLen) == len(toks) && slices.Equal(s.terms, terms) && slices.Equal(s.tfs, tfs) {
				continue
			}
			out = append(out, []any{s.seq, terms, tfs, int32(len(toks))})
			touched[recs[i].Namespace] = true
		}
		if len(out) > 0 {
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"reindexed"}, []string{"seq", "terms", "tfs", "text_len"}, pgx.CopyFromRows(out)); err != nil {
				return 0, 0, err
			}
		}
		read, changed = read+len(recs), changed+len(out)
		last = stored[len(stored)-1].seq
	}
	if changed == 0 {
		return read, 0, nil
	}
	names := make([]string, 0, len(touched))
	for n := range touched {
		names = append(names, n)
	}
	if _, err := tx.Exec(ctx, `UPDATE records r SET terms = x.terms, tfs = x.tfs, text_len = x.text_len FROM reindexed x WHERE r.seq = x.seq`); err != nil {
		return 0, 0, err
	}
	for _, q := range []string{
		`DELETE FROM posting_blocks WHERE ns IN (SELECT id FROM namespaces WHERE name = ANY($1))`,
		`UPDATE episodes e SET len = s.len
			FROM (SELECT r.ns, r.episode, sum(r.text_len) AS len FROM records r JOIN namespaces n ON n.id = r.ns
				WHERE n.name = ANY($1) GROUP BY r.ns, r.episode) s
			WHERE e.ns = s.ns AND e.episode = s.episode AND e.len <> s.len`,
		`UPDATE namespaces n SET text_len = (SELECT coalesce(sum(text_len), 0) FROM records WHERE ns = n.id),
			merged_seq = 0, tail_docs = text_docs WHERE name = ANY($1)`,
	} {
		if _, err := tx.Exec(ctx, q, names); err != nil {
			return 0, 0, err
		}
	}
	return read, changed, nil
}
