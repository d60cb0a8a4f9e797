package engine

import (
	"context"
	"time"

	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory"
)

// A Source is a store's data as the engine reads it for one search: a
// consistent view (a read lock held, a repeatable-read transaction) that
// the engine closes when the search no longer needs it. K identifies a
// record within the source (a pointer, a row number); the engine uses it
// as a map key and hands it back, and never looks inside.
//
// A Source answers questions about its data; it ranks nothing. The
// statistics, postings and BM25 parameters it is handed are the engine's.
type Source[K comparable] interface {
	// Namespaces returns the keyword sources of the namespaces a search
	// reads: the one named ns, or every namespace that holds a record
	// (ns empty), sorted by name. A namespace that holds nothing is left
	// out.
	Namespaces(ctx context.Context, ns string) ([]Namespace[K], error)
	// Vectors returns the chunks nearest to qvec among those of the
	// records in scope, best first (ties by the source's chunk order), at
	// most n and none below minScore; exhausted reports that there are no
	// more to fetch with a larger n.
	Vectors(ctx context.Context, scope Scope, qvec []float32, n int, minScore float32) (chunks []Chunk[K], exhausted bool, err error)
	// Docs returns the records of keys and their chunks' texts, in keys'
	// order.
	Docs(ctx context.Context, keys []K) ([]Doc, error)
	// Neighbours returns, for each of keys, up to n records written just
	// before it and just after it in its conversation, oldest first.
	Neighbours(ctx context.Context, keys []K, n int) (before, after [][]memory.Record, err error)
	// Close ends the view.
	Close() error
}

// A Namespace is one namespace's keyword statistics and postings, as the
// keyword path reads them. Its records are numbered by int64 ids of its
// own (in the order they were written).
type Namespace[K comparable] interface {
	// Name is the namespace's name.
	Name() string
	// Key returns the source's key of record id.
	Key(id int64) K
	// Speakers returns the namespace's speakers.
	Speakers() []string
	// Search scores the namespace's records (their header and text) for
	// groups by BM25 with p, and returns the best n, best first (ties by
	// ascending id), only those whose time is in scope's range.
	Search(ctx context.Context, groups []keyword.QueryGroup, p keyword.Params, n int, scope Scope) ([]keyword.Result, error)
	// DocFreqs returns how many records the namespace holds and in how
	// many of them each of terms occurs (its BM25 statistics).
	DocFreqs(ctx context.Context, terms []string) (docs int, df []int, err error)
	// AvgLength returns the mean length of the namespace's records in
	// keyword terms (its BM25 statistics' average document length).
	AvgLength() float64
	// Episodes scores the namespace's episodes (conversations as whole
	// documents: all their records' texts) for groups by BM25 with p,
	// and returns the best n, best first.
	Episodes(ctx context.Context, groups []keyword.QueryGroup, p keyword.Params, n int) ([]keyword.Result, error)
	// Links makes Link answer for the records ids and for the records
	// just before and after each of around: a store that keeps them
	// elsewhere reads them here, together (a store that holds them in
	// memory has nothing to do).
	Links(ctx context.Context, ids, around []int64) error
	// Link returns what the keyword path needs of record id, and whether
	// the namespace has it, once Links asked for it.
	Link(id int64) (Link, bool)
	// EpisodeOf returns Link(id).Episode, and Owner Link(id)'s ID and
	// Speaker, for the keyword path's steps that need only those of every
	// record it scored.
	EpisodeOf(id int64) int64
	Owner(id int64) (recordID, speaker string, ok bool)
	// Terms returns a record's distinct terms with their counts and its
	// length in tokens, for relevance feedback.
	Terms(ctx context.Context, id int64) ([]keyword.TermCount, int, error)
	// Newest returns the time of the namespace's newest record.
	Newest(ctx context.Context) (time.Time, error)
	// AllHold reports whether every record of the namespace holds at t
	// (memory.Record.Current): none has ended and none starts after t. A
	// source may answer false when it cannot tell cheaply; the keyword
	// path then asks each record's Link.
	AllHold(t time.Time) bool
}

// Link is what the keyword path needs of a record: its id, speaker, time,
// when it holds (memory.Record.Since and ValidUntil), episode, and the
// records just before and after it in its conversation (-1: none).
type Link struct {
	ID, Speaker  string
	Time         time.Time
	Since, Until time.Time
	Episode      int64
	Prev, Next   int64
}

// Chunk is a chunk the vector path found: its record, its index among the
// record's chunks and its cosine similarity to the query.
type Chunk[K comparable] struct {
	Record K
	Index  int
	Score  float64
}

// Doc is a record with its chunks' texts. A search reads neither
// Record.Seen nor Record.LastSeen: a source may leave them zero.
type Doc struct {
	Record memory.Record
	Chunks []string
}

// Scope is what a search reads: a namespace (empty: all), a time range
// (From ≤ Time < To; a zero bound is open) and the records that hold at
// AsOf (memory.Record.Current), or every version (History).
type Scope struct {
	Namespace string
	From, To  time.Time
	AsOf      time.Time
	History   bool
}

// Timed reports whether the scope has a time range.
func (s Scope) Timed() bool { return !s.From.IsZero() || !s.To.IsZero() }

// Holds reports whether r is in the scope's time range and holds at its
// moment (or the scope reads history).
func (s Scope) Holds(r *memory.Record) bool {
	return s.Contains(r.Time) && (s.History || r.Current(s.AsOf))
}

// Admits reports whether the record of l is in the scope (Holds).
func (s Scope) Admits(l Link) bool {
	return s.Contains(l.Time) && (s.History || !s.AsOf.Before(l.Since) && (l.Until.IsZero() || s.AsOf.Before(l.Until)))
}

// Contains reports whether t is in the scope's time range.
func (s Scope) Contains(t time.Time) bool {
	return (s.From.IsZero() || !t.Before(s.From)) && (s.To.IsZero() || t.Before(s.To))
}

// Selector is the optional interface of a [Namespace] that finds
// Search's records without ordering them: it appends to dst[:0] the same
// best n, with the same scores, in any order, saving Search's sort, and
// returns it. The keyword path asks it instead of Search when it only
// sums the scores by record, and reuses dst.
type Selector interface {
	Select(ctx context.Context, dst []keyword.Result, groups []keyword.QueryGroup, p keyword.Params, n int, scope Scope) ([]keyword.Result, error)
}

// During is the optional interface of a [Namespace] that lists the
// records said in a time range: a query that names a day ("what did we
// talk about on April 29th?") asks about what was said that day, in words
// it need not share. The engine checks each record it returns against
// the search's scope (Link, Scope.Admits). A namespace without it lends
// the day nothing: the day's records the query's words found still
// count more (WithTimePrior).
type During interface {
	// During returns the ids of the namespace's records whose time is in
	// [from, to), by ascending id; when there are more than n, any n of
	// them (the engine then lends to none: a day of more records than a
	// search's depth is not one conversation to recall).
	During(ctx context.Context, from, to time.Time, n int) ([]int64, error)
}

// Adjacent is the optional interface of a [Namespace] that tells a
// record's Link Prev and Next alone, more cheaply than Link: the keyword
// path asks it of every record it found, to lend their scores to their
// neighbours. Like Link, it answers once Links asked for the record.
type Adjacent interface {
	Adjacent(id int64) (prev, next int64)
}
