package longterm

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/internal/ranking"
)

// A Reranker reorders the candidates of a search before they are cut to
// the query's K: a cross-encoder or an LLM that reads the question beside
// each candidate. Hits come best first by the fused score; Rerank returns
// them (or a subset) in its order. See WithReranker.
type Reranker interface {
	Rerank(ctx context.Context, query string, hits []Hit) ([]Hit, error)
}

// candidate is a parent found by one or both paths: what each found
// (ranking.Paths: the best child's cosine, the record's keyword score,
// the 1-based rank on each path).
type candidate struct {
	ranking.Paths
	p       *parent
	vecKids []ranking.Child // children matched by the vector path, best first
	score   float64         // fused
}

// Query searches the memory. A query without letters or digits, and a
// namespace with nothing in it, give an empty result and a nil error.
//
// The keyword path ranks whole records by BM25 with their namespace's
// statistics, the query's words weighted by their idf too
// (WithQueryIDF), plus what the previous and the next record score
// (WithNeighbourWeight, WithNextWeight), and prefers records spoken by a
// speaker the query names; WithQueryExpansion, WithFeedback, WithQueryTF
// and WithTimePrior add to it (all off by default). The vector path, run
// beside it, ranks records by their best child's cosine. Hybrid fuses the
// two as WithMarginFusion, WithScoreFusion, WithRRF or WithWeightedFusion
// say. Each path brings 4·K candidates, at least 200, so that the first
// results are the same for every K up to 50: asking for more does not
// reorder them.
func (m *Memory) Query(ctx context.Context, q Query) ([]Hit, error) {
	if q.K < 0 {
		return nil, fmt.Errorf("%w: K = %d", ErrInvalidQuery, q.K)
	}
	if q.Mode < Hybrid || q.Mode > KeywordOnly {
		return nil, fmt.Errorf("%w: mode %d", ErrInvalidQuery, q.Mode)
	}
	if !q.From.IsZero() && !q.To.IsZero() && q.To.Before(q.From) {
		return nil, fmt.Errorf("%w: To %v is before From %v", ErrInvalidQuery, q.To, q.From)
	}
	if q.Neighbours < 0 || q.Neighbours > memory.MaxNeighbours {
		return nil, fmt.Errorf("%w: Neighbours = %d, not in [0, %d]", ErrInvalidQuery, q.Neighbours, memory.MaxNeighbours)
	}
	k := cmp.Or(q.K, m.opts.topK)
	minScore := cmp.Or(q.MinScore, m.opts.minScore)
	text := strings.ToValidUTF8(q.Text, "\uFFFD")
	if !hasWord(text) {
		return []Hit{}, nil
	}
	// How many candidates reach the fusion (and the reranker), and how
	// many each path brings.
	keep := max(k, m.opts.rerankDepth)
	depth := ranking.Depth(keep)

	var qvec []float32
	if q.Mode != KeywordOnly {
		v, err := m.embedQuery(ctx, text)
		if err != nil {
			return nil, err
		}
		qvec = v
	}

	m.mu.RLock()
	list, err := m.candidates(ctx, q, text, qvec, depth, minScore)
	if err != nil {
		m.mu.RUnlock()
		return nil, err
	}
	if len(list) > keep {
		list = list[:keep]
	}
	hits := m.hits(text, list)
	m.mu.RUnlock()

	if m.opts.reranker != nil && len(hits) > 1 {
		rr, err := m.opts.reranker.Rerank(ctx, text, hits)
		if err != nil {
			return nil, fmt.Errorf("longterm: rerank: %w", err)
		}
		hits = rr
	}
	if len(hits) > k {
		hits = hits[:k]
	}
	if q.Neighbours > 0 {
		m.mu.RLock()
		for i := range hits {
			hits[i].Before, hits[i].After = m.neighbours(hits[i].ID, q.Neighbours)
		}
		m.mu.RUnlock()
	}
	return hits, nil
}

// neighbours returns up to n records written just before and just after
// record id in its conversation (the turn index's neighbour links: same
// namespace, at most neighbourGap apart), oldest first. m.mu must be held
// for reading.
func (m *Memory) neighbours(id string, n int) (before, after []Record) {
	p := m.parents[id]
	if p == nil {
		return nil, nil // forgotten since the search
	}
	nt := m.turnIdx().get(p.rec.Namespace, m)
	tid, ok := nt.ids[p]
	if !ok {
		return nil, nil
	}
	walk := func(links map[int64]int64) []Record {
		var out []Record
		for cur := tid; len(out) < n; {
			next, ok := links[cur]
			if !ok {
				break
			}
			r := nt.parents[next].rec
			r.Tags = slices.Clone(r.Tags)
			out = append(out, r)
			cur = next
		}
		return out
	}
	before = walk(nt.leader)
	slices.Reverse(before)
	return before, walk(nt.follower)
}

// candidates runs the query's paths and returns the fused candidates, best
// first. m.mu must be held for reading.
func (m *Memory) candidates(ctx context.Context, q Query, text string, qvec []float32, depth int, minScore float32) ([]*candidate, error) {
	if m.closed {
		return nil, ErrClosed
	}
	cands := map[*parent]*candidate{}
	get := func(p *parent) *candidate {
		c := cands[p]
		if c == nil {
			c = &candidate{p: p}
			cands[p] = c
		}
		return c
	}
	inRange := func(p *parent) bool {
		r := &p.rec
		if !q.From.IsZero() && r.Time.Before(q.From) {
			return false
		}
		return q.To.IsZero() || r.Time.Before(q.To)
	}
	// The keyword path runs beside the vector search (both only read, under
	// the caller's read lock): a query costs the slower path's time, not
	// their sum.
	var kw []scored
	kwDone := make(chan struct{})
	if q.Mode != VectorOnly {
		go func() {
			defer close(kwDone)
			kw = m.keywordSearch(q, text, depth, inRange)
		}()
	} else {
		close(kwDone)
	}
	if qvec != nil {
		total := len(m.children)
		keepChild := m.filter(q)
		for d := depth; ; d *= 4 {
			res, err := m.vectorSearch(ctx, q, qvec, d, minScore, keepChild)
			if err != nil {
				<-kwDone
				return nil, err
			}
			// Many children of a few long parents can fill the list:
			// fetch deeper until depth parents are found or the index
			// is exhausted.
			clear(cands)
			rank := 0
			for _, r := range res {
				ref, ok := m.children[r.ID]
				if !ok {
					continue
				}
				c := get(ref.p)
				if !c.HasVec {
					rank++
					c.HasVec, c.VecScore, c.VecRank = true, float64(r.Score), rank
				}
				c.vecKids = append(c.vecKids, ranking.Child{Index: ref.i, Score: float64(r.Score)})
			}
			if rank >= depth/4 || len(res) < d || d >= total {
				break
			}
		}
	}
	<-kwDone
	if q.Mode != VectorOnly {
		for i, r := range kw {
			c := get(r.p)
			c.HasKW, c.KWScore, c.KWRank = true, r.score, i+1
		}
	}
	list := make([]*candidate, 0, len(cands))
	for _, c := range cands {
		list = append(list, c)
	}
	m.fuseAll(q.Mode, list)
	slices.SortFunc(list, func(a, b *candidate) int {
		return ranking.Order(a.Paths, b.Paths, a.score, b.score, a.p.rec.ID, b.p.rec.ID)
	})
	return list, nil
}

// scored is a record and its keyword score.
type scored struct {
	p     *parent
	score float64
}

// keywordSearch ranks the records of the query's namespace (or of every
// namespace) by keyword score, best first, up to depth. The query's
// question words are left out (ranking.WithoutQuestionWords).
func (m *Memory) keywordSearch(q Query, text string, depth int, inRange func(*parent) bool) []scored {
	ti := m.turnIdx()
	nss := []string{q.Namespace}
	if q.Namespace == "" {
		nss = ti.namespaces(m)
	}
	words := ranking.WithoutQuestionWords(text)
	var out []scored
	for _, ns := range nss {
		out = append(out, m.keywordNamespace(ti, ti.get(ns, m), q, text, words, depth, inRange)...)
	}
	return topScored(out, depth)
}

// keywordNamespace ranks one namespace's records for the query as asked
// (text: speakers are found in it, "what did you say" being about the
// answerer's words) and without its question words (words).
func (m *Memory) keywordNamespace(ti *turnIndex, n *nsTurns, q Query, text, words string, depth int, inRange func(*parent) bool) []scored {
	named, rest := n.namedSpeakers(ti.tok, text)
	speakers, rest := ranking.KeywordQuery(ti.tok, text, words, named, rest)
	timed := !q.From.IsZero() || !q.To.IsZero()
	var keep func(int64) bool
	if timed {
		keep = func(id int64) bool { p := n.parents[id]; return p != nil && inRange(p) }
	}
	// Fetch more than depth from each field: the sum of two fields can
	// raise a record that neither ranks first.
	fetch := 2 * depth
	// A record's neighbour fields (the previous and the next record's
	// words) score what its neighbours' text scores: each text match lends
	// its score, weighted, to the record after it (WithNeighbourWeight)
	// and the record before it (WithNextWeight) instead of searching two
	// more indexes; ranking.WithNeighbours adds it to the record's own.
	own, lent := map[int64]float64{}, map[int64]float64{}
	wPrev, wNext := m.opts.neighbourWeight, m.opts.ret.nextWeight
	addField := func(text string, terms []keyword.WeightedTerm) {
		search := func(keep func(int64) bool) []keyword.Result {
			if terms != nil {
				return n.text.SearchTerms(terms, fetch, keep)
			}
			return n.text.Search(text, fetch, keep)
		}
		found := search(keep)
		for _, r := range found {
			own[r.ID] += r.Score
		}
		if wPrev <= 0 && wNext <= 0 {
			return
		}
		src := found
		if keep != nil {
			// A neighbour in range may follow a match out of range.
			src = search(nil)
		}
		for _, r := range src {
			if f, ok := n.follower[r.ID]; ok && wPrev > 0 && (keep == nil || keep(f)) {
				lent[f] += wPrev * r.Score
			}
			if l, ok := n.leader[r.ID]; ok && wNext > 0 && (keep == nil || keep(l)) {
				lent[l] += wNext * r.Score
			}
		}
	}
	// combined returns every record's own score with what its neighbours
	// lend it, and the best direct match (ranking.Best over own: -1 for
	// none).
	combined := func() (map[int64]float64, int64) {
		bestID, best := ranking.Best(maps.All(own))
		scores := make(map[int64]float64, len(own)+len(lent))
		for id, s := range own {
			scores[id] = s
		}
		for id, l := range lent {
			scores[id] = ranking.WithNeighbours(own[id], l, best)
		}
		return scores, bestID
	}
	addField(rest, nil)
	if ret := m.opts.ret; ret.related != nil || ret.feedbackDocs > 0 {
		asked := map[string]bool{} // the query's own terms
		for _, t := range ti.tok.Tokens(rest) {
			asked[t] = true
		}
		ext := m.relatedTerms(ti.tok, rest, asked)
		if ret.feedbackDocs > 0 {
			scores, _ := combined()
			first := m.rankScores(n, scores, speakers, ret.feedbackDocs)
			ext = append(ext, m.feedbackTerms(n.text, first, func(p *parent) int64 { return n.ids[p] }, asked)...)
		}
		if len(ext) > 0 {
			addField("", ext)
		}
	}
	scores, bestID := combined()
	if w := m.opts.ret.episodeWeight; w > 0 {
		bestEpisode := int64(-1)
		if bestID >= 0 {
			bestEpisode = n.episodeOf[bestID]
		}
		m.addEpisodes(n, rest, w, scores, keep, bestEpisode)
	}
	if b := m.opts.ret.timeBoost; b > 0 && n.last != nil {
		if from, to, ok := timeRef(words, n.last.rec.Time); ok {
			for id := range scores {
				if p := n.parents[id]; p != nil && !p.rec.Time.Before(from) && p.rec.Time.Before(to) {
					scores[id] *= 1 + b
				}
			}
		}
	}
	return m.rankScores(n, scores, speakers, depth)
}

// episodesBoosted is how many of the best-matching episodes lend their
// score to their records: a question's evidence sits mostly in the one or
// two conversations about its subject, and reaching deeper lets every
// loosely related conversation's small talk in.
const episodesBoosted = 3

// addEpisodes adds to scores what the records' conversations (episodes,
// see nsTurns) score for the query as whole documents
// (ranking.EpisodeBonuses): each record already found that belongs to one
// of the best episodesBoosted episodes gains w times the best record score
// times its episode's score relative to the best episode's, and one in
// bestEpisode (the conversation of the record whose own words match best)
// gains w times the best record score. A question is often about what a
// conversation was about, in words no single turn of it says all of.
// Records the query did not find stay out: a conversation's small talk
// does not ride on it.
func (m *Memory) addEpisodes(n *nsTurns, text string, w float64, scores map[int64]float64, keep func(int64) bool, bestEpisode int64) {
	var best float64
	first, several := int64(-1), false
	for id, s := range scores {
		best = max(best, s)
		if ep := n.episodeOf[id]; first < 0 {
			first = ep
		} else if ep != first {
			several = true
		}
	}
	if best <= 0 || !several {
		// One conversation lends the same to all it found: no order to
		// change, only the keyword scores' spread to squeeze.
		return
	}
	bonus := ranking.EpisodeBonuses(w, best, n.episodes.Search(text, episodesBoosted, nil), bestEpisode)
	for id := range scores {
		if b, ok := bonus[n.episodeOf[id]]; ok && (keep == nil || keep(id)) {
			scores[id] += b
		}
	}
}

// rankScores turns a namespace's record scores into its best depth
// records, boosting those spoken by a named speaker.
func (m *Memory) rankScores(n *nsTurns, scores map[int64]float64, speakers []string, depth int) []scored {
	out := make([]scored, 0, len(scores))
	for id, s := range scores {
		p := n.parents[id]
		if p == nil {
			continue
		}
		if len(speakers) > 0 && slices.Contains(speakers, p.rec.Speaker) {
			s *= 1 + m.opts.speakerBoost
		}
		out = append(out, scored{p, s})
	}
	return topScored(out, depth)
}

// turnIdx returns the keyword path's index, made on first use.
func (m *Memory) turnIdx() *turnIndex {
	m.turnsOnce.Do(func() { m.turns = newTurnIndex(m.tok, m.opts.turnIndexOptions()...) })
	return m.turns
}

// fuseAll computes every candidate's fused score with ranking.Fuse (the
// rule memory/postgres shares): a single-path search reports that path's
// own score, Hybrid fuses the two as the options say.
func (m *Memory) fuseAll(mode Mode, list []*candidate) {
	f := ranking.Fusion{Kind: m.opts.fusion, VectorWeight: m.opts.vectorWeight, KeywordWeight: m.opts.keywordWeight, RRFK: m.opts.rrfK}
	paths := make([]ranking.Paths, len(list))
	for i, c := range list {
		paths[i] = c.Paths
	}
	for i, s := range ranking.Fuse(mode, f, paths) {
		list[i].score = s
	}
}

// hits turns candidates into results with snippets: the children that
// share the most query terms, and those the vector path matched nearly as
// well as the best. m.mu must be held for reading.
func (m *Memory) hits(text string, list []*candidate) []Hit {
	tok := m.turnIdx().tok
	qterms := map[string]bool{}
	for _, t := range tok.Tokens(text) {
		qterms[t] = true
	}
	hits := make([]Hit, len(list))
	for i, c := range list {
		texts := make([]string, len(c.p.children))
		for j, ch := range c.p.children {
			texts[j] = ch.text
		}
		matched := ranking.Snippets(tok, qterms, texts, c.HasKW, c.vecKids)
		snips := make([]string, len(matched))
		for j, ci := range matched {
			snips[j] = texts[ci]
		}
		r := &c.p.rec
		hits[i] = Hit{
			ID: r.ID, Text: r.Text, Score: float32(c.score), Time: r.Time, Snippets: snips,
			Namespace: r.Namespace, Speaker: r.Speaker, Tags: slices.Clone(r.Tags),
			VectorRank: c.VecRank, KeywordRank: c.KWRank,
		}
	}
	return hits
}

// filter returns the keep function for a query's namespace and time range,
// or nil when it keeps everything. m.mu must be held.
func (m *Memory) filter(q Query) func(int64) bool {
	if q.Namespace == "" && q.From.IsZero() && q.To.IsZero() {
		return nil
	}
	return func(id int64) bool {
		ref, ok := m.children[id]
		if !ok {
			return false
		}
		r := &ref.p.rec
		if q.Namespace != "" && r.Namespace != q.Namespace {
			return false
		}
		if !q.From.IsZero() && r.Time.Before(q.From) {
			return false
		}
		if !q.To.IsZero() && !r.Time.Before(q.To) {
			return false
		}
		return true
	}
}

// topScored sorts out by descending score, ties by ID, and keeps the first
// depth.
func topScored(out []scored, depth int) []scored {
	slices.SortFunc(out, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return strings.Compare(a.p.rec.ID, b.p.rec.ID)
	})
	if len(out) > depth {
		out = out[:depth]
	}
	return out
}
