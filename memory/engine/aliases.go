package engine

import (
	"context"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory/internal/ranking"
)

// querySpeakers returns the speakers the query asks about in the
// namespace, by their names or by the names they gave (addAliases), whose
// records the keyword path prefers, and the words it searches
// (ranking.KeywordQuery). A speaker named only by a name they gave is read
// as the asker's "I" and "me" (ranking.SpeakerTerms.ByName). ("Emily and
// you" names nobody in particular, and the name stays a word of the
// query: left out, as "we" is, MemoryBank's third-person R@5 fell 0.919 →
// 0.914 and its Chinese version's R@10 0.990 → 0.985.)
func (n *nsSearch[K]) querySpeakers(ctx context.Context, st ranking.SpeakerTerms, speakers int) ([]string, string, error) {
	if err := n.addAliases(ctx, st); err != nil {
		return nil, "", err
	}
	var given []string
	for _, sp := range slices.Sorted(maps.Keys(n.aliases)) {
		given = append(given, n.aliases[sp]...)
	}
	tok := n.e.tok
	asked := ranking.SpaceNames(n.question, given)
	named, rest := st.NamedSpeakers(tok, speakers, asked)
	if len(named) > 0 && !slices.ContainsFunc(named, func(sp string) bool { return len(n.aliases[sp]) == 0 }) {
		var names []string
		for _, sp := range named {
			names = append(names, n.aliases[sp]...)
		}
		named = st.ByName(tok, named, names, n.text)
	}
	named, rest = ranking.KeywordQuery(tok, asked, n.words, named, rest)
	return named, rest, nil
}

// introFetch is how many of a namespace's records that hold a name the
// query says addAliases looks at for a self-introduction, and introRead
// how many of them, said by the user, it reads: the assistant names the
// user back far more often than the user says their own name ("Hi Luna,
// nice to chat with you.", in 27 of the 28 turns of a MemoryBank
// conversation that say it), and BM25 ranks the shortest first.
const (
	introFetch = 32
	introRead  = 8
)

// addAliases adds to st, as a speaker's terms, each name the query says
// (ranking.PersonNames) that is no speaker's but that the namespace's
// user (ranking.IsAsker) gave as their own ("Hello, my name is Emily.":
// ranking.Introduces), and notes it in n.aliases: an agent that stores
// its talk as "user" and "assistant" is asked "What painters did you
// recommend to Emily?" about the user, whose turns hold the answer and
// whose name is said once, in a turn about nothing else. The records read
// are the user's among the introFetch best for the name, the namespace's
// every version. An assistant's "Hello, my name is …" is most often a
// line it writes for the user (a template, a role it plays), and is not
// read.
func (n *nsSearch[K]) addAliases(ctx context.Context, st ranking.SpeakerTerms) error {
	if len(st) == 0 {
		return nil
	}
	tok := n.e.tok
	alias := func(name, speaker string) {
		if !slices.Contains(n.aliases[speaker], name) {
			st.Alias(tok, name, speaker)
			if n.aliases == nil {
				n.aliases = map[string][]string{}
			}
			n.aliases[speaker] = append(n.aliases[speaker], name)
		}
	}
	for _, p := range n.persons() {
		if len(p.terms) == 0 || !slices.ContainsFunc(p.terms, func(t string) bool { _, ok := st[t]; return !ok }) {
			continue // a speaker's own name
		}
		name := p.name
		docs, speakers, err := n.userTurns(ctx, p.groups)
		if err != nil {
			return err
		}
		for i, d := range docs {
			if ranking.Introduces(d.Record.Text, name) {
				alias(name, speakers[i])
			}
		}
	}
	if !n.hasCJK() {
		return nil
	}
	// Chinese writes no space around a name: the user's introductions
	// say what the query's names may be (ranking.IntroducedNames).
	groups := make([]keyword.QueryGroup, len(ranking.IntroTerms))
	for i, t := range ranking.IntroTerms {
		groups[i] = keyword.QueryGroup{Main: []string{t}}
	}
	docs, speakers, err := n.userTurns(ctx, groups)
	if err != nil {
		return err
	}
	for i, d := range docs {
		for _, name := range ranking.IntroducedNames(d.Record.Text) {
			if strings.Contains(n.text, name) {
				alias(name, speakers[i])
			}
		}
	}
	return nil
}

// userTurns returns the user's (ranking.IsAsker) records among the
// introFetch that groups find best in the namespace, every version, the
// first introRead of them, with their speakers.
func (n *nsSearch[K]) userTurns(ctx context.Context, groups []keyword.QueryGroup) ([]Doc, []string, error) {
	found, err := n.ns.Search(ctx, groups, n.e.cfg.bm25, introFetch, Scope{History: true})
	if err != nil || len(found) == 0 {
		return nil, nil, err
	}
	ids := make([]int64, len(found))
	for i, r := range found {
		ids[i] = r.ID
	}
	if err := n.ns.Links(ctx, ids, nil); err != nil {
		return nil, nil, err
	}
	var keys []K
	var speakers []string
	for _, id := range ids {
		if _, sp, ok := n.ns.Owner(id); ok && ranking.IsAsker(sp) {
			if keys, speakers = append(keys, n.ns.Key(id)), append(speakers, sp); len(keys) == introRead {
				break
			}
		}
	}
	if len(keys) == 0 {
		return nil, nil, nil
	}
	docs, err := n.src.Docs(ctx, keys)
	return docs, speakers, err
}

// person is a name the query may call a person by (ranking.PersonNames),
// its terms, and the keyword query that finds it.
type person struct {
	name   string
	terms  []string
	groups []keyword.QueryGroup
}

// persons returns the query's persons (ranking.PersonNames), found once a
// search: every namespace of a search of all looks for the same names.
func (s *search[K]) persons() []person {
	if !s.personsSet {
		s.personsSet = true
		for _, name := range ranking.PersonNames(s.text) {
			s.personNames = append(s.personNames, person{name: name, terms: s.e.tok.Tokens(name),
				groups: keyword.ParseQuery(s.e.tok, name, s.e.cfg.bm25.K3)})
		}
	}
	return s.personNames
}

// hasCJK reports whether the query holds a Han character, found once a
// search.
func (s *search[K]) hasCJK() bool {
	return s.once(&s.cjk, func(q string) bool {
		return strings.ContainsFunc(q, func(r rune) bool { return unicode.Is(unicode.Han, r) })
	})
}
