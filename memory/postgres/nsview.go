package postgres

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/engine"
)

// nsView is one namespace's keyword statistics and postings, the postings
// of each term, the links and the episode lengths read once per version
// of the namespace (cache.go).
type nsView struct {
	v    *view
	info nsInfo
	c    *nsCache
	// table is c's, if c was complete when the view took it.
	table *linkTable
}

func (s *nsView) Name() string        { return s.info.name }
func (s *nsView) Key(seq int64) int64 { return seq }
func (s *nsView) Speakers() []string  { return s.info.speakers }
func (s *nsView) wrap(ctx context.Context, op string, err error) error {
	return s.v.m.wrap(ctx, op, err)
}

// postings returns the postings of terms, reading those not read yet.
func (s *nsView) postings(ctx context.Context, terms []string) (map[string][]posting, error) {
	out := make(map[string][]posting, len(terms))
	var need []string
	s.c.mu.Lock()
	for _, t := range terms {
		if ps, ok := s.c.post[t]; ok || s.c.allPost {
			out[t] = ps
		} else {
			need = append(need, t)
		}
	}
	s.c.mu.Unlock()
	if len(need) == 0 {
		return out, nil
	}
	// The next searches of this version may find them all read.
	s.v.m.fill(s.info, s.c)
	slices.Sort(need)
	need = slices.Compact(need)
	got, err := readPostings(ctx, s.v.q, s.info, need)
	if err != nil {
		return nil, s.wrap(ctx, "query: keyword postings", err)
	}
	for _, t := range need {
		out[t] = got[t] // nil for a term in no record: kept all the same
	}
	s.c.mu.Lock()
	s.c.addPostings(need, got)
	s.c.mu.Unlock()
	return out, nil
}

// score scores the namespace's records for groups (keyword.Score over its
// postings and statistics): every record scored when k is 0, else the
// best k appended to dst[:0] in no order (keyword.SelectScored).
func (s *nsView) score(ctx context.Context, dst []keyword.Result, groups []keyword.QueryGroup, p keyword.Params, k int) ([]keyword.Result, error) {
	if len(groups) == 0 || s.info.textDocs == 0 {
		return dst[:0], nil
	}
	terms := keyword.Terms(groups)
	post, err := s.postings(ctx, terms)
	if err != nil {
		return nil, err
	}
	n := float64(s.info.textDocs)
	lo, hi, count := int64(math.MaxInt64), int64(math.MinInt64), 0
	for _, t := range terms {
		if ps := post[t]; len(ps) > 0 {
			lo, hi, count = min(lo, ps[0].seq), max(hi, ps[len(ps)-1].seq), count+len(ps)
		}
	}
	df := func(term string) int { return len(post[term]) }
	avg := s.AvgLength()
	// scoreBy scores the records keyed by key(seq) within [klo, khi] (by
	// seq when key is nil: no call a posting), and reports whether key
	// found every one.
	scoreBy := func(dst []keyword.Result, klo, khi int64, key func(seq int64) (int64, bool)) ([]keyword.Result, bool) {
		found := true
		postings := func(term string, each func(key int64, tf, dl float64)) {
			for _, p := range post[term] {
				if key == nil {
					each(p.seq, float64(p.tf), float64(p.dl))
				} else if k, ok := key(p.seq); ok {
					each(k, float64(p.tf), float64(p.dl))
				} else {
					found = false
				}
			}
		}
		if k > 0 {
			return keyword.SelectScored(dst, groups, p, n, avg, klo, khi, count, k, df, postings), found
		}
		return keyword.Score(groups, p, n, avg, klo, khi, count, df, postings), found
	}
	// The scores are summed by key in a slice over the keys' range when
	// it is dense enough (keyword.Score: less than 4·count + 1,024 keys),
	// else in a map: the seqs of a namespace written in turns with others
	// are spread, so the records are keyed by their positions in the
	// complete cache's table, in the same order (ties by seq alike), when
	// it holds every one (at 40 namespaces of 500 records, the maps cost
	// 4.5 times the directory store's scoring, BenchmarkAllNamespaces).
	if t := s.table; t != nil && hi-lo >= 4*int64(count)+1024 {
		if first, last := t.find(lo), t.find(hi); first >= 0 && last >= 0 {
			out, all := scoreBy(dst, int64(first), int64(last), func(seq int64) (int64, bool) {
				i := t.find(seq)
				return int64(i), i >= 0
			})
			if all {
				for i := range out {
					out[i].ID = t.seqs[out[i].ID]
				}
				return out, nil
			}
			dst = out // a posting of a record the table lacks: by seqs
		}
	}
	out, _ := scoreBy(dst, lo, hi, nil)
	return out, nil
}

// ranksAll reports whether scope filters the namespace's records by time
// or validity: a search then ranks every record scored and reads which
// are in it (bestInRange), where otherwise the best k are selected.
func (s *nsView) ranksAll(scope engine.Scope) bool {
	return scope.Timed() || filters([]nsInfo{s.info}, scope)
}

// Search is Select's results, sorted.
func (s *nsView) Search(ctx context.Context, groups []keyword.QueryGroup, p keyword.Params, k int, scope engine.Scope) ([]keyword.Result, error) {
	if k <= 0 {
		return nil, nil
	}
	all := s.ranksAll(scope)
	n := k
	if all {
		n = 0 // every record scored
	}
	docs, err := s.score(ctx, nil, groups, p, n)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(docs, keyword.Better)
	if !all {
		return docs, nil
	}
	return s.bestInRange(ctx, scope, docs, k)
}

// Select is Search's results in no order (engine.Selector), reusing dst:
// the best k of the scores selected, not sorted.
func (s *nsView) Select(ctx context.Context, dst []keyword.Result, groups []keyword.QueryGroup, p keyword.Params, k int, scope engine.Scope) ([]keyword.Result, error) {
	if k <= 0 {
		return dst[:0], nil
	}
	if !s.ranksAll(scope) {
		return s.score(ctx, dst, groups, p, k)
	}
	docs, err := s.Search(ctx, groups, p, k, scope)
	return append(dst[:0], docs...), err
}

// bestInRange returns the best k of ranked (sorted) whose records are in
// the scope (its time range, and held at its moment), reading them in
// slices of ranked.
func (s *nsView) bestInRange(ctx context.Context, scope engine.Scope, ranked []keyword.Result, k int) ([]keyword.Result, error) {
	var from, to, at *time.Time
	if !scope.From.IsZero() {
		from = &scope.From
	}
	if !scope.To.IsZero() {
		to = &scope.To
	}
	if filters([]nsInfo{s.info}, scope) {
		at = &scope.AsOf
	}
	var own []keyword.Result
	step := max(4*k, 256)
	for i := 0; i < len(ranked) && len(own) < k; i += step {
		part := ranked[i:min(i+step, len(ranked))]
		seqs := make([]int64, len(part))
		for j, r := range part {
			seqs[j] = r.ID
		}
		rows, err := s.v.q.Query(ctx, `SELECT seq FROM records WHERE seq = ANY($1)
			AND ($2::timestamptz IS NULL OR time >= $2) AND ($3::timestamptz IS NULL OR time < $3)
			AND ($4::timestamptz IS NULL OR coalesce(valid_from, time) <= $4 AND (valid_until IS NULL OR valid_until > $4))`, seqs, from, to, at)
		if err != nil {
			return nil, s.wrap(ctx, "query: keyword time range", err)
		}
		in, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return nil, s.wrap(ctx, "query: keyword time range", err)
		}
		ok := make(map[int64]bool, len(in))
		for _, seq := range in {
			ok[seq] = true
		}
		for _, r := range part {
			if ok[r.ID] && len(own) < k {
				own = append(own, r)
			}
		}
	}
	return own, nil
}

// Episodes scores the namespace's episodes (documents of all their
// records' texts, so the same total length over fewer documents) from
// the same postings summed by episode.
func (s *nsView) Episodes(ctx context.Context, groups []keyword.QueryGroup, p keyword.Params, k int) ([]keyword.Result, error) {
	if len(groups) == 0 {
		return nil, nil
	}
	terms := keyword.Terms(groups)
	post, err := s.postings(ctx, terms)
	if err != nil {
		return nil, err
	}
	epTF := make(map[string]map[int64]float64, len(terms))
	var eps []int64
	seen := map[int64]bool{}
	for _, t := range terms {
		tf := map[int64]float64{}
		for _, p := range post[t] {
			tf[p.episode] += float64(p.tf)
			if !seen[p.episode] {
				seen[p.episode] = true
				eps = append(eps, p.episode)
			}
		}
		epTF[t] = tf
	}
	if len(eps) == 0 {
		return nil, nil
	}
	epLen, err := s.episodeLens(ctx, eps)
	if err != nil {
		return nil, err
	}
	ne := float64(max(s.info.episodeDocs, 1))
	es := keyword.Score(groups, p, ne, float64(s.info.textLen)/ne, 0, -1, len(eps),
		func(term string) int { return len(epTF[term]) },
		func(term string, each func(key int64, tf, dl float64)) {
			for ep, tf := range epTF[term] {
				each(ep, tf, epLen[ep])
			}
		})
	return keyword.TopK(es, k), nil
}

// episodeLens returns the lengths of episodes eps, reading those not read
// yet.
func (s *nsView) episodeLens(ctx context.Context, eps []int64) (map[int64]float64, error) {
	out := make(map[int64]float64, len(eps))
	var need []int64
	s.c.mu.Lock()
	for _, ep := range eps {
		if l, ok := s.c.epLen[ep]; ok {
			out[ep] = l
		} else {
			need = append(need, ep)
		}
	}
	s.c.mu.Unlock()
	if len(need) == 0 {
		return out, nil
	}
	rows, err := s.v.q.Query(ctx, `SELECT episode, len FROM episodes WHERE ns = $1 AND episode = ANY($2)`, s.info.id, need)
	if err != nil {
		return nil, s.wrap(ctx, "query: episodes", err)
	}
	for rows.Next() {
		var ep, l int64
		if err := rows.Scan(&ep, &l); err != nil {
			rows.Close()
			return nil, s.wrap(ctx, "query: episodes", err)
		}
		out[ep] = float64(l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, s.wrap(ctx, "query: episodes", err)
	}
	s.c.mu.Lock()
	s.c.room(len(need))
	for _, ep := range need {
		if l, ok := out[ep]; ok {
			s.c.epLen[ep] = l
		}
	}
	s.c.mu.Unlock()
	return out, nil
}

func (s *nsView) EpisodeOf(seq int64) int64 {
	if l, ok := s.linkAt(seq); ok {
		return l.Episode
	}
	return 0
}

// Adjacent returns the records before and after seq (engine.Adjacent),
// -1 for none.
func (s *nsView) Adjacent(seq int64) (prev, next int64) {
	if l, ok := s.linkAt(seq); ok {
		return l.Prev, l.Next
	}
	return -1, -1
}

func (s *nsView) Owner(seq int64) (string, string, bool) {
	if l, ok := s.linkAt(seq); ok {
		return l.ID, l.Speaker, true
	}
	return "", "", false
}

// linkAt is Link without copying the link when the cache is complete: in
// place in its table (a link is 128 bytes, and a search asks for
// thousands).
func (s *nsView) linkAt(seq int64) (*engine.Link, bool) {
	if s.table != nil {
		l := s.table.at(seq)
		return l, l != nil
	}
	l, ok := s.Link(seq)
	return &l, ok
}

// Link returns a record's link read by Links.
func (s *nsView) Link(seq int64) (engine.Link, bool) {
	if s.table != nil {
		return s.table.get(seq)
	}
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	if s.c.table != nil { // completed since
		return s.c.table.get(seq)
	}
	l, ok := s.c.links[seq]
	return l, ok
}

// Links reads the links of the records ids and around that are not read
// yet, and of the records before and after around's, in one statement.
// A record's Next is known once it was asked as one of around (its
// followers read with it); until then a Link holds -1 there, which only
// the around records' links are read for.
func (s *nsView) Links(ctx context.Context, ids, around []int64) error {
	var need, needAround []int64
	s.c.mu.Lock()
	if s.c.complete {
		s.c.mu.Unlock()
		return nil
	}
	for _, id := range ids {
		if _, ok := s.c.links[id]; !ok {
			need = append(need, id)
		}
	}
	for _, id := range around {
		if !s.c.around[id] {
			needAround = append(needAround, id)
		}
	}
	s.c.mu.Unlock()
	if len(need) == 0 && len(needAround) == 0 {
		return nil
	}
	// The next searches of this version may find them all read.
	s.v.m.fill(s.info, s.c)
	// The records need and needAround, those that follow needAround's
	// (whose prev_seq is theirs) and those they follow (their prev_seq).
	// UNION ALL: a record read twice is stored twice alike, cheaper than
	// the server's deduplication of a thousand rows (of a search's
	// scored records, needAround empty: the one SELECT alone).
	sql := `SELECT ` + linkCols + ` FROM records WHERE seq = ANY($1)`
	args := []any{append(need, needAround...)}
	if len(needAround) > 0 {
		sql += `
		UNION ALL SELECT ` + linkCols + ` FROM records WHERE prev_seq = ANY($2)
		UNION ALL SELECT l.seq, l.prev_seq, l.id, l.speaker, l.episode, l.time, coalesce(l.valid_from, l.time), l.valid_until
			FROM records r JOIN records l ON l.seq = r.prev_seq WHERE r.seq = ANY($2)`
		args = append(args, needAround)
	}
	rows, err := s.v.q.Query(ctx, sql, args...)
	if err != nil {
		return s.wrap(ctx, "query: keyword records", err)
	}
	var got []linkRow
	for rows.Next() {
		r, err := scanLink(rows)
		if err != nil {
			rows.Close()
			return s.wrap(ctx, "query: keyword records", err)
		}
		got = append(got, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return s.wrap(ctx, "query: keyword records", err)
	}
	asked := make(map[int64]bool, len(needAround))
	for _, id := range needAround {
		asked[id] = true
	}
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.complete {
		return nil // completed meanwhile (fill): its table holds them all
	}
	c.room(len(got))
	for _, id := range needAround {
		c.around[id] = true
	}
	var follows [][2]int64 // (record, the around record it follows)
	for _, r := range got {
		l := r.l
		if l.Prev >= 0 && asked[l.Prev] {
			follows = append(follows, [2]int64{r.seq, l.Prev})
		}
		if old, ok := c.links[r.seq]; ok {
			l.Next = old.Next
		}
		c.links[r.seq] = l
	}
	for _, f := range follows {
		if l, ok := c.links[f[1]]; ok && (l.Next < 0 || f[0] < l.Next) {
			l.Next = f[0]
			c.links[f[1]] = l
		}
	}
	return nil
}

// Terms counts the terms of the record's indexed text (its header and
// text), as they were counted when it was written.
func (s *nsView) Terms(ctx context.Context, seq int64) ([]keyword.TermCount, int, error) {
	var r memory.Record
	err := scanRecord(s.v.q.QueryRow(ctx, `SELECT `+recordColumns+` FROM records r JOIN namespaces n ON n.id = r.ns WHERE r.seq = $1`, seq), &r)
	if err != nil {
		return nil, 0, s.wrap(ctx, "query: record terms", err)
	}
	toks := s.v.m.tok.Tokens(s.v.m.keywordText(&r))
	counts := termCounts(toks)
	out := make([]keyword.TermCount, 0, len(counts))
	for t, n := range counts {
		out = append(out, keyword.TermCount{Term: t, Count: n})
	}
	return out, len(toks), nil
}

// Newest is the namespace's last_time, read with its statistics: the
// time of its newest record (last_seq, which writes and deletes keep at
// the namespace's highest seq, as verify checks). A namespace that does
// not know it asks its records.
func (s *nsView) Newest(ctx context.Context) (time.Time, error) {
	if s.info.hasNewest {
		return s.info.newest, nil
	}
	var t time.Time
	err := s.v.q.QueryRow(ctx, `SELECT time FROM records WHERE ns = $1 ORDER BY seq DESC LIMIT 1`, s.info.id).Scan(&t)
	if err != nil && err != pgx.ErrNoRows {
		return t, s.wrap(ctx, "query: newest record", err)
	}
	return t, nil
}

func (s *nsView) DocFreqs(ctx context.Context, terms []string) (int, []int, error) {
	post, err := s.postings(ctx, terms)
	if err != nil {
		return 0, nil, err
	}
	df := make([]int, len(terms))
	for i, t := range terms {
		df[i] = len(post[t])
	}
	return int(s.info.textDocs), df, nil
}

func (s *nsView) AvgLength() float64 {
	if s.info.textDocs == 0 {
		return 0
	}
	return float64(s.info.textLen) / float64(s.info.textDocs)
}

// AllHold: the namespace's counters (ended, latest) answer.
func (s *nsView) AllHold(t time.Time) bool {
	return !filters([]nsInfo{s.info}, engine.Scope{AsOf: t})
}

// During returns up to n of the namespace's records said in [from, to),
// by ascending seq (engine.During).
func (s *nsView) During(ctx context.Context, from, to time.Time, n int) ([]int64, error) {
	rows, err := s.v.q.Query(ctx, `SELECT seq FROM records WHERE ns = $1 AND time >= $2 AND time < $3 ORDER BY seq LIMIT $4`,
		s.info.id, from, to, n)
	if err != nil {
		return nil, s.wrap(ctx, "query: records of a day", err)
	}
	seqs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, s.wrap(ctx, "query: records of a day", err)
	}
	return seqs, nil
}

// linkRow is a record's seq and Link (Next not known: -1), as scanLink
// reads it.
type linkRow struct {
	seq int64
	l   engine.Link
}

// linkCols are the columns of a record's linkRow, in linkScan's order.
const linkCols = `seq, prev_seq, id, speaker, episode, time, coalesce(valid_from, time), valid_until`

// scanLink reads a row of linkCols.
func scanLink(rows pgx.Rows) (linkRow, error) {
	var s linkScan
	if err := rows.Scan(s.dest()...); err != nil {
		return linkRow{}, err
	}
	return s.row(), nil
}

// linkScan receives a row's linkCols (dest), where other columns may
// come before or after them, and makes them a linkRow (row).
type linkScan struct {
	r     linkRow
	prev  *int64
	until pgtype.Timestamptz
}

// dest returns the destinations of linkCols.
func (s *linkScan) dest() []any {
	s.r.l = engine.Link{Prev: -1, Next: -1}
	return []any{&s.r.seq, &s.prev, &s.r.l.ID, &s.r.l.Speaker, &s.r.l.Episode, &s.r.l.Time, &s.r.l.Since, &s.until}
}

// row returns the scanned linkRow.
func (s *linkScan) row() linkRow {
	r := s.r
	if s.until.Valid {
		r.l.Until = s.until.Time
	}
	if s.prev != nil {
		r.l.Prev = *s.prev
	}
	return r
}
