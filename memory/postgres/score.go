package postgres

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory"
)

// The keyword fields: a record's header and text, and the previous
// record's text (the neighbour field).
const (
	fieldText = 0
	fieldPrev = 1
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
// first, up to depth: memory/longterm's keywordSearch.
func (m *Memory) keywordSearch(ctx context.Context, tx pgx.Tx, q memory.Query, nss []nsInfo, text string, depth int) ([]scored, error) {
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
// namespace's postings and statistics in PostgreSQL.
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
	if len(groups) == 0 {
		return nil, nil
	}
	var terms []string
	for _, g := range groups {
		terms = append(terms, g.Main...)
		terms = append(terms, g.Parts...)
	}
	slices.Sort(terms)
	terms = slices.Compact(terms)
	fields := []int16{fieldText}
	if m.opts.neighbourWeight > 0 {
		fields = append(fields, fieldPrev)
	}
	rows, err := tx.Query(ctx, `SELECT field, term, seq, tf, dl FROM postings WHERE ns = $1 AND field = ANY($2) AND term = ANY($3)`, ns.id, fields, terms)
	if err != nil {
		return nil, m.wrap(ctx, "query: postings", err)
	}
	lists := [2]map[string][]posting{{}, {}}
	for rows.Next() {
		var f int16
		var t string
		var p posting
		if err := rows.Scan(&f, &t, &p.seq, &p.tf, &p.dl); err != nil {
			rows.Close()
			return nil, m.wrap(ctx, "query: postings", err)
		}
		lists[f][t] = append(lists[f][t], p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, m.wrap(ctx, "query: postings", err)
	}
	textScores := bm25(groups, lists[fieldText], ns.textDocs, ns.textLen)
	var prevScores map[int64]float64
	if m.opts.neighbourWeight > 0 {
		prevScores = bm25(groups, lists[fieldPrev], ns.prevDocs, ns.prevLen)
	}
	if !q.From.IsZero() || !q.To.IsZero() {
		if err := m.keepInRange(ctx, tx, q, textScores, prevScores); err != nil {
			return nil, err
		}
	}
	// Fetch more than depth from each field: the sum of two fields can
	// raise a record that neither ranks first.
	fetch := 2 * depth
	scores := map[int64]float64{}
	for _, r := range topBySeq(textScores, fetch) {
		scores[r.seq] += r.score
	}
	if w := m.opts.neighbourWeight; w > 0 {
		for _, r := range topBySeq(prevScores, fetch) {
			scores[r.seq] += w * r.score
		}
	}
	if len(scores) == 0 {
		return nil, nil
	}
	seqs := make([]int64, 0, len(scores))
	for s := range scores {
		seqs = append(seqs, s)
	}
	rows, err = tx.Query(ctx, `SELECT seq, id, speaker FROM records WHERE seq = ANY($1)`, seqs)
	if err != nil {
		return nil, m.wrap(ctx, "query: records", err)
	}
	out := make([]scored, 0, len(scores))
	for rows.Next() {
		var r scored
		var speaker string
		if err := rows.Scan(&r.seq, &r.id, &speaker); err != nil {
			rows.Close()
			return nil, m.wrap(ctx, "query: records", err)
		}
		r.score = scores[r.seq]
		if len(speakers) > 0 && slices.Contains(speakers, speaker) {
			r.score *= 1 + m.opts.speakerBoost
		}
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, m.wrap(ctx, "query: records", err)
	}
	slices.SortFunc(out, compareScored)
	if len(out) > depth {
		out = out[:depth]
	}
	return out, nil
}

// keepInRange drops the records outside the query's time range from the
// score maps (the keep function of keyword.Index.Search: statistics stay
// the namespace's).
func (m *Memory) keepInRange(ctx context.Context, tx pgx.Tx, q memory.Query, maps ...map[int64]float64) error {
	seen := map[int64]bool{}
	var seqs []int64
	for _, mp := range maps {
		for s := range mp {
			if !seen[s] {
				seen[s] = true
				seqs = append(seqs, s)
			}
		}
	}
	if len(seqs) == 0 {
		return nil
	}
	sql := `SELECT seq FROM records WHERE seq = ANY($1)`
	args := []any{seqs}
	if !q.From.IsZero() {
		args = append(args, q.From)
		sql += fmt.Sprintf(" AND time >= $%d", len(args))
	}
	if !q.To.IsZero() {
		args = append(args, q.To)
		sql += fmt.Sprintf(" AND time < $%d", len(args))
	}
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return m.wrap(ctx, "query: time range", err)
	}
	in, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return m.wrap(ctx, "query: time range", err)
	}
	keep := make(map[int64]bool, len(in))
	for _, s := range in {
		keep[s] = true
	}
	for _, mp := range maps {
		for s := range mp {
			if !keep[s] {
				delete(mp, s)
			}
		}
	}
	return nil
}

// posting is one document of a term's posting list.
type posting struct {
	seq int64
	tf  int32
	dl  int32 // the document's length in the field
}

// BM25 parameters: keyword.Index's defaults.
const (
	k1 = keyword.DefaultK1
	b  = keyword.DefaultB
)

// bm25 scores every document that matches a group, as keyword.Index's
// score does (the same formula, the same treatment of codes' whole forms
// and parts, the same order of floating-point additions): idf =
// ln(1 + (N − df + 0.5)/(df + 0.5)), each term idf·tf·(k1+1)/(tf + k1·(1 −
// b + b·len/avglen)), a group the best of its whole forms or PartWeight
// times the mean of its parts. docs and totalLen are the field's
// statistics in the namespace; df is a term's posting count.
func bm25(groups []keyword.QueryGroup, lists map[string][]posting, docs, totalLen int64) map[int64]float64 {
	scores := map[int64]float64{}
	n := float64(docs)
	if n == 0 || len(lists) == 0 {
		return scores
	}
	avg := float64(totalLen) / n
	if avg == 0 {
		avg = 1
	}
	c0, c1 := k1*(1-b), k1*b/avg
	postings := func(term string) ([]posting, float64) {
		list := lists[term]
		df := float64(len(list))
		return list, math.Log(1+(n-df+0.5)/(df+0.5)) * (k1 + 1)
	}
	for _, g := range groups {
		if len(g.Main) == 1 && len(g.Parts) == 0 {
			list, w := postings(g.Main[0])
			for _, p := range list {
				tf := float64(p.tf)
				scores[p.seq] += w * tf / (tf + c0 + c1*float64(p.dl))
			}
			continue
		}
		main, parts := map[int64]float64{}, map[int64]float64{}
		for _, term := range g.Main {
			list, w := postings(term)
			for _, p := range list {
				tf := float64(p.tf)
				main[p.seq] = max(main[p.seq], w*tf/(tf+c0+c1*float64(p.dl)))
			}
		}
		pw := keyword.PartWeight / float64(max(len(g.Parts), 1))
		for _, term := range g.Parts {
			list, w := postings(term)
			for _, p := range list {
				tf := float64(p.tf)
				parts[p.seq] += pw * (w * tf / (tf + c0 + c1*float64(p.dl)))
			}
		}
		for seq, v := range main {
			scores[seq] += max(v, parts[seq])
		}
		for seq, v := range parts {
			if _, ok := main[seq]; !ok {
				scores[seq] += max(0, v)
			}
		}
	}
	return scores
}

// topBySeq returns the k best of scores, ties by ascending seq (insertion
// order: keyword.Index's ascending id).
func topBySeq(scores map[int64]float64, k int) []scored {
	out := make([]scored, 0, len(scores))
	for s, v := range scores {
		out = append(out, scored{seq: s, score: v})
	}
	slices.SortFunc(out, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	if len(out) > k {
		out = out[:k]
	}
	return out
}

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
	speakerTerms := map[string][]string{}
	for _, s := range all {
		for _, t := range m.tok.Tokens(s) {
			if !slices.Contains(speakerTerms[t], s) {
				speakerTerms[t] = append(speakerTerms[t], s)
			}
		}
	}
	var speakers []string
	var sb strings.Builder
	for w := range strings.FieldsSeq(query) {
		terms := m.tok.Tokens(w)
		named := len(terms) > 0
		for _, t := range terms {
			ss, ok := speakerTerms[t]
			if !ok {
				named = false
				break
			}
			for _, s := range ss {
				if !slices.Contains(speakers, s) {
					speakers = append(speakers, s)
				}
			}
		}
		if !named {
			sb.WriteString(w)
			sb.WriteByte(' ')
		}
	}
	if len(speakers) == 0 || len(speakers) == len(all) {
		return nil, query, nil
	}
	return speakers, sb.String(), nil
}
