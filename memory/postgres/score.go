package postgres

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/internal/ranking"
)

// scored is a record and its keyword score.
type scored struct {
	seq   int64
	id    string
	score float64
}

func compareScored(a, b scored) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	return strings.Compare(a.id, b.id)
}

// keywordSearch ranks the records of the namespaces by keyword score, best
// first, up to depth: memory/longterm's keywordSearch (question words left
// out of the query).
func (m *Memory) keywordSearch(ctx context.Context, tx pgx.Tx, q memory.Query, nss []nsInfo, text string, depth int) ([]scored, error) {
	text = ranking.WithoutQuestionWords(text)
	var out []scored
	for _, ns := range nss {
		r, err := m.keywordNamespace(ctx, tx, q, ns, text, depth)
		if err != nil {
			return nil, err
		}
		out = append(out, r...)
	}
	slices.SortFunc(out, compareScored)
	if len(out) > depth {
		out = out[:depth]
	}
	return out, nil
}

// keywordNamespace is memory/longterm's keywordNamespace over the
// namespace's postings and statistics in PostgreSQL, in one statement
// (keywordSQL): BM25 over the records' own words (the query without its
// question words), plus what each record's neighbours score
// (WithNeighbourWeight for the record before it, WithNextWeight for the
// one after) and what its episode scores (WithEpisodeWeight), with the
// boost of named speakers.
func (m *Memory) keywordNamespace(ctx context.Context, tx pgx.Tx, q memory.Query, ns nsInfo, text string, depth int) ([]scored, error) {
	speakers, rest, err := m.namedSpeakers(ctx, tx, ns, text)
	if err != nil {
		return nil, err
	}
	if len(speakers) > 0 && len(m.tok.Tokens(rest)) == 0 {
		// Only a name: look for it in the text.
		speakers, rest = nil, text
	}
	groups := keyword.QueryGroups(m.tok, rest)
	if len(groups) == 0 || ns.textDocs == 0 {
		return nil, nil
	}
	// One row per (group, term): its group, whether it is a part of a
	// code, and the weight of its score in the group.
	var qTerms []string
	var qGroup []int32
	var qPart []bool
	var qWeight []float64
	for gi, g := range groups {
		for _, t := range g.Main {
			qTerms, qGroup, qPart, qWeight = append(qTerms, t), append(qGroup, int32(gi)), append(qPart, false), append(qWeight, 1)
		}
		pw := keyword.PartWeight / float64(max(len(g.Parts), 1))
		for _, t := range g.Parts {
			qTerms, qGroup, qPart, qWeight = append(qTerms, t), append(qGroup, int32(gi)), append(qPart, true), append(qWeight, pw)
		}
	}
	terms := slices.Clone(qTerms)
	slices.Sort(terms)
	terms = slices.Compact(terms)
	n := float64(ns.textDocs)
	avg := float64(ns.textLen) / n
	if avg == 0 {
		avg = 1
	}
	// Episodes: documents of all their records' texts, so the same total
	// length over fewer documents.
	ne := float64(max(ns.episodeDocs, 1))
	avgEp := float64(ns.textLen) / ne
	if avgEp == 0 {
		avgEp = 1
	}
	var from, to *time.Time
	if !q.From.IsZero() {
		from = &q.From
	}
	if !q.To.IsZero() {
		to = &q.To
	}
	if speakers == nil {
		speakers = []string{}
	}
	// Fetch more than depth from the text: a neighbour's score can raise a
	// record that its own text does not rank first.
	sql := keywordAnyTimeSQL
	if from != nil || to != nil {
		sql = keywordSQL
	}
	rows, err := tx.Query(ctx, sql, ns.id, terms, qTerms, qGroup, qPart, qWeight,
		n, k1+1, k1*(1-b), k1*b/avg, 2*depth, m.opts.neighbourWeight, m.opts.nextWeight,
		from, to, speakers, 1+m.opts.speakerBoost, depth,
		ne, k1*b/avgEp, m.opts.episodeWeight, episodesBoosted)
	if err != nil {
		return nil, m.wrap(ctx, "query: keyword", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (scored, error) {
		var r scored
		err := row.Scan(&r.seq, &r.id, &r.score)
		return r, err
	})
	if err != nil {
		return nil, m.wrap(ctx, "query: keyword", err)
	}
	slices.SortFunc(out, compareScored)
	return out, nil
}

// keywordSQL scores a namespace's records for a query by BM25 as
// keyword.Index does (the same formula and treatment of codes' whole
// forms and parts): idf = ln(1 + (N − df + 0.5)/(df + 0.5)), each term
// idf·(k1+1)·tf/(tf + k1·(1 − b) + k1·b·len/avglen), a group the best of
// its whole forms or the weighted sum of its parts (PartWeight times their
// mean), whichever is higher. Then, as memory/longterm's keywordNamespace:
// the text's best $11 records in the time range count their own score,
// and the text's best $11 at any time give their follower (whose prev_seq
// is theirs) $12 times their score and their leader (their prev_seq) $13
// times it. Episodes (addEpisodes): the same BM25 over the namespace's
// episodes, from the same postings summed by episode ($19 episodes,
// $20 = k1·b/avg episode length); each record scored so far (in the time
// range) whose episode is one of the best $22 gains $21 times the best
// record score times its episode's score relative to the best episode's,
// unless everything scored is in one episode (longterm's rule).
// Last, a record spoken by a named speaker ($16) scores $17 times the sum.
// It returns the best $18 records in the time range ($14, $15; NULL:
// open), ties by id.
//
// The other parameters: $1 the namespace, $2 the distinct terms, $3–$6 the
// query's (term, group, is a part, weight) rows, $7 N, $8 k1+1, $9 k1·(1−b),
// $10 k1·b/avglen.
var keywordSQL = `
WITH p AS MATERIALIZED (
	SELECT term, seq, episode, tf::float8 AS tf, dl::float8 AS dl FROM postings WHERE ns = $1 AND term = ANY($2::text[])
), df AS (
	SELECT term, ln(1 + ($7::float8 - count(*) + 0.5) / (count(*) + 0.5)) * $8::float8 AS w FROM p GROUP BY term
), q AS (
	SELECT * FROM unnest($3::text[], $4::int[], $5::bool[], $6::float8[]) AS q(term, g, part, pw)
), grp AS (
	SELECT p.seq, ` + groupScore("df.w", "p.tf", "$10::float8 * p.dl") + ` AS s
	FROM q JOIN df USING (term) JOIN p USING (term)
	GROUP BY p.seq, q.g
), doc AS (
	SELECT seq, sum(s) AS score FROM grp GROUP BY seq
), src AS (
	SELECT seq, score FROM doc ORDER BY score DESC, seq LIMIT $11
), own AS (` + ownInRange + `), total AS (
	SELECT seq, sum(score) AS score FROM (
		SELECT seq, score FROM own
		UNION ALL
		SELECT f.seq, $12::float8 * s.score FROM src s JOIN records f ON f.prev_seq = s.seq WHERE $12::float8 > 0
		UNION ALL
		SELECT r.prev_seq, $13::float8 * s.score FROM src s JOIN records r USING (seq) WHERE $13::float8 > 0 AND r.prev_seq IS NOT NULL
	) u GROUP BY seq
), scores AS MATERIALIZED (
	SELECT r.seq, r.id, r.speaker, r.episode, t.score FROM total t JOIN records r USING (seq)
	WHERE ($14::timestamptz IS NULL OR r.time >= $14) AND ($15::timestamptz IS NULL OR r.time < $15)
), ep AS (
	SELECT term, episode, sum(tf) AS tf FROM p WHERE $21::float8 > 0 GROUP BY term, episode
), edf AS (
	SELECT term, ln(1 + ($19::float8 - count(*) + 0.5) / (count(*) + 0.5)) * $8::float8 AS w FROM ep GROUP BY term
), egrp AS (
	SELECT ep.episode, ` + groupScore("edf.w", "ep.tf", "$20::float8 * e.len") + ` AS s
	FROM q JOIN edf USING (term) JOIN ep USING (term) JOIN episodes e ON e.ns = $1 AND e.episode = ep.episode
	GROUP BY ep.episode, q.g
), etop AS (
	SELECT episode, sum(s) AS score FROM egrp GROUP BY episode ORDER BY score DESC, episode LIMIT $22
), bonus AS (
	SELECT t.episode, $21::float8 * b.best * t.score / b.top AS add
	FROM etop t, (SELECT (SELECT max(score) FROM scores) AS best, (SELECT max(score) FROM etop) AS top) b
	WHERE b.best > 0 AND b.top > 0
	-- One episode lends the same to all the query found: skip it.
	AND (SELECT count(DISTINCT episode) FROM scores) > 1
)
SELECT s.seq, s.id, (s.score + coalesce(x.add, 0)) * CASE WHEN s.speaker = ANY($16::text[]) THEN $17::float8 ELSE 1 END AS score
FROM scores s LEFT JOIN bonus x USING (episode)
ORDER BY score DESC, s.id COLLATE "C" LIMIT $18`

// groupScore is the BM25 score of a query group in a document, aggregated
// over the group's terms (rows of q): the best of its whole forms or the
// weighted sum of its parts, whichever is higher. w is a term's idf·(k1+1),
// tf its count in the document, lenTerm k1·b·len/avglen; $9 is k1·(1−b).
func groupScore(w, tf, lenTerm string) string {
	term := w + " * " + tf + " / (" + tf + " + $9::float8 + " + lenTerm + ")"
	return "greatest(coalesce(max(" + term + ") FILTER (WHERE NOT q.part), 0),\n\t\tcoalesce(sum(q.pw * (" + term + ")) FILTER (WHERE q.part), 0))"
}

// ownInRange is keywordSQL's text's best in the time range; without a time
// range they are src (keywordAnyTimeSQL), not a second pass over every
// matching record.
const ownInRange = `
	SELECT d.seq, d.score FROM doc d JOIN records r USING (seq)
	WHERE ($14::timestamptz IS NULL OR r.time >= $14) AND ($15::timestamptz IS NULL OR r.time < $15)
	ORDER BY d.score DESC, d.seq LIMIT $11
`

var keywordAnyTimeSQL = strings.Replace(keywordSQL, ownInRange, `SELECT seq, score FROM src`, 1)

// episodesBoosted is how many of the best-matching episodes lend their
// score to their records: memory/longterm's episodesBoosted.
const episodesBoosted = 3

// BM25 parameters: keyword.Index's defaults.
const (
	k1 = keyword.DefaultK1
	b  = keyword.DefaultB
)

// namedSpeakers splits a query into the speakers of the namespace it names
// and the rest: memory/longterm's nsTurns.namedSpeakers over the
// namespace's speakers table.
func (m *Memory) namedSpeakers(ctx context.Context, tx pgx.Tx, ns nsInfo, query string) ([]string, string, error) {
	rows, err := tx.Query(ctx, `SELECT speaker FROM speakers WHERE ns = $1 AND n > 0 ORDER BY speaker`, ns.id)
	if err != nil {
		return nil, "", m.wrap(ctx, "query: speakers", err)
	}
	all, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, "", m.wrap(ctx, "query: speakers", err)
	}
	if len(all) == 0 {
		return nil, query, nil
	}
	st := ranking.SpeakerTerms{}
	for _, s := range all {
		st.Add(m.tok, s)
	}
	speakers, rest := st.NamedSpeakers(m.tok, len(all), query)
	return speakers, rest, nil
}
