package engine

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/internal/ranking"
)

// search is one search's state.
type search[K comparable] struct {
	e     *Engine
	src   Source[K]
	mode  memory.Mode
	scope Scope
	text  string
	// question is text without its recall frame ("Do you remember":
	// ranking.WithoutRecallFrame): what the vector path embeds, and
	// what speakers and a recap are found in.
	question string
	// words is text without its question words
	// (ranking.WithoutQuestionWords): what the keyword path searches
	// for, and what snippets, matched terms and relevance's share count.
	words    string
	depth    int
	minScore float32
	// asOf is the query's own moment (memory.Query.AsOf; zero when it
	// gave none): what its time references ("yesterday", "last week")
	// count back from (reference).
	asOf time.Time
	// top are the search's best keyword score, cosine and namespace
	// coverage (nsFacts.cover), the share of the query's words its best
	// candidate holds (bestShare), the cosine from which the fusion
	// counts the vector path (ranking.VectorFloor), for relevance.
	top struct{ keyword, vector, cover, share, floor float64 }
	// fewest are the fewest unknown names of a namespace the keyword
	// path searched (nsFacts.unknown): a record the vector path alone
	// found has them, as its cover is the best namespace's; known: they
	// are none.
	fewest []string
	known  bool
	// covered are the facts of the namespace of the keyword path's best
	// coverage (noteDocs; the first namespace's, when none covers any of
	// the query; nil without a keyword path): a record the vector path
	// alone found has its size and kind.
	covered *nsFacts
	// names are the query's names (ranking.Names) with their terms, nil
	// until unknownNames.
	names map[string][]string
	// personNames are what the query may name a person by
	// (ranking.PersonNames) with their terms and keyword query, found
	// once a search (persons).
	personNames []person
	personsSet  bool
	// timed are the query's terms that occur only in its time references
	// (timedTerms; the keyword path's, nil until then).
	timed map[string]bool
	// scratch holds the keyword path's sets of record scores, reused
	// (emptied) from one namespace to the next: a search of every
	// namespace fills them once each. keyword takes it from kwScratchPool
	// and puts it back.
	scratch *kwScratch
	// ranked is nsSearch.rank's list, reused.
	ranked []scored[K]
	// parsed is parseQuery's last query; refers, recapQ and cjk are
	// refersBack's, recap's and hasCJK's answers (see once).
	parsed struct {
		rest   string
		groups []keyword.QueryGroup
	}
	refers, recapQ, cjk int8
	// recapped: a namespace answered the query with the records of the
	// period it names (nsSearch.addRecap).
	recapped bool
}

// scored is a record the keyword path found, with its score.
type scored[K comparable] struct {
	key     K
	nsID    int64 // its id in its namespace
	id      string
	score   float64
	ns      *nsFacts // its namespace's
	asked   string   // the question whose score it was handed (nsSearch.handOff), or ""
	askedBy K        // that question's key, when handed
	handed  bool     // askedBy is set and the question is not near the query (handed.near)
	own     float64  // what its own words score, on score's scale (Explanation.OwnKeyword)
	boost   float64  // what score was multiplied by for its speaker, the one the query names (1: none)
	// relevant is the part of score that relevance reads: all of it, but
	// for a note (a record without a speaker), which leaves out what its
	// neighbours' words lent it.
	relevant float64
	// unlent is score without what its neighbours' words lent it, as a
	// note's relevant is (search.wordless reads it of a turn whose
	// neighbours share no word with the query).
	unlent float64
}

// nsFacts are what a search learned of a namespace that relevance and the
// explanation read, the same for every record found there.
type nsFacts struct {
	// cover is the share of the namespace's bound (nsSearch.bound) its
	// records reach together: the query's words (weighted by rarity) that
	// occur in the namespace at all.
	cover float64
	// docs is how many records the namespace holds (its keyword
	// statistics' count).
	docs int
	// recalled: the namespace answered a recap question with the records of
	// the period it names (nsSearch.addRecap), which hold all it asks:
	// relevance reads its coverage and share as whole.
	recalled bool
	// documents: the query is Chinese and the namespace's records are
	// passages (documentCalibrations).
	documents bool
	// unknown are the query's names (ranking.Names) that the namespace
	// never mentions (unknownNames).
	unknown []string
	// speakers are the speakers the query asks about in the namespace
	// (ranking.KeywordQuery), whose records the keyword path prefers.
	speakers []string
	// aliases are, for a speaker, the names the query calls them by that
	// they gave as theirs in the namespace (nsSearch.addAliases).
	aliases map[string][]string
}

// candidates runs the query's paths and returns their candidates with
// their fused scores, in no particular order.
func (s *search[K]) candidates(ctx context.Context, qvec []float32) ([]*candidate[K], error) {
	cands := map[K]*candidate[K]{}
	get := func(key K) *candidate[K] {
		c := cands[key]
		if c == nil {
			c = &candidate[K]{key: key}
			cands[key] = c
		}
		return c
	}
	var kw []scored[K]
	var kwErr error
	kwDone := make(chan struct{})
	runKeyword := func() {
		defer close(kwDone)
		kw, kwErr = s.keyword(ctx)
	}
	parallel := false
	if p, ok := s.src.(Parallel); ok {
		parallel = p.Parallel()
	}
	switch {
	case s.mode == memory.VectorOnly:
		close(kwDone)
	case parallel && qvec != nil:
		go runKeyword()
	default:
		runKeyword()
	}
	if qvec != nil {
		for d := s.depth; ; d *= 4 {
			res, exhausted, err := s.src.Vectors(ctx, s.scope, qvec, d, s.minScore)
			if err != nil {
				<-kwDone
				return nil, err
			}
			// Many chunks of a few long records can fill the list: fetch
			// deeper until depth/4 records are found or the chunks are
			// exhausted.
			clear(cands)
			rank := 0
			for _, r := range res {
				c := get(r.Record)
				if !c.HasVec {
					rank++
					c.HasVec, c.VecScore, c.VecRank = true, r.Score, rank
				}
				c.vecKids = append(c.vecKids, ranking.Child{Index: r.Index, Score: r.Score})
			}
			if rank >= s.depth/4 || exhausted {
				break
			}
		}
	}
	<-kwDone
	if kwErr != nil {
		return nil, kwErr
	}
	for i, r := range kw {
		c := get(r.key)
		c.HasKW, c.KWScore, c.KWRank = true, r.score, i+1
		c.doc.Record.ID = r.id
		c.ns, c.asked, c.kwOwn, c.kwRelevant, c.kwUnlent, c.kwBoost = r.ns, r.asked, r.own, r.relevant, r.unlent, r.boost
		s.top.keyword = max(s.top.keyword, r.score)
		s.top.cover = max(s.top.cover, r.ns.cover)
	}
	// An answer the keyword path handed its question's score
	// (nsSearch.handOff) takes the question's cosine too, when higher than
	// its own, and the question keeps 1 − d of it, so that the vector
	// path, which ranks a question like the query above the turn that
	// answers it, does not undo the hand-off: "What methods have you told
	// me about for relieving stress?" finds the advice, not the turn that
	// asked for it. Not when the question holds nearly all the query's
	// words (handed.near): the query may look the question itself up.
	if d := s.e.cfg.handOff; d > 0 {
		for _, r := range kw {
			if !r.handed {
				continue
			}
			q := cands[r.askedBy]
			if q == nil || !q.HasVec {
				continue
			}
			if a := cands[r.key]; !a.HasVec || a.VecScore < q.VecScore {
				a.HasVec, a.VecScore, a.VecRank = true, q.VecScore, q.VecRank
				q.VecScore *= 1 - d
			}
		}
	}
	// Found by the vector path alone: the best namespace's.
	vecOnly := &nsFacts{cover: s.top.cover, unknown: s.fewest}
	if b := s.covered; b != nil {
		vecOnly.docs, vecOnly.documents = b.docs, b.documents
	}
	for _, c := range cands {
		if c.HasVec {
			s.top.vector = max(s.top.vector, c.VecScore)
		}
		if !c.HasKW {
			c.ns = vecOnly
		}
	}
	if s.mode == memory.Hybrid && s.recapped {
		// A recap question ("what did we talk about yesterday?") holds no
		// word of its answer, which the keyword path found by its time
		// (nsSearch.addRecap): what the vector path alone matched (its
		// filler words) is not part of it, and its cosines of the
		// period's records say nothing of them: they rank by the keyword
		// path alone, the earliest first, as the talk went. A recap the
		// keyword path could not answer so (no time prior, a period of no
		// records or of too many) keeps what the vector path found.
		maps.DeleteFunc(cands, func(_ K, c *candidate[K]) bool { return !c.HasKW })
		for _, c := range cands {
			c.HasVec = false
		}
	}
	list := slices.Collect(maps.Values(cands))
	paths := make([]ranking.Paths, len(list))
	for i, c := range list {
		paths[i] = c.Paths
	}
	f := s.fusion()
	s.top.floor = ranking.VectorFloor(s.mode, f, paths)
	for i, sc := range ranking.FuseFrom(s.mode, f, paths, s.top.floor) {
		list[i].score = sc
	}
	return list, nil
}

// fusion is how the search fuses its paths (the engine's options).
func (s *search[K]) fusion() ranking.Fusion {
	c := &s.e.cfg
	return ranking.Fusion{Kind: c.fusion, VectorWeight: c.vectorWeight, KeywordWeight: c.keywordWeight, RRFK: c.rrfK}
}

// bestShare sets s.top.share: the share of the query's words (as the
// keyword path cuts them, its question words and time references left
// out: a memory's time is in its date, not always in its words) that the
// text of the best candidate holds. Unlike the keyword score it weighs
// every word alike, so it does not trust the namespace's word statistics:
// a common word that happens to be rare in a namespace (a foreign
// conversation's one "resort") scores high there, but is one word of many
// that the best hit shares with the question. An answer the keyword
// path handed its question's score (nsSearch.handOff) holds the
// question's words too. A record holds its speaker's name as well
// (said). It reads the records of the
// best keep candidates, which best reads no more (when relevance leaves
// them all in, as it most often does, no other read is needed).
func (s *search[K]) bestShare(ctx context.Context, list []*candidate[K], keep int) error {
	top, err := s.best(ctx, slices.Clone(list), keep, false)
	if err != nil || len(top) == 0 {
		return err
	}
	q := ranking.WithoutTimeRefs(s.words)
	r := &top[0].doc.Record
	speaker := r.Speaker
	if f := top[0].ns; f != nil && len(f.aliases[speaker]) > 0 {
		// Emily's turn, said by User, holds "Emily".
		speaker += "\n" + strings.Join(f.aliases[speaker], "\n")
	}
	s.top.share = ranking.Share(s.e.tok, q, said(speaker, r.Text))
	if a := top[0].asked; a != "" {
		// An answer ranks by the question it answers: it holds the
		// question's words as much as the question does.
		s.top.share = max(s.top.share, ranking.Share(s.e.tok, q, said(speaker, a)))
	}
	return nil
}

// said is what a record holds for bestShare: its text and who said it. A
// query that names a speaker ("How often does Maria run?") asks about what
// that speaker said, in words that need not name them again ("My goal is
// under two hours", Maria's); asked in a conversation where nobody of that
// name speaks, the name is a word no record holds.
func said(speaker, text string) string {
	if speaker == "" {
		return text
	}
	return speaker + "\n" + text
}

// relevant returns the candidates of list whose relevance is at least
// min (0: the engine's WithMinRelevance; negative: every candidate), each
// with its relevance set. A candidate that matched nothing (no keyword
// score, no positive cosine) is never kept.
func (s *search[K]) relevant(list []*candidate[K], min float32) []*candidate[K] {
	min = s.minimum(min)
	out := list[:0]
	// The gate depends on the search and the candidate's namespace only:
	// computed once per namespace (nsFacts).
	var lastNS *nsFacts
	lastGate := 0.0
	for _, c := range list {
		f := s.features(c)
		if f.kw <= 0 && f.cos <= 0 {
			continue
		}
		if c.ns != lastNS {
			lastNS, lastGate = c.ns, gate(s.mode, f)
		}
		c.relevance = lastGate * strength(s.mode, f)
		if float32(c.relevance) >= min { // as Hit.Relevance reports it
			out = append(out, c)
		}
	}
	return out
}

// minimum is the minimum relevance of a search that asks for min (0: the
// engine's WithMinRelevance; negative: none).
func (s *search[K]) minimum(min float32) float32 {
	if min == 0 {
		return s.e.cfg.minRelevance
	}
	return min
}

// features returns what relevance reads of candidate c.
func (s *search[K]) features(c *candidate[K]) features {
	cos := 0.0
	if c.HasVec {
		cos = c.VecScore
	}
	cover, share := c.ns.cover, s.top.share
	if c.ns.recalled {
		cover, share = 1, 1
	}
	return features{kw: c.kwRelevant, cos: cos, kwBest: s.top.keyword, cosBest: s.top.vector, cover: cover, share: share, cosFloor: s.top.floor, docs: c.ns.docs, unknown: len(c.ns.unknown) > 0, documents: c.ns.documents,
		lexical: s.lexical()}
}

// lexical reports whether the search's paths count words alone: keyword
// mode, or a hybrid search under margin fusion (the fusion of a lexical
// embedder's cosines, the offline hash's: a count of hashed words and
// trigrams shared). Over a model's vectors (score fusion) a cosine speaks
// for meaning.
func (s *search[K]) lexical() bool {
	return s.mode == memory.KeywordOnly || s.mode == memory.Hybrid && s.fusion().Kind == ranking.MarginFusion
}

// wordless counts again, in a search whose paths count words alone
// (lexical), the relevance of each hit of list (read by best) whose own
// words matched on the keyword path but share none with the query other
// than function words ("my" of "where does my sister live?" in "My cat is
// called Miso."): its share of the best as it is, not to the ¼
// (features.alone). It returns list without the hits that fall below min
// (as relevant reads it). Not a hit its neighbours, its conversation or
// the query's time lent to, nor an answer its question handed its score
// to: their relevance reads what was lent. Measured 2026-12-05: among ten
// notes "where does my sister live?" no longer brings back the cat at
// 0.50; every development set's recall, hits and false surfaces unchanged
// (`agentmem eval DIR --cross-probes`); small stores (`--small-stores 7`)
// paste fewer notes: MemoryBank 4.3 → 3.9 a question (22% → 24% of them
// evidence), RealMem 1.3 → 1.2 (47% → 48%) at recall@10 0.304 → 0.303
// (four evidence notes of 1,352 questions lost, each matched by "now",
// "we", "do" and the like alone). The speaker's boost (a query about "my"
// things prefers the user's turns) is no loan (lent): "what did my doctor
// say?" no longer brings back "I'm planning a trip with my wife" at 0.45;
// measured 2026-12-05, every development set's recall and false surfaces
// unchanged, small stores paste fewer notes: MemoryBank 3.9 → 3.8 a
// question (24.1% → 25.3% evidence), RealMem's 48.1% → 48.6% evidence,
// SQuAD's hits 9.0 → 8.9.
//
// A turn whose own words share none with the query but function words,
// lent to by its neighbours, is asked of them (Source.Neighbours, one
// read for the few there are): when neither holds a word of the query but
// function words, what they lent it is no relevance either, and it reads
// what is left (scored.unlent: its own words and what its conversation or
// the query's time lent it), as it is when that is its own words alone.
// "What did my doctor say?" no longer brings back, at 0.24, the
// assistant's "That sounds wonderful…" for the turn before it, "I'm
// planning a trip with my wife". Measured 2026-12-05, every development
// set's recall and false surfaces unchanged, in small stores too; the
// bundled set's hybrid hits a question 9.0 → 8.9.
func (s *search[K]) wordless(ctx context.Context, qterms map[string]bool, list []*candidate[K], min float32) ([]*candidate[K], error) {
	if !s.lexical() {
		return list, nil
	}
	min = s.minimum(min)
	tok, function := s.e.tok, s.e.function
	// holds reports whether r holds a word of the query other than a
	// function word.
	holds := func(r *memory.Record) bool {
		for _, t := range tok.Tokens(said(r.Speaker, r.Text)) {
			if qterms[t] && !function[t] {
				return true
			}
		}
		return false
	}
	// The hits to count again: a turn its neighbours lent to (kwUnlent
	// below kwRelevant), or one whose own words matched and nothing was
	// lent; and of them, those whose own words hold none of the query's
	// but function words. Those lent to by their neighbours are asked of
	// them, read together.
	var again, asked []*candidate[K]
	var keys []K
	for _, c := range list {
		if !c.read || c.asked != "" {
			continue
		}
		neighbours := c.kwUnlent < c.kwRelevant
		switch {
		case c.kwOwn <= 0 && neighbours:
			// Its own words matched nothing: they hold none of the
			// query's.
		case c.kwOwn > 0 && (neighbours || !lent(c, c.kwRelevant)) && !holds(&c.doc.Record):
		default:
			continue
		}
		again = append(again, c)
		if neighbours {
			keys, asked = append(keys, c.key), append(asked, c)
		}
	}
	if len(again) == 0 {
		return list, nil
	}
	wordy := map[*candidate[K]]bool{} // lent to by a neighbour that holds the query's words
	if len(keys) > 0 {
		before, after, err := s.src.Neighbours(ctx, keys, 1)
		if err != nil {
			return nil, err
		}
		for i, c := range asked {
			for _, r := range slices.Concat(before[i], after[i]) {
				wordy[c] = wordy[c] || holds(&r)
			}
		}
	}
	for _, c := range again {
		f := s.features(c)
		switch {
		case wordy[c]:
			continue // lent for the query's words
		case c.kwUnlent < c.kwRelevant:
			// Its neighbours lent it for words like "my": what is left
			// is what its own words scored and anything else lent it.
			f.kw = c.kwUnlent
			f.alone = c.kwOwn > 0 && !lent(c, c.kwUnlent)
		default:
			f.alone = true
		}
		c.relevance = gate(s.mode, f) * strength(s.mode, f)
	}
	// Every hit of list was at least min (relevant); those counted again
	// may have fallen below it.
	return slices.DeleteFunc(list, func(c *candidate[K]) bool { return float32(c.relevance) < min }), nil
}

// best returns the best keep of list, in order (ranking.Order), with their
// records read: only the records that can make the top keep are read, the
// best keep by score with those tied with the keep-th on everything but
// their id (ranking.Order's last key, read with them). With versions it
// returns, after them, the candidates that score at least
// ranking.NewerScoreRatio of the keep-th (and more than 0): those that
// newerFirst may place among the best keep, as later versions of them.
func (s *search[K]) best(ctx context.Context, list []*candidate[K], keep int, versions bool) ([]*candidate[K], error) {
	byScore := func(a, b *candidate[K]) int { return ranking.Order(a.Paths, b.Paths, a.score, b.score, "", "") }
	slices.SortFunc(list, byScore)
	n := min(keep, len(list))
	for n > 0 && n < len(list) && byScore(list[n-1], list[n]) == 0 {
		n++
	}
	if versions && n > 0 {
		least := ranking.NewerScoreRatio * list[min(keep, n)-1].score
		for n < len(list) && list[n].score >= least && list[n].score > 0 {
			n++
		}
		keep = n
	}
	list = list[:n]
	if n == 0 {
		return list, nil
	}
	var keys []K
	var unread []*candidate[K]
	for _, c := range list {
		if !c.read {
			keys = append(keys, c.key)
			unread = append(unread, c)
		}
	}
	if len(keys) > 0 {
		docs, err := s.src.Docs(ctx, keys)
		if err != nil {
			return nil, err
		}
		for i, c := range unread {
			c.doc, c.read = docs[i], true
		}
	}
	slices.SortFunc(list, func(a, b *candidate[K]) int {
		return ranking.Order(a.Paths, b.Paths, a.score, b.score, a.doc.Record.ID, b.doc.Record.ID)
	})
	return list[:min(keep, len(list))], nil
}

// lent reports whether relevance reads more of c's keyword score than
// its own words scored, as its speaker's boost weighed them: what its
// neighbours, conversation or the query's time lent it. (The margin of
// one part in a billion: score and own were divided by the namespace's
// bound before the boost multiplies own here, after it multiplied score,
// and the two roundings may differ.)
func lent[K comparable](c *candidate[K], kw float64) bool {
	own := c.kwOwn * cmp.Or(c.kwBoost, 1)
	return kw > own*(1+1e-9)
}

// queryTerms returns the terms the keyword path searched for: the query's
// words, its question words left out (as that path leaves them out: "what"
// matches the turns that ask).
func (s *search[K]) queryTerms() map[string]bool {
	qterms := map[string]bool{}
	for _, t := range s.e.tok.Tokens(s.words) {
		qterms[t] = true
	}
	return qterms
}

// newerFirst returns list, in score order, with each hit moved before the
// older hits of its namespace and speaker it is a later version of
// (ranking.NewerFirst; qterms: queryTerms). A hit's time is when what it
// says starts to hold (memory.Record.Since).
func (s *search[K]) newerFirst(qterms map[string]bool, list []*candidate[K]) []*candidate[K] {
	if len(list) < 2 {
		return list
	}
	st := make([]ranking.Statement, len(list))
	for i, c := range list {
		r := &c.doc.Record
		st[i] = ranking.Statement{Source: r.Namespace + "\x00" + r.Speaker, From: r.Since(), Score: c.score, Text: r.Text}
	}
	order, earlier := ranking.NewerFirst(s.e.tok, qterms, st)
	if earlier == nil {
		return list
	}
	out := make([]*candidate[K], len(list))
	for i, j := range order {
		out[i] = list[j]
		for _, k := range earlier[j] {
			out[i].laterThan = append(out[i].laterThan, list[k].doc.Record.ID)
		}
	}
	return out
}

// makeHits turns candidates into results with snippets: the chunks that
// share the most of the terms the keyword path searched for (qterms:
// queryTerms; ranking.SnippetRatio of the most any chunk shares), and
// those the vector path matched nearly as well as the best.
func makeHits[K comparable](s *search[K], qterms map[string]bool, list []*candidate[K], explain bool) []memory.Hit {
	e := s.e
	hits := make([]memory.Hit, len(list))
	for i, c := range list {
		chunks := c.doc.Chunks
		matched := ranking.Snippets(e.tok, qterms, chunks, c.HasKW, c.vecKids)
		snips := make([]string, 0, len(matched))
		for _, ci := range matched {
			if ci < len(chunks) {
				snips = append(snips, chunks[ci])
			}
		}
		r := &c.doc.Record
		hits[i] = memory.Hit{
			ID: r.ID, Text: r.Text, Score: float32(c.score), Time: r.Time, Snippets: snips,
			Namespace: r.Namespace, Speaker: r.Speaker, Tags: slices.Clone(r.Tags),
			VectorRank: c.VecRank, KeywordRank: c.KWRank, Relevance: float32(c.relevance),
			ValidFrom: r.ValidFrom, ValidUntil: r.ValidUntil, Supersedes: r.Supersedes, SupersededBy: r.SupersededBy,
		}
		if explain {
			hits[i].Explain = explanation(s, qterms, c)
		}
	}
	return hits
}

// explanation says why c surfaced.
func explanation[K comparable](s *search[K], qterms map[string]bool, c *candidate[K]) *memory.Explanation {
	e := s.e
	f := s.features(c) // as relevance read them
	x := &memory.Explanation{Keyword: c.KWScore, OwnKeyword: c.kwOwn, Answers: c.asked, Vector: c.VecScore, Fused: c.score, Coverage: f.cover, Records: c.ns.docs, Documents: c.ns.documents,
		BestKeyword: s.top.keyword, BestVector: s.top.vector, BestShare: f.share, UnknownNames: slices.Clone(c.ns.unknown), Speakers: slices.Clone(c.ns.speakers), LaterThan: slices.Clone(c.laterThan)}
	for sp, names := range c.ns.aliases {
		if x.Aliases == nil {
			x.Aliases = map[string][]string{}
		}
		x.Aliases[sp] = slices.Clone(names)
	}
	if c.HasKW {
		x.Paths = append(x.Paths, "keyword")
	}
	if c.HasVec && c.VecScore > 0 {
		// A chunk with cosine 0 shares nothing with the query: the
		// vector path ranked it, but it did not find it.
		x.Paths = append(x.Paths, "vector")
	}
	seen := map[string]bool{}
	for _, t := range e.tok.Tokens(c.doc.Record.Text) {
		if qterms[t] && !seen[t] {
			seen[t] = true
			x.Terms = append(x.Terms, t)
		}
	}
	slices.Sort(x.Terms)
	return x
}
