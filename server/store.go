package server

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agentmem/agentmem/internal/errs"
	"github.com/agentmem/agentmem/memory/longterm"
)

// Store is what the server needs of a memory: today's [*longterm.Memory]
// method set plus List. It is declared here, by its consumer, so that any
// memory with these methods can be served.
//
// Implementations must be safe for concurrent use; errors should wrap the
// library's sentinels (not found, invalid argument, closed, …), which the
// server maps to stable codes (see [Error]).
type Store interface {
	// Add stores rec (replacing the stored record with the same ID) and
	// returns its id; when it returns nil the record is durable.
	Add(ctx context.Context, rec longterm.Record) (string, error)
	// AddBatch stores recs atomically (all or nothing) with one sync.
	AddBatch(ctx context.Context, recs []longterm.Record) ([]string, error)
	// Get returns the stored record with the given id.
	Get(id string) (longterm.Record, bool)
	// Forget removes the record with the given id (not found: an error
	// wrapping a not-found sentinel).
	Forget(ctx context.Context, id string) error
	// Query searches.
	Query(ctx context.Context, q longterm.Query) ([]longterm.Hit, error)
	// List returns one page of the stored records that match opts, in
	// ascending (Time, ID) order, and how many match in all.
	List(ctx context.Context, opts ListOptions) ([]longterm.Record, int, error)
	// Len returns the number of stored records.
	Len() int
}

// ListOptions selects the records Store.List returns. Zero values mean
// every namespace, no time bound, from the first record.
type ListOptions struct {
	// Namespace restricts the listing to one namespace; empty lists all.
	Namespace string
	// From and To restrict it to records with From ≤ Time < To; a zero
	// bound is open.
	From, To time.Time
	// Offset is how many matching records to skip; Limit how many to
	// return at most (0: the implementation's default).
	Offset, Limit int
}

// chunker is implemented by stores that can count their indexed children
// (longterm.Memory); /v1/stats reports it when available.
type chunker interface{ Chunks() int }

// FromLongterm returns m as a Store. Package longterm cannot enumerate its
// records yet, so List is served from an index of the records added and
// forgotten through the returned Store: it is exact for a store that was
// empty when wrapped, and for a store that already held records List fails
// with an error wrapping errs.Unsupported rather than answer with part of
// them. Everything else is passed to m.
func FromLongterm(m *longterm.Memory) Store {
	return &ltStore{Memory: m, preexisting: m.Len() > 0, index: make(map[string]listEntry)}
}

// ltStore adapts *longterm.Memory to Store.
type ltStore struct {
	*longterm.Memory
	preexisting bool

	mu    sync.RWMutex // guards index
	index map[string]listEntry
}

// listEntry is what List filters and sorts by.
type listEntry struct {
	namespace string
	time      time.Time
}

func (s *ltStore) Add(ctx context.Context, rec longterm.Record) (string, error) {
	id, err := s.Memory.Add(ctx, rec)
	if err == nil {
		s.remember(id)
	}
	return id, err
}

func (s *ltStore) AddBatch(ctx context.Context, recs []longterm.Record) ([]string, error) {
	ids, err := s.Memory.AddBatch(ctx, recs)
	if err == nil {
		for _, id := range ids {
			s.remember(id)
		}
	}
	return ids, err
}

func (s *ltStore) Forget(ctx context.Context, id string) error {
	err := s.Memory.Forget(ctx, id)
	if err == nil {
		s.mu.Lock()
		delete(s.index, id)
		s.mu.Unlock()
	}
	return err
}

// remember indexes the stored record id with the namespace and time the
// store gave it (defaults applied).
func (s *ltStore) remember(id string) {
	rec, ok := s.Memory.Get(id)
	if !ok { // forgotten in between
		return
	}
	s.mu.Lock()
	s.index[id] = listEntry{namespace: rec.Namespace, time: rec.Time}
	s.mu.Unlock()
}

func (s *ltStore) List(ctx context.Context, opts ListOptions) ([]longterm.Record, int, error) {
	if s.preexisting {
		return nil, 0, fmt.Errorf("server: listing a store opened with records needs longterm support for enumeration: %w", errs.Unsupported)
	}
	type item struct {
		id string
		listEntry
	}
	s.mu.RLock()
	var items []item
	for id, e := range s.index {
		if opts.Namespace != "" && e.namespace != opts.Namespace ||
			!opts.From.IsZero() && e.time.Before(opts.From) ||
			!opts.To.IsZero() && !e.time.Before(opts.To) {
			continue
		}
		items = append(items, item{id, e})
	}
	s.mu.RUnlock()
	slices.SortFunc(items, func(a, b item) int {
		if c := a.time.Compare(b.time); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	total := len(items)
	items = items[min(opts.Offset, total):]
	if opts.Limit > 0 && len(items) > opts.Limit {
		items = items[:opts.Limit]
	}
	recs := make([]longterm.Record, 0, len(items))
	for _, it := range items {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		if rec, ok := s.Memory.Get(it.id); ok {
			recs = append(recs, rec)
		}
	}
	return recs, total, nil
}
