package server

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/agentmem/agentmem/internal/errs"
	"github.com/agentmem/agentmem/memory"
)

// The operations below are what both the HTTP API and the MCP tools do:
// each checks the principal's namespace and the read-only flag, then calls
// the store.

// errNoID: a request names no memory.
var errNoID = invalid("id is required")

// notFound is the error for a memory that does not exist or that the
// principal may not see (the two are not told apart, so that a pinned
// token cannot probe other namespaces' ids).
func notFound(id string) error {
	return fmt.Errorf("server: memory %q: %w", id, errs.NotFound)
}

func (s *Server) add(ctx context.Context, p *principal, req *AddRequest) (AddResult, error) {
	if s.readOnly {
		return AddResult{}, errReadOnly
	}
	ns, err := p.scope(req.namespace())
	if err != nil {
		return AddResult{}, err
	}
	if req.ID != "" {
		if err := p.mayChooseID(ctx, s, ns, req.ID); err != nil {
			return AddResult{}, err
		}
	}
	recs, err := req.records(ns)
	if err != nil {
		return AddResult{}, err
	}
	f, ok := s.store.(memory.Facts)
	if !ok {
		ids, err := s.store.AddBatch(ctx, recs)
		if err != nil {
			return AddResult{}, err
		}
		return AddResult{ID: ids[0], IDs: ids}, nil
	}
	outs, err := f.Remember(ctx, recs...)
	if err != nil {
		return AddResult{}, err
	}
	res := AddResult{ID: outs[0].ID, IDs: make([]string, len(outs)), Duplicate: len(outs) == 1 && outs[0].Duplicate}
	for i, o := range outs {
		res.IDs[i] = o.ID
	}
	for _, sim := range outs[0].Similar {
		res.Similar = append(res.Similar, SimilarMemory{ID: sim.ID, Text: sim.Text, Score: sim.Score})
	}
	return res, nil
}

// mayChooseID says whether p may add a memory with the id it chose, in
// namespace ns. Replacing a record in a namespace p may not see would move
// it into p's, so that is refused; and so that the refusal does not tell a
// pinned token that the id exists elsewhere, a pinned token may choose
// only the id of one of its memories or a new one under its namespace,
// "NS/…", and is refused alike (403 forbidden) for every other id, stored
// or not.
func (p *principal) mayChooseID(ctx context.Context, s *Server, ns, id string) error {
	old, ok, err := s.record(ctx, id)
	if err != nil {
		return err
	}
	switch {
	case ok && p.canSee(old.Namespace):
		return nil
	case p.unpinned() && !ok:
		return nil
	case !ok && strings.HasPrefix(id, ns+"/"):
		return nil
	}
	return &apiError{http.StatusForbidden, CodeForbidden,
		fmt.Sprintf("a token pinned to namespace %q may choose only the id of one of its memories or a new id starting with %q", ns, ns+"/")}
}

// record returns the record with the given id and whether it is stored,
// through the store's GetContext when it has one, so that a database that
// cannot be reached is an error rather than a missing record.
func (s *Server) record(ctx context.Context, id string) (memory.Record, bool, error) {
	if g, ok := s.store.(getter); ok {
		return g.GetContext(ctx, id)
	}
	rec, ok := s.store.Get(id)
	return rec, ok, nil
}

func (s *Server) get(ctx context.Context, p *principal, id string) (Memory, error) {
	if id == "" {
		return Memory{}, errNoID
	}
	rec, ok, err := s.record(ctx, id)
	if err != nil {
		return Memory{}, err
	}
	if !ok || !p.canSee(rec.Namespace) {
		return Memory{}, notFound(id)
	}
	return toMemory(rec), nil
}

func (s *Server) update(ctx context.Context, p *principal, id string, req *UpdateRequest) (Memory, error) {
	if s.readOnly {
		return Memory{}, errReadOnly
	}
	if id == "" {
		return Memory{}, errNoID
	}
	old, ok, err := s.record(ctx, id)
	if err != nil {
		return Memory{}, err
	}
	if !ok || !p.canSee(old.Namespace) {
		return Memory{}, notFound(id)
	}
	rec, err := req.apply(old)
	if err != nil {
		return Memory{}, err
	}
	f, ok := s.store.(memory.Facts)
	if !ok {
		// A memory that keeps no versions is rewritten in place.
		rec.ID, rec.Time = id, cmp.Or(rec.Time, old.Time)
		if _, err := s.store.Add(ctx, rec); err != nil {
			return Memory{}, err
		}
		return toMemory(rec), nil
	}
	// A new version: the store checks, as it writes, that the old one is
	// still current (not deleted or superseded meanwhile).
	out, err := f.Supersede(ctx, id, rec)
	if err != nil {
		return Memory{}, err
	}
	stored, ok, err := s.record(ctx, out.ID)
	if err != nil {
		return Memory{}, err
	}
	if !ok {
		return Memory{}, notFound(out.ID) // forgotten at once by another request
	}
	return toMemory(stored), nil
}

// history returns the versions of the memory id, oldest first.
func (s *Server) history(ctx context.Context, p *principal, id string) (HistoryResult, error) {
	if id == "" {
		return HistoryResult{}, errNoID
	}
	f, ok := s.store.(memory.Facts)
	if !ok {
		return HistoryResult{}, fmt.Errorf("server: history: %w: the store keeps no versions", memory.ErrUnsupported)
	}
	h, err := f.History(ctx, id)
	if err != nil {
		return HistoryResult{}, err
	}
	res := HistoryResult{Versions: []Memory{}}
	for _, r := range h {
		if p.canSee(r.Namespace) {
			res.Versions = append(res.Versions, toMemory(r))
		}
	}
	if len(res.Versions) == 0 {
		return HistoryResult{}, notFound(id)
	}
	return res, nil
}

func (s *Server) delete(ctx context.Context, p *principal, id string) error {
	if s.readOnly {
		return errReadOnly
	}
	if id == "" {
		return errNoID
	}
	rec, ok, err := s.record(ctx, id)
	if err != nil {
		return err
	}
	if !ok || !p.canSee(rec.Namespace) {
		return notFound(id)
	}
	return s.store.Forget(ctx, id)
}

// searchOverfetch is how many times K a search asks the store for when it
// filters by tags afterwards (the store cannot filter by tags itself).
const searchOverfetch = 5

func (s *Server) search(ctx context.Context, p *principal, req *SearchRequest) (SearchResult, error) {
	ns, err := p.scope(req.namespace())
	if err != nil {
		return SearchResult{}, err
	}
	q, tags, err := req.query(ns)
	if err != nil {
		return SearchResult{}, err
	}
	if q.AsOf.IsZero() {
		// Asked now, by an agent in a conversation: "yesterday" is the
		// day before the clock's, not the 60 hours up to the newest
		// memory (memory.Query.AsOf).
		q.AsOf = time.Now()
	}
	k := q.K
	if k == 0 {
		k = DefaultK
	}
	budget := q.MaxTokens
	if len(tags) > 0 {
		q.K = min(k*searchOverfetch, MaxK)
		if budget > 0 {
			// The budget is for the hits that have the tags: the store
			// counts every hit's tokens, the loop below spends it.
			q.MaxTokens = math.MaxInt32
		}
	}
	hits, err := s.store.Query(ctx, q)
	if err != nil {
		return SearchResult{}, err
	}
	out := SearchResult{Hits: make([]Hit, 0, len(hits))}
	for _, h := range hits {
		if len(out.Hits) == k {
			break
		}
		if !hasTags(h.Tags, tags) || budget > 0 && out.Tokens+h.Tokens > budget {
			continue
		}
		out.Hits = append(out.Hits, toHit(h))
		out.Tokens += h.Tokens
	}
	if len(out.Hits) == 0 {
		switch {
		case len(tags) == 0:
			if out.Reason, err = EmptyReason(ctx, s.store, q); err != nil {
				return SearchResult{}, err
			}
		case slices.ContainsFunc(hits, func(h memory.Hit) bool { return hasTags(h.Tags, tags) }):
			out.Reason = nothingFits(budget, slices.DeleteFunc(hits, func(h memory.Hit) bool { return !hasTags(h.Tags, tags) }))
		case len(hits) > 0:
			out.Reason = NoneTagged
		default:
			q.MaxTokens = 0 // searched without a budget already
			if out.Reason, err = EmptyReason(ctx, s.store, q); err != nil {
				return SearchResult{}, err
			}
		}
	}
	return out, nil
}

func (s *Server) list(ctx context.Context, p *principal, req *ListRequest) (ListResult, error) {
	ns, err := p.scope(req.namespace())
	if err != nil {
		return ListResult{}, err
	}
	o, err := req.options(ns)
	if err != nil {
		return ListResult{}, err
	}
	recs, total, err := s.store.List(ctx, o)
	if err != nil {
		return ListResult{}, err
	}
	out := ListResult{Memories: make([]Memory, len(recs)), Total: total, Offset: o.Offset, Limit: o.Limit}
	for i, r := range recs {
		out.Memories[i] = toMemory(r)
	}
	return out, nil
}

func (s *Server) stats(ctx context.Context, p *principal) (Stats, error) {
	if !p.unpinned() {
		return Stats{}, errForbidden
	}
	st := Stats{ReadOnly: s.readOnly}
	if c, ok := s.store.(counter); ok {
		// A database that cannot be reached is an error, not 0 memories.
		var err error
		if st.Memories, st.Chunks, err = c.Counts(ctx); err != nil {
			return Stats{}, err
		}
		return st, nil
	}
	st.Memories = s.store.Len()
	if c, ok := s.store.(chunker); ok {
		st.Chunks = c.Chunks()
	}
	return st, nil
}
