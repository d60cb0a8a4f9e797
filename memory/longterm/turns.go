package longterm

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/agentmem/agentmem/internal/parallel"
	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory/internal/ranking"
)

// turnIndex is the keyword path's index: per namespace, BM25 over whole
// records (not their chunks, which would compete with their own parent,
// and whose tiny members — "Hey Deborah!" — win every query naming a
// person), with statistics of that namespace only, so a query touches only
// its namespace's postings. Beside the text it keeps who spoke (so that a
// query naming a speaker prefers what that speaker said rather than turns
// that say the name) and each record's neighbours, the records written
// just before and after it: a record also scores, at a lower weight, what
// its neighbours' text scores, so that an answer that shares no word with
// the question is found through the turn it answers, and the other way
// round.
//
// A namespace's index is loaded with a store's snapshot (see
// turns_snapshot.go) or built on first use from the stored records, and
// kept up to date by apply and remove afterwards.
type turnIndex struct {
	tok  keyword.Tokenizer
	opts []keyword.IndexOption // BM25 parameters, query tf
	mu   sync.Mutex            // guards ns; held while a namespace is built
	ns   map[string]*nsTurns
}

// nsTurns is one namespace's part of the turn index.
type nsTurns struct {
	text    *keyword.Index
	next    int64
	ids     map[*parent]int64
	parents map[int64]*parent
	last    *parent // the newest record: the previous one of the next
	// follower[id] is the record after id (id's words are its previous
	// turn's), leader[id] the one before (id's words are its next turn's),
	// if they are at most neighbourGap apart.
	follower, leader links
	// speakerTerms maps a term of a speaker's name to the speakers whose
	// name has it.
	speakerTerms ranking.SpeakerTerms
	speakers     map[string]int // speaker → records
	// episodes indexes conversations as whole documents: a run of records
	// each at most neighbourGap after the one before is one episode, and
	// its document is all their texts. episodeOf maps a record to its
	// episode, episodeLen an episode to its number of records.
	episodes    *keyword.Index
	episodeOf   links
	episodeLen  map[int64]int
	nextEpisode int64
	// byTime lists the records by time, then id (nil: not built), for
	// During: built by the first search that asks (under timeMu, as
	// searches share m.mu's read lock), then kept by place (a record
	// later than the last is appended, another inserted) and dropped by
	// removed, to be built again.
	timeMu sync.Mutex
	byTime []timeID
}

// timeID is a record's time and id, the order of nsTurns.byTime.
type timeID struct {
	t  time.Time
	id int64
}

func compareTimeID(a, b timeID) int {
	if c := a.t.Compare(b.t); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

// timeOrder returns the records by time, then id, building the list when
// it is not. m.mu must be held (for reading at least).
func (n *nsTurns) timeOrder() []timeID {
	n.timeMu.Lock()
	defer n.timeMu.Unlock()
	if n.byTime == nil {
		n.byTime = make([]timeID, 0, len(n.parents))
		for id, p := range n.parents {
			n.byTime = append(n.byTime, timeID{p.rec.Time, id})
		}
		slices.SortFunc(n.byTime, compareTimeID)
	}
	return n.byTime
}

func newTurnIndex(tok keyword.Tokenizer, opts ...keyword.IndexOption) *turnIndex {
	return &turnIndex{tok: tok, opts: opts, ns: map[string]*nsTurns{}}
}

// get returns the namespace's index, building it from parents when it has
// none yet. m.mu must be held (for reading at least).
func (ti *turnIndex) get(ns string, m *Memory) *nsTurns {
	ti.mu.Lock()
	n := ti.ns[ns]
	ti.mu.Unlock()
	if n != nil {
		return n
	}
	return ti.getAll([]string{ns}, m)[0]
}

// getAll returns the indexes of the namespaces names, in their order,
// building those that have none yet from one pass over the records (a
// search of every namespace would otherwise read every record once for
// each). m.mu must be held (for reading at least).
func (ti *turnIndex) getAll(names []string, m *Memory) []*nsTurns {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	out := make([]*nsTurns, len(names))
	var missing map[string][]*parent
	for i, ns := range names {
		if out[i] = ti.ns[ns]; out[i] == nil {
			if missing == nil {
				missing = map[string][]*parent{}
			}
			missing[ns] = nil
		}
	}
	if missing == nil {
		return out
	}
	for _, p := range m.parents {
		if ps, ok := missing[p.rec.Namespace]; ok {
			missing[p.rec.Namespace] = append(ps, p)
		}
	}
	for i, ns := range names {
		if out[i] == nil {
			if out[i] = ti.ns[ns]; out[i] == nil { // a name given twice
				out[i] = ti.build(ns, missing[ns], m)
			}
		}
	}
	return out
}

// build indexes ps, the records of namespace ns, and keeps the index.
// ti.mu must be held.
func (ti *turnIndex) build(ns string, ps []*parent, m *Memory) *nsTurns {
	// Insertion order: child ids grow with every write.
	slices.SortFunc(ps, func(a, b *parent) int { return cmp.Compare(firstChild(a), firstChild(b)) })
	n := newNSTurns(ti)
	// Tokenizing is about half the build: a goroutine tokenizes ahead
	// while this one indexes, in slices of buildSlice records.
	toks := make(chan []keyword.Counts, 4)
	go func() {
		defer close(toks)
		for lo := 0; lo < len(ps); lo += buildSlice {
			part := ps[lo:min(lo+buildSlice, len(ps))]
			out := make([]keyword.Counts, len(part))
			for i, p := range part {
				out[i] = keyword.Count(ti.tok.Tokens(m.header(&p.rec) + p.rec.Text))
			}
			toks <- out
		}
	}()
	i := 0
	for part := range toks {
		for _, terms := range part {
			n.add(ti.tok, ps[i], terms)
			i++
		}
	}
	ti.ns[ns] = n
	return n
}

// buildSlice is how many records' tokens are handed over to the indexing
// at a time.
const buildSlice = 256

// namespaces returns the namespaces that hold records. m.mu must be held.
func (ti *turnIndex) namespaces(m *Memory) []string {
	out := make([]string, 0, len(m.nsRecords))
	for ns := range m.nsRecords {
		out = append(out, ns)
	}
	slices.Sort(out)
	return out
}

func firstChild(p *parent) int64 {
	if len(p.children) == 0 {
		return 0
	}
	return p.children[0].id
}

// built reports whether namespace ns's index is built, so that a record
// added to it will be indexed at once (added).
func (ti *turnIndex) built(ns string) bool {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	return ti.ns[ns] != nil
}

// added indexes p if its namespace's index is built (otherwise the build
// will). terms, if not nil, are ti.tok's tokens of header+p.rec.Text,
// tokenized and counted beforehand. m.mu must be held for writing.
func (ti *turnIndex) added(p *parent, header string, terms *keyword.Counts) {
	ti.addedAll([]*parent{p}, []string{header}, []*keyword.Counts{terms}, false)
}

// addedAll is added for each of ps in order, terms[i] ps[i]'s counts or
// nil, headers[i] its header. The records are linked first; then their
// terms go into the text indexes on one goroutine and into the episode
// indexes on another, when there are enough to pay for it (parallel). m.mu
// must be held for writing.
func (ti *turnIndex) addedAll(ps []*parent, headers []string, terms []*keyword.Counts, inParallel bool) {
	type posting struct {
		ix    *keyword.Index
		id    int64
		terms *keyword.Counts
	}
	ti.mu.Lock()
	defer ti.mu.Unlock()
	text := make([]posting, 0, len(ps))
	episodes := make([]posting, 0, len(ps))
	for i, p := range ps {
		n := ti.ns[p.rec.Namespace]
		if n == nil {
			continue
		}
		c := terms[i]
		if c == nil {
			cc := keyword.Count(ti.tok.Tokens(headers[i] + p.rec.Text))
			c = &cc
		}
		id, ep := n.link(ti.tok, p)
		text = append(text, posting{n.text, id, c})
		episodes = append(episodes, posting{n.episodes, ep, c})
	}
	indexEpisodes := func() {
		for _, e := range episodes {
			e.ix.AppendCounts(e.id, *e.terms)
		}
	}
	var done *parallel.Group
	if inParallel && len(text) > 1 {
		done = new(parallel.Group)
		done.Go(indexEpisodes)
	}
	for _, t := range text {
		t.ix.AddCounts(t.id, *t.terms)
	}
	if done != nil {
		done.Wait()
	} else {
		indexEpisodes()
	}
}

// removed drops p, whose indexed text had header. m.mu must be held for
// writing.
func (ti *turnIndex) removed(p *parent, header string) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	n := ti.ns[p.rec.Namespace]
	if n == nil {
		return
	}
	id, ok := n.ids[p]
	if !ok {
		return
	}
	n.text.Delete(id)
	n.leave(id, header+p.rec.Text)
	// A forgotten text leaves its neighbours' fields too, and the records
	// before and after it become each other's neighbours if at most
	// neighbourGap apart: linked as a build from the remaining records
	// (a reopened store) links them, and as memory/postgres does.
	f, hasF := n.follower.get(id)
	l, hasL := n.leader.get(id)
	if hasF {
		n.leader.del(f)
	}
	if hasL {
		n.follower.del(l)
	}
	if hasF && hasL && absDur(n.parents[f].rec.Time.Sub(n.parents[l].rec.Time)) <= neighbourGap {
		n.follower.set(l, f)
		n.leader.set(f, l)
	}
	n.follower.del(id)
	n.leader.del(id)
	delete(n.ids, p)
	delete(n.parents, id)
	n.byTime = nil
	if s := p.rec.Speaker; s != "" {
		if n.speakers[s]--; n.speakers[s] <= 0 {
			delete(n.speakers, s)
			n.speakerTerms.Remove(ti.tok, s)
		}
	}
	if n.last == p {
		// The next record written follows the newest that stays.
		n.last = nil
		if hasL {
			n.last = n.parents[l]
		} else {
			for j := id - 1; j >= 0; j-- {
				if q, ok := n.parents[j]; ok {
					n.last = q
					break
				}
			}
		}
	}
}

// neighbourGap: a record is a neighbour of the one written before it only
// if their times are at most this far apart (one conversation, not the
// last words of a conversation a week before).
const neighbourGap = 12 * time.Hour

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// add indexes p under terms, the counted tokens of its indexed text (its
// header and text), for the record's own document and for its episode's;
// tok splits speaker names.
func (n *nsTurns) add(tok keyword.Tokenizer, p *parent, terms keyword.Counts) {
	id, ep := n.link(tok, p)
	n.text.AddCounts(id, terms)
	n.episodes.AppendCounts(ep, terms)
}

// link gives p, a new record, its id and episode (linked to the record
// before it if that is near enough) and places it (place): all of add but
// indexing its terms under id in n.text and under ep in n.episodes.
func (n *nsTurns) link(tok keyword.Tokenizer, p *parent) (id, ep int64) {
	id = n.next
	n.next++
	ep = -1
	if l := n.last; l != nil && l.rec.Namespace == p.rec.Namespace && absDur(p.rec.Time.Sub(l.rec.Time)) <= neighbourGap {
		if lid, ok := n.ids[l]; ok {
			n.follower.set(lid, id)
			n.leader.set(id, lid)
			ep = n.episodeOf.at(lid)
		}
	}
	if ep < 0 {
		ep = n.nextEpisode
		n.nextEpisode++
	}
	n.place(tok, p, id, ep)
	n.last = p
	return id, ep
}

// place records that p is record id of episode ep: the maps from and to
// its id, its episode's size and its speaker's count (tok splits the
// speaker's name into terms). Indexing its text is the caller's.
func (n *nsTurns) place(tok keyword.Tokenizer, p *parent, id, ep int64) {
	n.ids[p], n.parents[id] = id, p
	if n.byTime != nil {
		e := timeID{p.rec.Time, id}
		if k := len(n.byTime); k == 0 || compareTimeID(n.byTime[k-1], e) < 0 {
			n.byTime = append(n.byTime, e)
		} else {
			i, _ := slices.BinarySearchFunc(n.byTime, e, compareTimeID)
			n.byTime = slices.Insert(n.byTime, i, e)
		}
	}
	n.episodeOf.set(id, ep)
	n.episodeLen[ep]++
	if s := p.rec.Speaker; s != "" {
		if n.speakers[s] == 0 {
			n.speakerTerms.Add(tok, s)
		}
		n.speakers[s]++
	}
}

// leave takes record id, whose indexed text was text, out of its episode.
func (n *nsTurns) leave(id int64, text string) {
	ep, ok := n.episodeOf.get(id)
	if !ok {
		return
	}
	n.episodeOf.del(id)
	if n.episodeLen[ep]--; n.episodeLen[ep] <= 0 {
		delete(n.episodeLen, ep)
		n.episodes.Delete(ep)
		return
	}
	n.episodes.Withdraw(ep, text)
}

// namedSpeakers splits a query into the speakers it names (words that are
// a term of a speaker's name in this namespace, "Deborah" for the speaker
// "Deborah") and the rest of the query.
func (n *nsTurns) namedSpeakers(tok keyword.Tokenizer, query string) (speakers []string, rest string) {
	return n.speakerTerms.NamedSpeakers(tok, len(n.speakers), query)
}
