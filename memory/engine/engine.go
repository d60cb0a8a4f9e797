// Package engine is long-term retrieval, written once for every store: it
// ranks the records of any store that answers its questions through a
// [Source] (a store directory in memory/longterm, a PostgreSQL database in
// memory/postgres), so that the same records rank alike wherever they are
// kept, and every ranking option works on every store.
//
// A search runs two paths. The keyword path ranks whole records by BM25
// with their namespace's statistics, the query's words weighted by their
// idf too, plus what the records just before and after each one score
// (its neighbours: the question an answer replies to), what its
// conversation scores as a whole, and prefers records spoken by a speaker
// the query names; query expansion, relevance feedback and a time prior
// add to it when asked. The vector path ranks records by their best
// chunk's cosine similarity to the query. A hybrid search fuses the two
// (margin, score, weighted or reciprocal rank fusion), a reranker may
// reorder the best, and each hit carries its record, the chunks that
// matched as snippets, and the records around it when asked.
//
// A store implements [Source] (and [Namespace] for its keyword
// statistics and postings) and calls [Search]; it ranks nothing itself.
package engine

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/internal/ranking"
)

// An Engine ranks the records of a store for a query, as its options say.
// It holds no data and is safe for concurrent use.
type Engine struct {
	emb embed.Embedder
	tok keyword.Tokenizer
	cfg config
	// function are tok's terms of English function words
	// (ranking.FunctionTerms), which a query's keyword path weighs
	// less (functionWordWeight).
	function map[string]bool
}

// New returns an engine that embeds queries with emb and splits them into
// terms with tok (the store's tokenizer: the one its keyword statistics
// were counted with), configured by opts. Without a fusion option, a
// hybrid search fuses by score over a model embedder and by margin over
// lexical or word vectors (embed.KindOf), with DefaultWeights(emb). An
// option out of range is an error wrapping memory.ErrInvalidArgument.
func New(emb embed.Embedder, tok keyword.Tokenizer, opts ...Option) (*Engine, error) {
	if emb == nil {
		return nil, fmt.Errorf("engine: %w: nil embedder", memory.ErrInvalidArgument)
	}
	if tok == nil {
		return nil, fmt.Errorf("engine: %w: nil tokenizer", memory.ErrInvalidArgument)
	}
	c := defaultConfig()
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&c); err != nil {
			return nil, fmt.Errorf("engine: %w: %w", memory.ErrInvalidArgument, err)
		}
	}
	if !c.fusionSet {
		c.fusion = ranking.DefaultKind(emb)
	}
	if c.vectorWeight == 0 && c.keywordWeight == 0 {
		c.vectorWeight, c.keywordWeight = DefaultWeights(emb)
	}
	c.bm25.QueryIDF = !c.noQueryIDF
	return &Engine{emb: emb, tok: tok, cfg: c, function: ranking.FunctionTerms(tok)}, nil
}

// Mode is the mode of a search that does not choose one (WithMode).
func (e *Engine) Mode() memory.Mode { return e.cfg.mode }

// TopK is how many hits a search returns when its Query.K is 0 (WithTopK).
func (e *Engine) TopK() int { return e.cfg.topK }

// A Store opens consistent views of a store's data for searches.
type Store[K comparable] interface {
	// View returns a view of the store's data that stays consistent until
	// its Close.
	View(ctx context.Context) (Source[K], error)
}

// A NamespaceStore is a Store that can ready a view for the searches of
// one namespace (ns; empty: every namespace), for instance by reading the
// namespace's statistics together with opening the view. Search and
// Similar open their views through it when the store has it.
type NamespaceStore[K comparable] interface {
	Store[K]
	// ViewNamespace is View for searches of namespace ns.
	ViewNamespace(ctx context.Context, ns string) (Source[K], error)
}

// A SearchStore is a NamespaceStore that can ready a view for the paths
// a search takes too: both reports whether it takes the keyword and the
// vector path, which a view that can run them side by side (Parallel)
// needs to set that up for; a search of one path, or a view for
// neighbours or near-duplicates, has no use for it.
type SearchStore[K comparable] interface {
	NamespaceStore[K]
	// ViewSearch is ViewNamespace for a search that takes both paths
	// (both) or at most one.
	ViewSearch(ctx context.Context, ns string, both bool) (Source[K], error)
}

// view opens a view of st for the searches of namespace ns, on both paths
// or at most one.
func view[K comparable](ctx context.Context, st Store[K], ns string, both bool) (Source[K], error) {
	if n, ok := st.(SearchStore[K]); ok {
		return n.ViewSearch(ctx, ns, both)
	}
	if n, ok := st.(NamespaceStore[K]); ok {
		return n.ViewNamespace(ctx, ns)
	}
	return st.View(ctx)
}

// Parallel is the optional interface of a Source whose keyword and vector
// questions may be asked at the same time from two goroutines; the
// engine then runs the two paths side by side, so that a search costs
// the slower path's time, not their sum.
type Parallel interface {
	Parallel() bool
}

// candidate is a record found by one or both paths.
type candidate[K comparable] struct {
	ranking.Paths
	key        K
	vecKids    []ranking.Child // chunks matched by the vector path, best first
	score      float64         // fused
	relevance  float64
	ns         *nsFacts // its namespace's (for one the vector path alone found, the best namespace's)
	doc        Doc
	read       bool     // doc is read (Source.Docs)
	asked      string   // the question it answers, when the keyword path handed it that question's score (nsSearch.handOff)
	kwOwn      float64  // the keyword path's score of its own words (scored.own)
	kwBoost    float64  // what KWScore was multiplied by for its speaker (scored.boost)
	kwRelevant float64  // the part of KWScore relevance reads (scored.relevant)
	kwUnlent   float64  // KWScore without its neighbours' loan (scored.unlent)
	laterThan  []string // the ids of the hits it was placed before, its earlier versions (search.newerFirst)
}

// CheckQuery returns an error wrapping memory.ErrInvalidArgument for a
// query with a field out of range: a negative K, an unknown mode, To
// before From, Neighbours outside [0, memory.MaxNeighbours].
func CheckQuery(q memory.Query) error {
	switch {
	case q.K < 0:
		return fmt.Errorf("%w: K = %d", memory.ErrInvalidArgument, q.K)
	case q.Mode < memory.Hybrid || q.Mode > memory.KeywordOnly:
		return fmt.Errorf("%w: mode %d", memory.ErrInvalidArgument, q.Mode)
	case !q.From.IsZero() && !q.To.IsZero() && q.To.Before(q.From):
		return fmt.Errorf("%w: To %v is before From %v", memory.ErrInvalidArgument, q.To, q.From)
	case q.Neighbours < 0 || q.Neighbours > memory.MaxNeighbours:
		return fmt.Errorf("%w: Neighbours = %d, not in [0, %d]", memory.ErrInvalidArgument, q.Neighbours, memory.MaxNeighbours)
	case q.MaxTokens < 0:
		return fmt.Errorf("%w: MaxTokens = %d", memory.ErrInvalidArgument, q.MaxTokens)
	}
	return nil
}

// Search answers q from the store's data as e ranks it. A query without
// letters or digits, and a namespace with nothing in it, give an empty
// result and a nil error. Each path brings 4·K candidates, at least 200
// (ranking.Depth), so that the first results are the same for every K up
// to 50: asking for more does not reorder them.
func Search[K comparable](ctx context.Context, e *Engine, st Store[K], q memory.Query) ([]memory.Hit, error) {
	if err := CheckQuery(q); err != nil {
		return nil, err
	}
	k := cmp.Or(q.K, e.cfg.topK)
	minScore := cmp.Or(q.MinScore, e.cfg.minScore)
	text := strings.ToValidUTF8(q.Text, "\uFFFD")
	// How many candidates reach the fusion (and the reranker), and how
	// many each path brings.
	keep := max(k, e.cfg.rerankDepth)
	depth := ranking.Depth(keep)
	if !HasWord(text) {
		// Nothing to find; but a closed store says so.
		src, err := view(ctx, st, q.Namespace, false)
		if err != nil {
			return nil, err
		}
		src.Close()
		return []memory.Hit{}, nil
	}
	// The query is embedded before the view is opened: a model server's
	// time holds no lock and no transaction. It is embedded without its
	// recall frame ("Do you remember", ranking.WithoutRecallFrame), as
	// the keyword path reads it: over the offline hash the frame's words
	// counted in every cosine. The question is cut once a search
	// (search.question).
	question := ranking.WithoutRecallFrame(text)
	var qvec []float32
	if q.Mode != memory.KeywordOnly {
		v, err := embed.EmbedQuery(ctx, e.emb, question)
		if err != nil {
			return nil, fmt.Errorf("embed query: %w", err)
		}
		qvec = v
	}
	src, err := view(ctx, st, q.Namespace, qvec != nil && q.Mode != memory.VectorOnly)
	if err != nil {
		return nil, err
	}
	defer func() {
		if src != nil {
			src.Close()
		}
	}()
	s := &search[K]{e: e, src: src, mode: q.Mode, text: text, question: question, words: ranking.WithoutQuestionWords(text), depth: depth, minScore: minScore, asOf: q.AsOf,
		scope: Scope{Namespace: q.Namespace, From: q.From, To: q.To, AsOf: cmp.Or(q.AsOf, time.Now()), History: q.History}}
	list, err := s.candidates(ctx, qvec)
	if err != nil {
		return nil, err
	}
	if err := s.bestShare(ctx, list, keep); err != nil {
		return nil, err
	}
	list = s.relevant(list, q.MinRelevance)
	// A later version of a hit may come before it (WithNewerFirst) in a
	// search with a keyword path: best reads the hits that may.
	versions := q.Mode != memory.VectorOnly && !e.cfg.noNewerFirst
	if list, err = s.best(ctx, list, keep, versions); err != nil {
		return nil, err
	}
	qterms := s.queryTerms()
	if list, err = s.wordless(ctx, qterms, list, q.MinRelevance); err != nil {
		return nil, err
	}
	if versions {
		list = s.newerFirst(qterms, list)
		list = list[:min(keep, len(list))]
	}
	hits := makeHits(s, qterms, list, q.Explain)
	keys := make([]K, len(list))
	for i, c := range list {
		keys[i] = c.key
	}
	if r := e.cfg.reranker; r != nil && len(hits) > 1 {
		// The reranker (a model, perhaps) runs outside the view: a store
		// is not held for it.
		src.Close()
		src = nil
		if hits, keys, err = rerank(ctx, r, text, hits, keys); err != nil {
			return nil, err
		}
	}
	if len(hits) > k {
		hits, keys = hits[:k], keys[:k]
	}
	if q.Neighbours == 0 || len(hits) == 0 {
		return e.budget(hits, q.MaxTokens), nil
	}
	if src == nil {
		if src, err = view(ctx, st, q.Namespace, false); err != nil {
			return nil, err
		}
	}
	before, after, err := src.Neighbours(ctx, keys, q.Neighbours)
	if err != nil {
		return nil, err
	}
	for i := range hits {
		hits[i].Before, hits[i].After = before[i], after[i]
	}
	return e.budget(hits, q.MaxTokens), nil
}

// budget keeps, in order, the hits whose text and neighbours fit what is
// left of max tokens (WithTokenCounter counts them), each with its cost
// in Tokens; max 0 keeps every hit and counts nothing. A hit too large for
// what is left is passed over, so that a smaller one after it may still
// fit.
func (e *Engine) budget(hits []memory.Hit, max int) []memory.Hit {
	if max <= 0 {
		return hits
	}
	out := hits[:0]
	used := 0
	for _, h := range hits {
		cost := e.cfg.tokens.Count(h.Text)
		for _, r := range slices.Concat(h.Before, h.After) {
			cost += e.cfg.tokens.Count(r.Text)
		}
		if used+cost > max {
			continue
		}
		used += cost
		h.Tokens = cost
		out = append(out, h)
	}
	return out
}

// rerank reorders hits (and their keys alike) with r.
func rerank[K comparable](ctx context.Context, r Reranker, text string, hits []memory.Hit, keys []K) ([]memory.Hit, []K, error) {
	byID := make(map[string]K, len(hits))
	for i, h := range hits {
		byID[h.ID] = keys[i]
	}
	rr, err := r.Rerank(ctx, text, hits)
	if err != nil {
		return nil, nil, fmt.Errorf("rerank: %w", err)
	}
	out := make([]K, 0, len(rr))
	hs := rr[:0:0]
	for _, h := range rr {
		if key, ok := byID[h.ID]; ok {
			out = append(out, key)
			hs = append(hs, h)
		}
	}
	return hs, out, nil
}

// HasWord reports whether s holds a letter or a digit: a query without one
// finds nothing, and a record without one is not stored.
func HasWord(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) {
			return true
		}
	}
	return false
}
