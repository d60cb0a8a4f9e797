package engine

import (
	"cmp"
	"context"
	"iter"
	"math"
	"slices"
	"strings"

	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory/internal/ranking"
)

// episodesBoosted is how many of the best-matching episodes lend their
// score to their records: a question's evidence sits mostly in the one or
// two conversations about its subject, and reaching deeper lets every
// loosely related conversation's small talk in.
const episodesBoosted = 3

// keyword ranks the records of the query's namespace (or of every
// namespace) by keyword score, best first, up to depth. The query's
// question words are left out (s.words).
func (s *search[K]) keyword(ctx context.Context) ([]scored[K], error) {
	nss, err := s.src.Namespaces(ctx, s.scope.Namespace)
	if err != nil {
		return nil, err
	}
	s.scratch = kwScratchPool.Get().(*kwScratch)
	defer func() {
		kwScratchPool.Put(s.scratch)
		s.scratch = nil
	}()
	var out []scored[K]
	// floor is the depth-th best score of the namespaces ranked so far,
	// once they found depth records: a record of the next that scores
	// below it cannot make the first depth (one that ties may, by its
	// id), and is not ranked.
	floor := math.Inf(-1)
	for _, ns := range nss {
		r, err := s.keywordNamespace(ctx, ns, floor)
		if err != nil {
			return nil, err
		}
		out = append(out, r...)
		if len(nss) > 1 && len(out) >= s.depth {
			out = topScored(out, s.depth)
			floor = out[len(out)-1].score
		}
	}
	return topScored(out, s.depth), nil
}

// nsSearch is the keyword path's work in one namespace.
type nsSearch[K comparable] struct {
	*search[K]
	ns Namespace[K]
	// bound is the most a record of the namespace can score for the
	// query (keyword.MaxScore): scores are reported divided by it.
	bound float64
	// nsFacts are what relevance reads of the namespace; every record
	// ranked from it points to them (scored.ns).
	nsFacts
	// ids is scored's scratch.
	ids []int64
	// asked holds, for each record handOff gave a question's score, the
	// question (its id and text).
	asked map[int64]handed
	// filtered: the scope may leave some of the namespace's records out
	// (its time range, their validity), so a record the keyword path
	// lends to (a neighbour, an episode's record) is checked first.
	filtered bool
	// floor: rank leaves out records whose score is below it (search's
	// keyword: they cannot make the first depth of every namespace).
	floor float64
	// episodeBonus holds what addEpisodes added to the records it found
	// of each episode (ranking.EpisodeBonuses), for addDay.
	episodeBonus map[int64]float64
	// bestOwn is the best score of a record's own words (ranking.Best
	// over them), what neighbours' loans are weighed against.
	bestOwn float64
	// loanScale holds, for each record its neighbours lent to whose
	// score a step multiplied (the time prior, recency: scale), the
	// product of the factors: the loan grew with it.
	loanScale map[int64]float64
	// monologue: the namespace has at most one speaker, and its
	// records are read as notes (rank).
	monologue bool
	// period holds the records of the period a recap question names
	// (addRecap): rank keeps only them, the question's other words being
	// only the filler of a question about talk ("we", "about").
	period map[int64]bool
}

// scored returns the ids of scores, in n.ids (reused by the next call).
func (n *nsSearch[K]) scored(scores *scoreSet) []int64 {
	n.ids = append(n.ids[:0], scores.ids...)
	return n.ids
}

// link returns record id's link (Namespace.Link).
func (n *nsSearch[K]) link(id int64) Link {
	l, _ := n.ns.Link(id)
	return l
}

// keywordNamespace ranks one namespace's records for the query as asked
// (s.text: speakers are found in it, "what did you say" being about the
// answerer's words) and without its question words (s.words).
//
// A record scores BM25 over its own words (the query without its question
// words), plus what its neighbours' words lend it (WithNeighbourWeight
// for the record before it, WithNextWeight for the one after, counted by
// ranking.WithNeighbours), plus what its episode lends it
// (WithEpisodeWeight, ranking.EpisodeBonuses), times 1 + WithTimePrior's
// boost when said in a time the query names, times WithRecency's decay
// with its age when the query refers back to an earlier conversation,
// times 1 + WithSpeakerBoost's boost when spoken by a speaker the query
// names.
func (s *search[K]) keywordNamespace(ctx context.Context, ns Namespace[K], floor float64) ([]scored[K], error) {
	cfg := &s.e.cfg
	tok := s.e.tok
	// A record that the scope leaves out (its time, its validity) gets no
	// words from its neighbours and no episode bonus.
	n := &nsSearch[K]{search: s, ns: ns, filtered: s.scope.Timed() || !s.scope.History && !ns.AllHold(s.scope.AsOf), floor: math.Inf(-1),
		ids: s.scratch.ids[:0]}
	defer func() { s.scratch.ids = n.ids }()
	speakerList := ns.Speakers()
	st := ranking.SpeakerTerms{}
	for _, sp := range speakerList {
		st.Add(tok, sp)
	}
	speakers, rest, err := n.querySpeakers(ctx, st, len(speakerList))
	if err != nil {
		return nil, err
	}
	n.speakers = speakers
	n.monologue = len(speakerList) < 2
	// Fetch more than depth from each field: the sum of two fields can
	// raise a record that neither ranks first.
	fetch := 2 * s.depth
	own, lent := &s.scratch.own, &s.scratch.lent
	own.reset()
	lent.reset()
	wPrev, wNext := cfg.neighbourWeight, cfg.nextWeight
	// search is ns.Search, or ns.Select when the order of its results
	// cannot change a score: with one field (no expansion, no feedback),
	// a record's own score is one result's and what it is lent the sum
	// of at most two (from the record before it and the one after), and
	// a sum of two floats does not depend on their order. Select's
	// results go into buf, reused.
	sel, _ := ns.(Selector)
	if cfg.related != nil || cfg.feedbackDocs > 0 {
		sel = nil
	}
	search := func(buf *[]keyword.Result, groups []keyword.QueryGroup, scope Scope) ([]keyword.Result, error) {
		if sel == nil {
			return ns.Search(ctx, groups, cfg.bm25, fetch, scope)
		}
		r, err := sel.Select(ctx, *buf, groups, cfg.bm25, fetch, scope)
		*buf = r
		return r, err
	}
	addField := func(groups []keyword.QueryGroup) error {
		if len(groups) == 0 {
			return nil
		}
		found, err := search(&s.scratch.found, groups, s.scope)
		if err != nil {
			return err
		}
		for _, r := range found {
			own.add(r.ID, r.Score)
		}
		if wPrev <= 0 && wNext <= 0 {
			return nil
		}
		src := found
		if s.scope.Timed() {
			// A neighbour in range may follow a match out of range.
			if src, err = search(&s.scratch.inScope, groups, Scope{History: true}); err != nil {
				return err
			}
		}
		ids := s.scratch.lenders[:0]
		for _, r := range src {
			ids = append(ids, r.ID)
		}
		s.scratch.lenders = ids
		if err := ns.Links(ctx, nil, ids); err != nil {
			return err
		}
		// inRange is asked only of a record the links name (one that
		// exists): out of the scope is all it can be.
		inRange := func(id int64) bool {
			if !n.filtered {
				return true
			}
			l, ok := ns.Link(id)
			return ok && s.scope.Admits(l)
		}
		adj, _ := ns.(Adjacent)
		for _, r := range src {
			var prev, next int64
			if adj != nil {
				prev, next = adj.Adjacent(r.ID)
			} else {
				l := n.link(r.ID)
				prev, next = l.Prev, l.Next
			}
			if f := next; f >= 0 && wPrev > 0 && inRange(f) {
				lent.add(f, wPrev*r.Score)
			}
			if p := prev; p >= 0 && wNext > 0 && inRange(p) {
				lent.add(p, wNext*r.Score)
			}
		}
		return nil
	}
	// combined returns every record's own score with what its neighbours
	// lend it, and the best direct match (ranking.Best over own: -1 for
	// none).
	combined := func() (*scoreSet, int64) {
		bestID, best := ranking.Best(own.all())
		n.bestOwn = best
		scores := &s.scratch.scores
		scores.copyFrom(own)
		for _, id := range lent.ids {
			scores.set(id, ranking.WithNeighbours(own.get(id), lent.get(id), best))
		}
		return scores, bestID
	}
	groups := s.parseQuery(rest)
	if err := addField(groups); err != nil {
		return nil, err
	}
	facts := &n.nsFacts
	if n.bound, facts.cover, facts.docs, facts.unknown, err = s.maxScore(ctx, ns, groups); err != nil {
		return nil, err
	}
	facts.documents = s.hasCJK() && ns.AvgLength() >= DocumentLength && len(ns.Speakers()) < 2
	s.noteUnknown(facts.unknown)
	s.noteDocs(facts)
	if cfg.related != nil || cfg.feedbackDocs > 0 {
		asked := map[string]bool{} // the query's own terms
		for _, t := range tok.Tokens(rest) {
			asked[t] = true
		}
		ext := s.e.relatedTerms(rest, asked)
		if cfg.feedbackDocs > 0 {
			scores, _ := combined()
			first, err := n.rank(ctx, scores, speakers, cfg.feedbackDocs)
			if err != nil {
				return nil, err
			}
			fb, err := n.feedbackTerms(ctx, first, asked)
			if err != nil {
				return nil, err
			}
			ext = append(ext, fb...)
		}
		if err := addField(keyword.WeightedGroups(ext)); err != nil {
			return nil, err
		}
	}
	scores, bestID := combined()
	if w := cfg.episodeWeight; w > 0 {
		if err := n.addEpisodes(ctx, groups, w, scores, bestID); err != nil {
			return nil, err
		}
	}
	if b := cfg.timeBoost; b > 0 && (scores.len() > 0 && ranking.TimeCue(s.words) || s.recap()) {
		if err := n.timePrior(ctx, b, scores); err != nil {
			return nil, err
		}
	}
	// A recap's period (addRecap) ranks as the talk went: neither the
	// recency prior nor the answer hand-off reorders it.
	recapped := n.period != nil
	if b := cfg.recencyBoost; b > 0 && scores.len() > 0 && !recapped && s.refersBack() {
		ref, err := n.reference(ctx)
		if err != nil {
			return nil, err
		}
		if err := ns.Links(ctx, n.scored(scores), nil); err != nil {
			return nil, err
		}
		// Divided by 1 + b: the newest keep their score, older records
		// lose, so that no score grows past what the query's words allow
		// (relevance's calibration reads the best).
		for _, id := range scores.ids {
			n.scale(scores, id, (1+b*ranking.Recency(ref.Sub(n.link(id).Time), cfg.recencyHalfLife))/(1+b))
		}
	}
	if d := cfg.handOff; d > 0 && scores.len() > 0 && !recapped {
		if err := n.handOff(ctx, scores, speakers, d); err != nil {
			return nil, err
		}
	}
	n.floor = floor
	return n.rank(ctx, scores, speakers, s.depth)
}

// functionGroup reports whether g is a function word's group: one term
// of the function words, no parts.
func (e *Engine) functionGroup(g keyword.QueryGroup) bool {
	return len(g.Main) == 1 && len(g.Parts) == 0 && e.function[g.Main[0]]
}

// parseQuery returns keyword.ParseQuery's groups of rest (the query's
// words for a namespace: without the speakers it names), parsed once a
// search for each rest: every namespace of a search of all asks, most
// with the same words. The groups are read, never changed. A function
// word's group weighs functionWordWeight.
func (s *search[K]) parseQuery(rest string) []keyword.QueryGroup {
	if s.parsed.groups != nil && s.parsed.rest == rest {
		return s.parsed.groups
	}
	g := keyword.ParseQuery(s.e.tok, rest, s.e.cfg.bm25.K3)
	for i := range g {
		if s.e.functionGroup(g[i]) {
			g[i].Weight = cmp.Or(g[i].Weight, 1) * functionWordWeight
		}
	}
	if g != nil {
		s.parsed.rest, s.parsed.groups = rest, g
	}
	return g
}

// refersBack is ranking.RefersBack(s.text), found once a search.
func (s *search[K]) refersBack() bool { return s.once(&s.refers, ranking.RefersBack) }

// recap is ranking.Recap of the query without its recall frame ("Do you
// recall | what we talked about yesterday?": s.question), found once a
// search.
func (s *search[K]) recap() bool {
	return s.once(&s.recapQ, func(string) bool { return ranking.Recap(s.question) })
}

// once returns f(s.text), kept in *answer (0: not asked yet, 1 yes, 2 no)
// for the search's other namespaces.
func (s *search[K]) once(answer *int8, f func(string) bool) bool {
	if *answer == 0 {
		*answer = 2
		if f(s.text) {
			*answer = 1
		}
	}
	return *answer == 1
}

// functionWordWeight is what a query's function word ("my", "you", "me":
// ranking.FunctionTerms) weighs in the keyword path, its scores and its
// bound (keyword.MaxScore) and coverage alike, against 1 for any other
// word. BM25's idf weighs a word by the namespace's records, and in a
// small one a function word is as rare as the words a question is about
// ("where does my sister live?" among six notes: three say "my", one
// "sister"), so that a note matching "my" alone came second; and a
// question's "you" and "me", which no note holds, weighed more in the
// bound than the word the answer holds. Measured 2026-12-04 on the
// development sets (hybrid, no minimum relevance, against 1): MemoryBank
// R@1 0.460 → 0.520 (R@10 0.970 both); RealMem R@5 0.222 → 0.228, R@10
// 0.332 both (Implicit Preference 0.184 → 0.174, Dynamic Updating 0.316 →
// 0.336); the bundled set and the Chinese MemoryBank unchanged; the
// lookup probe's R@1 0.910 → 0.902; 0.5 gave less (MemoryBank R@1 0.500,
// RealMem's Dynamic Updating 0.327); 0 (the words left out) lost
// RealMem's Implicit Preference 0.184 → 0.165.
const functionWordWeight = 0.25

// handOffTop is how many of a namespace's best records handOff reads to
// find the questions among them, and handOffLookup how many of the
// query's distinct terms a question holds when the query is a near-copy
// of it (a lookup): that question is what is asked for, not its answer.
const (
	handOffTop    = 3
	handOffLookup = 6
)

// handOff hands the score of each question among the namespace's best
// handOffTop records (ranking.Asks: a turn that asks, or requests an
// answer: "Check the license of the model.") to its
// answer, the next record, said by another speaker, when the answer
// scores less, and keeps 1 − d of the question's own: the answer ranks
// just above it. A question about a conversation often matches the turn
// that asked for what it wants ("Do you have any recommended dishes?")
// better than the turn that holds it (the dishes). When the query names
// speakers (speakers: "what did I…" names the user), only an answer one
// of them said is handed a score: the asker's own words are what is
// wanted. A question that holds handOffLookup of the query's terms keeps
// its score: the query looks it up.
func (n *nsSearch[K]) handOff(ctx context.Context, scores *scoreSet, speakers []string, d float64) error {
	ids := bestIDs(scores.all())
	if err := n.ns.Links(ctx, ids, ids); err != nil {
		return err
	}
	keys := make([]K, len(ids))
	for i, id := range ids {
		keys[i] = n.ns.Key(id)
	}
	docs, err := n.src.Docs(ctx, keys)
	if err != nil {
		return err
	}
	for i, id := range ids {
		if !ranking.Asks(docs[i].Record.Text) {
			continue
		}
		held, terms := ranking.SharedOf(n.e.tok, n.text, docs[i].Record.Text)
		if held >= handOffLookup {
			continue // the query is the question itself, looked up
		}
		q := n.link(id)
		if q.Next < 0 {
			continue
		}
		ans, ok := n.ns.Link(q.Next)
		if !ok || ans.Speaker == q.Speaker || n.filtered && !n.scope.Admits(ans) || len(speakers) > 0 && !slices.Contains(speakers, ans.Speaker) {
			continue
		}
		if scores.get(id) <= scores.get(q.Next) {
			continue
		}
		scores.set(q.Next, scores.get(id))
		scores.scale(id, 1-d)
		if n.asked == nil {
			n.asked = map[int64]handed{}
		}
		n.asked[q.Next] = handed{from: id, text: docs[i].Record.Text, near: 5*held >= 4*terms}
	}
	return nil
}

// handed is the question whose score handOff handed a record: its id in
// the namespace, its text, and whether it holds nearly all the query's
// terms (near: 4/5 of them or more; the query may be a lookup of it,
// whose cosine the answer is then not given: see search.candidates).
type handed struct {
	from int64
	text string
	near bool
}

// bestIDs returns the handOffTop best-scoring ids, best first, ties by
// id, in one pass over scores: a search of many namespaces calls it for
// each.
func bestIDs(scores iter.Seq2[int64, float64]) []int64 {
	type entry struct {
		id    int64
		score float64
	}
	before := func(x, y entry) bool { return x.score > y.score || x.score == y.score && x.id < y.id }
	var best [handOffTop]entry
	n := 0
	for id, sc := range scores {
		e := entry{id, sc}
		if n == len(best) && !before(e, best[n-1]) {
			continue
		}
		i := n
		if n < len(best) {
			n++
		} else {
			i = n - 1
		}
		for ; i > 0 && before(e, best[i-1]); i-- {
			best[i] = best[i-1]
		}
		best[i] = e
	}
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = best[i].id
	}
	return ids
}

// maxScore returns the most a record of ns can score for groups
// (keyword.MaxScore with the namespace's statistics), and the share of it
// that the query's words that occur in the namespace make up, its time
// references ("on May 2nd") left out of both: a memory's time is in its
// date, not always in its words. It also returns how many records the
// namespace holds and the query's names that it never mentions
// (unknownNames).
func (s *search[K]) maxScore(ctx context.Context, ns Namespace[K], groups []keyword.QueryGroup) (bound, cover float64, docs int, unknown []string, err error) {
	terms := keyword.Terms(groups)
	docs, df, err := ns.DocFreqs(ctx, terms)
	if err != nil {
		return 0, 0, 0, nil, err
	}
	at := make(map[string]int, len(terms))
	for i, t := range terms {
		at[t] = df[i]
	}
	unknown = s.unknownNames(ns, at)
	p := s.e.cfg.bm25
	// A Chinese bigram is a guess at a word: one that occurs nowhere in
	// the namespace most likely straddles two words ("的新" in "陈静的新电话"),
	// and says nothing about whether the namespace holds the answer.
	groups = slices.DeleteFunc(slices.Clone(groups), func(g keyword.QueryGroup) bool {
		return len(g.Main) == 1 && len(g.Parts) == 0 && at[g.Main[0]] == 0 && keyword.IsCJKBigram(g.Main[0])
	})
	bound = keyword.MaxScore(groups, p, float64(docs), func(t string) int { return at[t] })
	if bound <= 0 {
		return 1, 0, docs, unknown, nil
	}
	timed := s.timedTerms()
	// The groups that occur: a word whose whole or parts are in some
	// record.
	var asked, known []keyword.QueryGroup
	for _, g := range groups {
		if len(g.Main) == 1 && timed[g.Main[0]] {
			continue
		}
		asked = append(asked, g)
		if slices.ContainsFunc(slices.Concat(g.Main, g.Parts), func(t string) bool { return at[t] > 0 }) {
			known = append(known, g)
		}
	}
	all := keyword.MaxScore(asked, p, float64(docs), func(t string) int { return at[t] })
	if all <= 0 {
		return bound, 0, docs, unknown, nil
	}
	return bound, keyword.MaxScore(known, p, float64(docs), func(t string) int { return at[t] }) / all, docs, unknown, nil
}

// addEpisodes adds to scores what the records' conversations (episodes)
// score for the query as whole documents (ranking.EpisodeBonuses): each
// record already found that belongs to one of the best episodesBoosted
// episodes gains w times the best record score times its episode's score
// relative to the best episode's, and one in the episode of bestID (the
// record whose own words match best) gains w times the best record score.
// A question is often about what a conversation was about, in words no
// single turn of it says all of; its function words ("my", "what") are
// not: episodes are scored for the query's other words alone (measured
// 2026-12-05: MemoryBank hybrid recall@5 0.929 → 0.934, keyword probes
// surfacing 74.3% → 73.3%, RealMem recall@5 0.222 → 0.221, every
// recall@10 unchanged). Records the query did not find stay out:
// a conversation's small talk does not ride on it.
func (n *nsSearch[K]) addEpisodes(ctx context.Context, groups []keyword.QueryGroup, w float64, scores *scoreSet, bestID int64) error {
	if scores.len() == 0 {
		return nil
	}
	if err := n.ns.Links(ctx, n.scored(scores), nil); err != nil {
		return err
	}
	ids := n.ids // n.scored(scores), as Links was asked
	eps := slices.Grow(n.scratch.eps[:0], len(ids))[:len(ids)]
	n.scratch.eps = eps
	var best float64
	several := false
	for i, id := range ids {
		best = max(best, scores.get(id))
		eps[i] = n.ns.EpisodeOf(id)
		several = several || eps[i] != eps[0]
	}
	if best <= 0 || !several {
		// One conversation lends the same to all it found: no order to
		// change, only the keyword scores' spread to squeeze.
		return nil
	}
	// A conversation is scored for the query's content words: one that
	// shares only its "my" or "what" with it lends nothing.
	content := slices.DeleteFunc(slices.Clone(groups), n.e.functionGroup)
	if len(content) == 0 {
		return nil
	}
	top, err := n.ns.Episodes(ctx, content, n.e.cfg.bm25, episodesBoosted)
	if err != nil {
		return err
	}
	bestEpisode := int64(-1)
	if l, ok := n.ns.Link(bestID); ok {
		bestEpisode = l.Episode
	}
	bonus := ranking.EpisodeBonuses(w, best, top, bestEpisode)
	n.episodeBonus = bonus
	for i, id := range ids {
		if b, ok := bonus[eps[i]]; ok && (!n.filtered || n.scope.Admits(n.link(id))) {
			scores.add(id, b)
		}
	}
	return nil
}

// rank turns a namespace's record scores into its best depth records,
// boosting those spoken by a named speaker; a record the source does not
// know is left out.
func (n *nsSearch[K]) rank(ctx context.Context, scores *scoreSet, speakers []string, depth int) ([]scored[K], error) {
	ids := n.scored(scores)
	// A record whose score, even with the speaker's boost, is below the
	// depth-th best score cannot make the first depth (depth records
	// score at least that much without it), nor one below the floor, and
	// its link need not be read. (Every record is read otherwise: a query
	// naming a user in each of a hundred namespaces that their user
	// introduced themselves in doubled the time of a search of all.)
	most := 1.0
	if len(speakers) > 0 {
		most = max(most, 1+n.e.cfg.speakerBoost)
	}
	if len(ids) > 2*depth {
		var cut float64
		cut, n.scratch.heap = kthLargest(n.scratch.heap, ids, scores, depth)
		ids = slices.DeleteFunc(ids, func(id int64) bool { return scores.get(id)*most < cut })
	}
	if !math.IsInf(n.floor, -1) {
		ids = slices.DeleteFunc(ids, func(id int64) bool { return scores.get(id)*most/n.bound < n.floor })
	}
	if err := n.ns.Links(ctx, ids, nil); err != nil {
		return nil, err
	}
	// out is reused from one namespace to the next: keyword copies
	// what rank returns.
	out := slices.Grow(n.ranked[:0], len(ids))
	defer func() { n.ranked = out[:0] }()
	for _, id := range ids {
		if n.period != nil && !n.period[id] {
			continue
		}
		sc := scores.get(id)
		boost := 1.0
		rid, speaker, ok := n.ns.Owner(id)
		if !ok {
			continue
		}
		if len(speakers) > 0 && slices.Contains(speakers, speaker) {
			boost = 1 + n.e.cfg.speakerBoost
			sc *= boost
		}
		if sc/n.bound < n.floor {
			continue
		}
		own := n.scratch.own.get(id)
		r := scored[K]{key: n.ns.Key(id), nsID: id, id: rid, score: sc / n.bound, ns: &n.nsFacts, own: own / n.bound, boost: boost}
		// Its neighbours' loan, at the size the factors that scaled its
		// score made it (loanScale).
		r.unlent = r.score
		if l := n.scratch.lent.get(id); l > 0 {
			loan := (ranking.WithNeighbours(own, l, n.bestOwn) - own) / n.bound
			r.unlent = max(r.own, r.score-loan*cmp.Or(n.loanScale[id], 1)*boost)
		}
		r.relevant = r.score
		if speaker == "" || n.monologue {
			// A note (a record without a speaker, or any record of a
			// namespace where one speaker says everything: a user's
			// notes kept with their speaker, a diary) is not a turn its
			// neighbours' words speak for: relevance leaves their loan
			// out. The flight noted a minute before "I'm allergic to
			// peanuts" is no answer to "peanuts". (A turn of a
			// conversation is: the answer to a question.)
			r.relevant = r.unlent
		}
		if h, ok := n.asked[id]; ok {
			r.asked, r.askedBy, r.handed = h.text, n.ns.Key(h.from), !h.near
		}
		out = append(out, r)
	}
	return topScored(out, depth), nil
}

// kthLargest returns the k-th largest of the scores of ids (k ≤ len(ids)),
// through a heap of the k largest so far whose root is the smallest, kept
// in h (reused: returned for the next call).
func kthLargest(h []float64, ids []int64, scores *scoreSet, k int) (float64, []float64) {
	h = h[:0]
	down := func(i int) {
		for {
			l, m := 2*i+1, i
			if l < len(h) && h[l] < h[m] {
				m = l
			}
			if r := l + 1; r < len(h) && h[r] < h[m] {
				m = r
			}
			if m == i {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	for _, id := range ids {
		v := scores.get(id)
		switch {
		case len(h) < k:
			h = append(h, v)
			for j := len(h) - 1; j > 0 && h[j] < h[(j-1)/2]; j = (j - 1) / 2 {
				h[j], h[(j-1)/2] = h[(j-1)/2], h[j]
			}
		case v > h[0]:
			h[0] = v
			down(0)
		}
	}
	return h[0], h
}

// compareScored orders by descending score, ties by record id.
func compareScored[K comparable](a, b scored[K]) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	return strings.Compare(a.id, b.id)
}

// topScored returns the first depth of out in compareScored's order
// (reordering out). Past twice depth it keeps the best depth in a heap
// whose root is the worst of them, instead of sorting everything: a
// namespace's scored records are often thousands, its depth 200.
func topScored[K comparable](out []scored[K], depth int) []scored[K] {
	if len(out) <= 2*depth {
		slices.SortFunc(out, compareScored[K])
		return out[:min(len(out), depth)]
	}
	h := out[:0:depth] // the heap lives in out's first depth places
	worse := func(i, j int) bool { return compareScored(h[i], h[j]) > 0 }
	down := func(i int) {
		for {
			l, w := 2*i+1, i
			if l < len(h) && worse(l, w) {
				w = l
			}
			if r := l + 1; r < len(h) && worse(r, w) {
				w = r
			}
			if w == i {
				return
			}
			h[i], h[w] = h[w], h[i]
			i = w
		}
	}
	for i := range out {
		c := out[i]
		switch {
		case len(h) < depth:
			h = append(h, c)
			for j := len(h) - 1; j > 0; {
				p := (j - 1) / 2
				if !worse(j, p) {
					break
				}
				h[j], h[p] = h[p], h[j]
				j = p
			}
		case depth > 0 && compareScored(c, h[0]) < 0:
			h[0] = c
			down(0)
		}
	}
	slices.SortFunc(h, compareScored[K])
	return h
}

// scale multiplies id's score by f, and notes it of a record its
// neighbours lent to (loanScale): relevance may leave the loan out at the
// size the factors made it (scored.unlent). A record lent nothing needs
// no note.
func (n *nsSearch[K]) scale(scores *scoreSet, id int64, f float64) {
	scores.scale(id, f)
	if !n.scratch.lent.has(id) {
		return
	}
	if n.loanScale == nil {
		n.loanScale = map[int64]float64{}
	}
	n.loanScale[id] = cmp.Or(n.loanScale[id], 1) * f
}
