package postgres

import (
	"cmp"
	"container/heap"
	"context"
	"iter"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/internal/ranking"
)

// scored is a record (or an episode) and its keyword score; id is empty
// until the record is read.
type scored struct {
	seq   int64
	id    string
	score float64
}

// compareScored orders by descending score, ties by id.
func compareScored(a, b scored) int {
	return cmp.Or(cmp.Compare(b.score, a.score), strings.Compare(a.id, b.id))
}

// compareSeq orders by descending score, ties by seq: keyword.Index's
// order.
func compareSeq(a, b scored) int {
	return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.seq, b.seq))
}

// keywordSearch ranks the records of the namespaces by keyword score, best
// first, up to depth: memory/longterm's keywordSearch (question words left
// out of the query).
func (m *Memory) keywordSearch(ctx context.Context, tx pgx.Tx, q memory.Query, nss []nsInfo, text string, depth int) ([]scored, error) {
	words := ranking.WithoutQuestionWords(text)
	var out []scored
	for _, ns := range nss {
		r, err := m.keywordNamespace(ctx, tx, q, ns, text, words, depth)
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
// namespace's postings and statistics in PostgreSQL: BM25 over the
// records' own words (the query without its question words), plus what
// each record's neighbours score (WithNeighbourWeight for the record
// before it, WithNextWeight for the one after) and what its episode scores
// (WithEpisodeWeight), with the boost of named speakers. It reads the
// query terms' postings (readPostings: packed blocks and the rows written
// since) and scores them here, as keyword.Index does: idf =
// ln(1 + (N − df + 0.5)/(df + 0.5)), each term w·(k1+1)·tf/(tf +
// k1·(1 − b) + k1·b·len/avglen), a group the best of its whole forms or
// the weighted sum of its parts (PartWeight times their mean), whichever
// is higher; w is idf², or idf with WithQueryIDF(false).
func (m *Memory) keywordNamespace(ctx context.Context, tx pgx.Tx, q memory.Query, ns nsInfo, text, words string, depth int) ([]scored, error) {
	named, rest := m.namedSpeakers(ns, text)
	speakers, rest := ranking.KeywordQuery(m.tok, text, words, named, rest)
	groups := keyword.QueryGroups(m.tok, rest)
	if len(groups) == 0 || ns.textDocs == 0 {
		return nil, nil
	}
	var terms []string
	for _, g := range groups {
		terms = append(append(terms, g.Main...), g.Parts...)
	}
	slices.Sort(terms)
	terms = slices.Compact(terms)
	post, err := readPostings(ctx, tx, ns, terms)
	if err != nil {
		return nil, m.wrap(ctx, "query: keyword postings", err)
	}
	n := float64(ns.textDocs)
	avg := float64(ns.textLen) / n
	if avg == 0 {
		avg = 1
	}
	lo, hi, count := int64(math.MaxInt64), int64(math.MinInt64), 0
	for _, ps := range post {
		if len(ps) > 0 {
			lo, hi, count = min(lo, ps[0].seq), max(hi, ps[len(ps)-1].seq), count+len(ps)
		}
	}
	docs := bm25(groups, !m.opts.noQueryIDF, n, avg, lo, hi, count, func(term string) int { return len(post[term]) }, func(term string, each func(key int64, tf, dl float64)) {
		for _, p := range post[term] {
			each(p.seq, float64(p.tf), float64(p.dl))
		}
	})
	if docs.len() == 0 {
		return nil, nil
	}
	ranked := make([]scored, 0, docs.len())
	docs.each(func(seq int64, s float64) { ranked = append(ranked, scored{seq: seq, score: s}) })
	// Fetch more than depth from the text: a neighbour's score can raise a
	// record that its own text does not rank first.
	fetch := 2 * depth
	src := topSeqs(ranked, fetch)
	timed := !q.From.IsZero() || !q.To.IsZero()
	own := src
	if timed {
		slices.SortFunc(ranked, compareSeq)
		if own, err = m.bestInRange(ctx, tx, q, ranked, fetch); err != nil {
			return nil, err
		}
	}
	// The best direct match, whose score bounds what neighbours lend and
	// whose episode lends as the best one does.
	bestSeq, best := ranking.Best(seqScores(own))
	// The records scored, in the time range.
	scores, recs, err := m.withNeighbours(ctx, tx, q, own, src, best)
	if err != nil {
		return nil, err
	}
	if w := m.opts.episodeWeight; w > 0 {
		bestEpisode := int64(-1)
		if r, ok := recs[bestSeq]; ok {
			bestEpisode = r.episode
		}
		if err := m.addEpisodes(ctx, tx, ns, groups, post, w, scores, recs, bestEpisode); err != nil {
			return nil, err
		}
	}
	out := make([]scored, 0, len(scores))
	for seq, s := range scores {
		r := recs[seq]
		if slices.Contains(speakers, r.speaker) {
			s *= 1 + m.opts.speakerBoost
		}
		out = append(out, scored{seq: seq, id: r.id, score: s})
	}
	slices.SortFunc(out, compareScored)
	return out[:min(depth, len(out))], nil
}

// bm25 scores documents for groups as keyword.Index's score does (with
// queryIDF as keyword.WithQueryIDF makes it): n documents of average
// length avg; df(term) is the term's document frequency, postings(term,
// each) calls each for every posting of term (document, tf, document
// length). Keys lie in [lo, hi]; count is about how many postings there
// are (to choose an accumulator).
func bm25(groups []keyword.QueryGroup, queryIDF bool, n, avg float64, lo, hi int64, count int,
	df func(term string) int, postings func(term string, each func(key int64, tf, dl float64))) *accum {
	c0, c1 := k1*(1-b), k1*b/avg
	scores := newAccum(lo, hi, count)
	term := func(t string, each func(key int64, v float64)) {
		d := float64(df(t))
		if d == 0 {
			return
		}
		w := keyword.TermWeight(n, d, queryIDF) * (k1 + 1)
		postings(t, func(key int64, tf, dl float64) { each(key, w*tf/(tf+c0+c1*dl)) })
	}
	var main, parts *accum
	for _, g := range groups {
		if len(g.Main) == 1 && len(g.Parts) == 0 {
			// A plain word: straight into the document scores.
			term(g.Main[0], scores.add)
			continue
		}
		if main == nil {
			main, parts = newAccum(lo, hi, count), newAccum(lo, hi, count)
		}
		for _, t := range g.Main {
			term(t, main.max)
		}
		pw := keyword.PartWeight / float64(max(len(g.Parts), 1))
		for _, t := range g.Parts {
			term(t, func(key int64, v float64) { parts.add(key, pw*v) })
		}
		main.each(func(key int64, v float64) { scores.add(key, max(v, parts.get(key))) })
		parts.each(func(key int64, v float64) {
			if main.get(key) == 0 {
				scores.add(key, v)
			}
		})
		main.reset()
		parts.reset()
	}
	return scores
}

// accum holds a positive score per key (0: none): in a slice over the
// keys' range when it is dense enough, else in a map.
type accum struct {
	lo    int64
	dense []float64
	keys  []int64 // dense: the keys set, in order of first add
	m     map[int64]float64
}

func newAccum(lo, hi int64, count int) *accum {
	if hi >= lo && hi-lo < 4*int64(count)+1024 {
		return &accum{lo: lo, dense: make([]float64, hi-lo+1)}
	}
	return &accum{m: make(map[int64]float64, count)}
}

func (a *accum) add(key int64, v float64) {
	if a.m != nil {
		a.m[key] += v
		return
	}
	p := &a.dense[key-a.lo]
	if *p == 0 {
		a.keys = append(a.keys, key)
	}
	*p += v
}

func (a *accum) max(key int64, v float64) {
	if a.m != nil {
		a.m[key] = max(a.m[key], v)
		return
	}
	p := &a.dense[key-a.lo]
	if *p == 0 {
		a.keys = append(a.keys, key)
	}
	*p = max(*p, v)
}

func (a *accum) get(key int64) float64 {
	if a.m != nil {
		return a.m[key]
	}
	if key < a.lo || key-a.lo >= int64(len(a.dense)) {
		return 0
	}
	return a.dense[key-a.lo]
}

func (a *accum) len() int {
	if a.m != nil {
		return len(a.m)
	}
	return len(a.keys)
}

// each calls f for every key with a score.
func (a *accum) each(f func(key int64, v float64)) {
	if a.m != nil {
		for k, v := range a.m {
			f(k, v)
		}
		return
	}
	for _, k := range a.keys {
		f(k, a.dense[k-a.lo])
	}
}

func (a *accum) reset() {
	if a.m != nil {
		clear(a.m)
		return
	}
	for _, k := range a.keys {
		a.dense[k-a.lo] = 0
	}
	a.keys = a.keys[:0]
}

// topSeqs returns the best k of all, sorted (compareSeq), through a heap
// of the best k so far whose root is the worst of them.
func topSeqs(all []scored, k int) []scored {
	h := seqHeap(make([]scored, 0, k))
	for _, c := range all {
		switch {
		case len(h) < k:
			heap.Push(&h, c)
		case k > 0 && compareSeq(c, h[0]) < 0:
			h[0] = c
			heap.Fix(&h, 0)
		}
	}
	slices.SortFunc(h, compareSeq)
	return h
}

// seqHeap is a heap of scored whose root is the worst (compareSeq).
type seqHeap []scored

func (h seqHeap) Len() int           { return len(h) }
func (h seqHeap) Less(i, j int) bool { return compareSeq(h[i], h[j]) > 0 }
func (h seqHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *seqHeap) Push(x any)        { *h = append(*h, x.(scored)) }
func (h *seqHeap) Pop() any {
	x := (*h)[len(*h)-1]
	*h = (*h)[:len(*h)-1]
	return x
}

// bestInRange returns the best fetch of ranked (sorted) whose records are
// in the query's time range, reading their times in slices of ranked.
func (m *Memory) bestInRange(ctx context.Context, tx pgx.Tx, q memory.Query, ranked []scored, fetch int) ([]scored, error) {
	var from, to *time.Time
	if !q.From.IsZero() {
		from = &q.From
	}
	if !q.To.IsZero() {
		to = &q.To
	}
	var own []scored
	step := max(4*fetch, 256)
	for i := 0; i < len(ranked) && len(own) < fetch; i += step {
		part := ranked[i:min(i+step, len(ranked))]
		seqs := make([]int64, len(part))
		for j, r := range part {
			seqs[j] = r.seq
		}
		rows, err := tx.Query(ctx, `SELECT seq FROM records WHERE seq = ANY($1)
			AND ($2::timestamptz IS NULL OR time >= $2) AND ($3::timestamptz IS NULL OR time < $3)`, seqs, from, to)
		if err != nil {
			return nil, m.wrap(ctx, "query: keyword time range", err)
		}
		in, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return nil, m.wrap(ctx, "query: keyword time range", err)
		}
		ok := make(map[int64]bool, len(in))
		for _, s := range in {
			ok[s] = true
		}
		for _, r := range part {
			if ok[r.seq] && len(own) < fetch {
				own = append(own, r)
			}
		}
	}
	return own, nil
}

// scoredRec is what the keyword path needs of a scored record.
type scoredRec struct {
	id, speaker string
	episode     int64
}

// withNeighbours returns the scores of own's records plus what src's
// records lend their neighbours — WithNeighbourWeight times their score to
// the record after them (whose prev_seq is theirs), WithNextWeight times it
// to the record before them (their prev_seq), counted by
// ranking.WithNeighbours against best, the best of own's scores — for the
// records in the query's time range, and those records, in one statement.
func (m *Memory) withNeighbours(ctx context.Context, tx pgx.Tx, q memory.Query, own, src []scored, best float64) (map[int64]float64, map[int64]scoredRec, error) {
	wPrev, wNext := m.opts.neighbourWeight, m.opts.nextWeight
	var ownSeqs, srcSeqs []int64
	scores := make(map[int64]float64, len(own)+2*len(src))
	for _, r := range own {
		ownSeqs = append(ownSeqs, r.seq)
		scores[r.seq] += r.score
	}
	srcScore := make(map[int64]float64, len(src))
	if wPrev > 0 || wNext > 0 {
		for _, r := range src {
			srcSeqs = append(srcSeqs, r.seq)
			srcScore[r.seq] = r.score
		}
	}
	// Own's and src's records, src's followers and src's leaders (each
	// once); prev_seq links a record to its leader.
	rows, err := tx.Query(ctx, `SELECT seq, prev_seq, id, speaker, episode, time FROM records WHERE seq = ANY($1)
		UNION SELECT seq, prev_seq, id, speaker, episode, time FROM records WHERE prev_seq = ANY($2)
		UNION SELECT l.seq, l.prev_seq, l.id, l.speaker, l.episode, l.time FROM records r JOIN records l ON l.seq = r.prev_seq WHERE r.seq = ANY($2)`,
		append(ownSeqs, srcSeqs...), srcSeqs)
	if err != nil {
		return nil, nil, m.wrap(ctx, "query: keyword records", err)
	}
	defer rows.Close()
	recs := make(map[int64]scoredRec, len(scores))
	prevOf := map[int64]int64{}
	for rows.Next() {
		var seq int64
		var prev *int64
		var r scoredRec
		var t time.Time
		if err := rows.Scan(&seq, &prev, &r.id, &r.speaker, &r.episode, &t); err != nil {
			return nil, nil, m.wrap(ctx, "query: keyword records", err)
		}
		if (q.From.IsZero() || !t.Before(q.From)) && (q.To.IsZero() || t.Before(q.To)) {
			recs[seq] = r
		}
		if prev != nil {
			prevOf[seq] = *prev
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, m.wrap(ctx, "query: keyword records", err)
	}
	lent := map[int64]float64{}
	for seq, prev := range prevOf {
		if s, ok := srcScore[prev]; ok && wPrev > 0 {
			lent[seq] += wPrev * s // seq follows a match
		}
		if s, ok := srcScore[seq]; ok && wNext > 0 {
			lent[prev] += wNext * s // prev leads a match
		}
	}
	for seq, l := range lent {
		scores[seq] = ranking.WithNeighbours(scores[seq], l, best)
	}
	for seq := range scores {
		if _, ok := recs[seq]; !ok {
			delete(scores, seq)
		}
	}
	return scores, recs, nil
}

// seqScores yields each record's seq and score.
func seqScores(rs []scored) iter.Seq2[int64, float64] {
	return func(yield func(int64, float64) bool) {
		for _, r := range rs {
			if !yield(r.seq, r.score) {
				return
			}
		}
	}
}

// addEpisodes is memory/longterm's addEpisodes (ranking.EpisodeBonuses):
// each record scored whose episode is one of the best episodesBoosted for
// the query (BM25 over the namespace's episodes as documents, from the
// same postings summed by episode) gains w times the best record score
// times its episode's score relative to the best episode's, and one in
// bestEpisode (the episode of the best own match) w times the best record
// score, unless everything scored is in one episode.
func (m *Memory) addEpisodes(ctx context.Context, tx pgx.Tx, ns nsInfo, groups []keyword.QueryGroup, post map[string][]posting,
	w float64, scores map[int64]float64, recs map[int64]scoredRec, bestEpisode int64) error {
	var best float64
	first, several := int64(-1), false
	for seq, s := range scores {
		best = max(best, s)
		if ep := recs[seq].episode; first < 0 {
			first = ep
		} else if ep != first {
			several = true
		}
	}
	if best <= 0 || !several {
		// One conversation lends the same to all it found.
		return nil
	}
	// Each term's tf per episode.
	epTF := make(map[string]map[int64]float64, len(post))
	var eps []int64
	seen := map[int64]bool{}
	for t, ps := range post {
		tf := map[int64]float64{}
		for _, p := range ps {
			tf[p.episode] += float64(p.tf)
			if !seen[p.episode] {
				seen[p.episode] = true
				eps = append(eps, p.episode)
			}
		}
		epTF[t] = tf
	}
	rows, err := tx.Query(ctx, `SELECT episode, len FROM episodes WHERE ns = $1 AND episode = ANY($2)`, ns.id, eps)
	if err != nil {
		return m.wrap(ctx, "query: episodes", err)
	}
	epLen := make(map[int64]float64, len(eps))
	for rows.Next() {
		var ep, l int64
		if err := rows.Scan(&ep, &l); err != nil {
			rows.Close()
			return m.wrap(ctx, "query: episodes", err)
		}
		epLen[ep] = float64(l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return m.wrap(ctx, "query: episodes", err)
	}
	// Episodes: documents of all their records' texts, so the same total
	// length over fewer documents.
	ne := float64(max(ns.episodeDocs, 1))
	avgEp := float64(ns.textLen) / ne
	if avgEp == 0 {
		avgEp = 1
	}
	es := bm25(groups, !m.opts.noQueryIDF, ne, avgEp, 0, -1, len(eps), func(term string) int { return len(epTF[term]) }, func(term string, each func(key int64, tf, dl float64)) {
		for ep, tf := range epTF[term] {
			each(ep, tf, epLen[ep])
		}
	})
	all := make([]scored, 0, es.len())
	es.each(func(ep int64, s float64) { all = append(all, scored{seq: ep, score: s}) })
	top := topSeqs(all, episodesBoosted)
	ranked := make([]keyword.Result, len(top))
	for i, e := range top {
		ranked[i] = keyword.Result{ID: e.seq, Score: e.score}
	}
	bonus := ranking.EpisodeBonuses(w, best, ranked, bestEpisode)
	for seq := range scores {
		if add, ok := bonus[recs[seq].episode]; ok {
			scores[seq] += add
		}
	}
	return nil
}

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
// namespace's speakers (read with it).
func (m *Memory) namedSpeakers(ns nsInfo, query string) ([]string, string) {
	if len(ns.speakers) == 0 {
		return nil, query
	}
	st := ranking.SpeakerTerms{}
	for _, s := range ns.speakers {
		st.Add(m.tok, s)
	}
	return st.NamedSpeakers(m.tok, len(ns.speakers), query)
}
