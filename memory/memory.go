// Package memory is the contract of agentmem's memories, as package vdb is
// the contract of its vector databases: the [Memory] interface that an
// agent writes after each successful round and searches while it builds a
// prompt, the values it exchanges ([Record], [Query], [Hit], [Mode]), the
// optional interfaces a richer memory implements ([Records], [Querier],
// [Lister], and [Facts] for facts that change: supersede with history,
// duplicates stored once) and the errors every implementation wraps.
//
// Package memory links no implementation and no backend. The
// implementations live beside it: memory/short (seed 000's semantic memory:
// vector search, top 5, minimum score 0.3), memory/longterm (hybrid vector +
// keyword retrieval over small-to-big chunks, with namespaces) — both over
// the same engine and the same store format — and memory/window (the
// short-term sliding window with its workflow track). Package store opens a
// store directory of either kind by its manifest.
//
// A server or tool that needs more than Update and Search checks for the
// optional interfaces with a type assertion, as database/sql does with a
// driver's optional interfaces:
//
//	if rs, ok := mem.(memory.Records); ok {
//		id, err := rs.Add(ctx, memory.Record{Text: text, Namespace: user})
//		…
//	}
package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/agentmem/agentmem/internal/errs"
)

// A Memory remembers text segments and finds the ones related to a question.
// Implementations are safe for concurrent use by multiple goroutines.
type Memory interface {
	// Update stores a segment, e.g. one round of conversation. An empty or
	// whitespace-only segment is an error wrapping [ErrEmptyText].
	Update(ctx context.Context, segment string) error
	// Search returns the remembered segments most related to question, best
	// first. No match is an empty slice and a nil error.
	Search(ctx context.Context, question string) ([]Hit, error)
}

// Hit is one remembered segment found by a search.
type Hit struct {
	ID   string // the memory's identifier within its store
	Text string // the remembered segment (for long-term memory: the whole parent)
	// Score is the ranking's score: the cosine similarity for vector
	// search, the fused score for hybrid search. Hits come best first, in
	// Score order, except that a long-term memory places a later version
	// of a statement before the earlier ones it restates, which may score
	// more (Explanation.LaterThan names them).
	Score float32
	// Relevance is how likely the hit is what the query looks for, in
	// [0, 1], with one meaning in every store, namespace and mode: a
	// probability fitted on conversations (package engine says how). A
	// search returns no hit below its minimum relevance
	// (Query.MinRelevance). 0 for a memory that does not compute it.
	Relevance float32
	Time      time.Time // when it was said or stored; zero if unknown
	// Snippets are the parts of Text that matched (long-term memory's
	// small-to-big children); nil when the whole Text was the match.
	Snippets []string

	// Namespace, Speaker and Tags are the record's metadata; empty for a
	// memory that keeps none.
	Namespace string
	Speaker   string
	Tags      []string
	// ValidFrom, ValidUntil, Supersedes and SupersededBy are the record's
	// validity and versions (Record): a hit of a search with
	// Query.History whose ValidUntil is set is a version that no longer
	// holds (or not yet, if ValidFrom is after the search's moment).
	ValidFrom, ValidUntil    time.Time
	Supersedes, SupersededBy string
	// VectorRank and KeywordRank are the memory's 1-based rank on each
	// retrieval path (0: not found by that path, or no such path), for
	// explaining a result.
	VectorRank, KeywordRank int
	// Before and After are the records written just before and just after
	// this one in its conversation, oldest first, when the query asked for
	// them (Query.Neighbours): the question a found answer replies to, the
	// answer a found question got.
	Before, After []Record
	// Explain says why the hit surfaced, when the query asked for it
	// (Query.Explain); nil otherwise.
	Explain *Explanation
	// Tokens is what the hit's text and its neighbours' cost of a token
	// budget, when the query set one (Query.MaxTokens); 0 otherwise.
	Tokens int
}

// Tokens returns what hits cost of a token budget (the sum of their
// Tokens).
func Tokens(hits []Hit) int {
	n := 0
	for _, h := range hits {
		n += h.Tokens
	}
	return n
}

// An Explanation says why a hit surfaced: what each retrieval path found
// and how they were fused into its relevance.
type Explanation struct {
	// Keyword is the keyword path's score: BM25 over the record's words,
	// with what its neighbours and its conversation lend it, relative to
	// the most any record of its namespace could score for the query (so
	// about [0, 1], comparable between namespaces); 0 when the path did
	// not find it.
	Keyword float64
	// OwnKeyword is what the record's own words score on the keyword
	// path, on Keyword's scale, before what its neighbours and its
	// conversation lend it, the boosts for a time or a speaker the query
	// names and the weight of recency: 0 for a record the path found
	// only through the records around it.
	OwnKeyword float64
	// Answers is the text of the question the keyword path handed this
	// record its score from (the turn before it, which asked for what it
	// says), or "".
	Answers string
	// Vector is the cosine similarity of the record's best chunk to the
	// query; 0 when the path did not find it. A record that Answers a
	// question has the question's cosine when that is higher (and the
	// question keeps a little less of its own), unless the question
	// holds nearly all of the query's words.
	Vector float64
	// Fused is the score of the hybrid fusion (Hit.Score).
	Fused float64
	// BestKeyword and BestVector are the best keyword score and cosine
	// among the search's candidates; Coverage is the share of the query's
	// weight (rarer words weigh more) that occurs anywhere in the hit's
	// namespace. With Keyword and Vector they make the hit's relevance:
	// whether the memory holds what the question is about, and whether
	// this hit is the part that does.
	BestKeyword, BestVector, Coverage float64
	// Records is how many records the hit's namespace holds (its keyword
	// statistics' count; 0 in vector mode): coverage means less in a
	// namespace of a few notes, which hold few of any question's words.
	Records int
	// Documents: the query is Chinese and the hit's namespace holds
	// passages (its records average at least 256 keyword terms, Chinese
	// cut into characters and their pairs, and at most one speaker
	// speaks in it: engine.DocumentLength), whose relevance models
	// fitted on documents compute: a long Chinese text holds many of any
	// Chinese question's characters.
	Documents bool
	// BestShare is the share of the query's words (question words left
	// out, every word alike) that the search's best hit holds: one more
	// sign of whether the memory holds what the question is about. For a
	// question about what was said in a period ("what did we talk about
	// yesterday?") that the hit's namespace answered with the period's
	// records, Coverage and BestShare are 1: those records are all it
	// asks, in words it need not share.
	BestShare float64
	// UnknownNames are the names the query holds (capitalised words
	// that do not start a sentence: "Mongolia", "NW-20417") that the
	// hit's namespace never mentions: a search that names something the
	// memory was never told keeps less of its relevance.
	UnknownNames []string
	// Speakers are the speakers the query asks about in the hit's
	// namespace, whose records the keyword path prefers: those it names
	// ("What did Caroline research?"), or, in a chat log with a "user" or
	// "human" speaker, that speaker for a question in the first person
	// about the asker's things ("what is my dog's name?") or one that
	// names them by the name they gave in the namespace ("Hi, I'm
	// Priya": "Which tests does Priya prefer?"), and the other side for a
	// question about the answerer's words ("what did you recommend to
	// me?", "… to Priya?"). Empty when it asks about nobody in
	// particular, and for a hit the keyword path did not find.
	Speakers []string
	// Aliases are, for a speaker of the hit's namespace, the names the
	// query calls them by that they gave as theirs there ("Hi, I'm
	// Priya": {"user": ["Priya"]}), read as that speaker (Speakers).
	Aliases map[string][]string
	// LaterThan are the hits, said earlier by the same speaker in the
	// same namespace, that this one was placed before though they may
	// score more: it holds the same words of the query as each and shares
	// a third of its words with it ("My manager is Tom." in January, "My
	// manager is Ingrid now." in May), a later version of what they say,
	// where memories are added beside each other rather than superseded.
	LaterThan []string
	// Paths are the paths that found it: "keyword", "vector".
	Paths []string
	// Terms are the query's terms (as the keyword path's tokenizer cuts
	// them: lower case, stemmed; its question words left out, as the
	// keyword path leaves them out) that the record's text holds.
	Terms []string
}

// Texts returns the Text of each hit, in order.
func Texts(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Text
	}
	return out
}

// A Record is one memory as a [Records] store keeps it.
type Record struct {
	// ID identifies the record in the store. Empty means a generated
	// id. Adding a record with an ID that is already stored replaces the
	// stored one.
	ID string
	// Text is what is remembered; it must contain a letter or a digit.
	Text string
	// Time is when it was said or written; zero means the time of Add.
	Time time.Time
	// Namespace scopes the record (a user, an agent, a conversation);
	// empty means the store's default namespace.
	Namespace string
	// Speaker is who said it, or the role ("user", "assistant").
	Speaker string
	// Tags are free labels, stored and returned as given.
	Tags []string

	// ValidFrom and ValidUntil are when what the record says holds (its
	// valid time), beside Time, when it was said or learnt: it holds from
	// ValidFrom (zero: from its Time) until ValidUntil (zero: still). A
	// search reads the records valid at its moment (Query.AsOf, now by
	// default); [Facts.Supersede] closes a record at its successor's
	// ValidFrom.
	ValidFrom, ValidUntil time.Time
	// Supersedes is the id of the record this one replaced, SupersededBy
	// that of the record that replaced it ([Facts.Supersede]); empty when
	// none. A store sets SupersededBy; a write that sets it is refused.
	Supersedes, SupersededBy string
	// Seen is how many times the same text was written again to the
	// record's namespace and merged into it ([Facts.Remember]), LastSeen
	// when it was last; set by the store.
	Seen     int
	LastSeen time.Time
}

// Since returns when the record starts to hold: ValidFrom, or Time when
// ValidFrom is zero.
func (r *Record) Since() time.Time {
	if r.ValidFrom.IsZero() {
		return r.Time
	}
	return r.ValidFrom
}

// Current reports whether the record holds at t: Since() ≤ t, before
// ValidUntil if it has one, and not superseded before t.
func (r *Record) Current(t time.Time) bool {
	return !t.Before(r.Since()) && (r.ValidUntil.IsZero() || t.Before(r.ValidUntil))
}

// A Query is a search request. Its zero values mean the defaults.
type Query struct {
	// Text is what to look for.
	Text string
	// Namespace restricts the search to one namespace; empty searches all.
	Namespace string
	// From and To restrict the search to records with From ≤ Time < To;
	// a zero bound is open.
	From, To time.Time
	// Mode selects the retrieval paths (Hybrid by default).
	Mode Mode
	// K is how many memories to return; 0 means the memory's default.
	K int
	// MinScore is the minimum cosine similarity of a vector-path match;
	// 0 means the memory's default. The keyword path has no threshold.
	MinScore float32
	// MinRelevance is the lowest relevance (Hit.Relevance) a hit may
	// have: 0 means the memory's default, a negative value keeps every hit
	// that matched the query at all. A search may so return fewer than K
	// hits, or none: "nothing relevant" is an answer.
	MinRelevance float32
	// Explain asks for each hit's Explanation (Hit.Explain).
	Explain bool
	// AsOf is the moment a search looks at: it reads the records that
	// held then (Record.Current), so a superseded fact is not found after
	// its successor's ValidFrom and is found before. It is also what the
	// query's time references ("yesterday", "last week") count back from;
	// zero means now for the records read, and the time of the
	// namespace's newest record for the time references.
	AsOf time.Time
	// History reads every version, superseded or not yet valid ones too
	// (each hit says which: Hit.ValidUntil, Hit.SupersededBy).
	History bool
	// MaxTokens is a budget in tokens for the hits' texts with their
	// neighbours (as a prompt would hold them): the search keeps, in
	// order, the hits that fit what is left of it, and each hit says what
	// it costs (Hit.Tokens). 0 means no budget.
	MaxTokens int
	// Neighbours asks for up to this many records before and after each
	// hit (Hit.Before, Hit.After): those written just before and after it
	// in its namespace, in the same conversation (a gap of more than a
	// few hours ends one); a forgotten record leaves the records around
	// it next to each other. 0 means none; at most MaxNeighbours.
	Neighbours int
}

// MaxNeighbours is the most neighbours a Query may ask for on each side.
const MaxNeighbours = 50

// Mode selects which retrieval paths a search runs.
type Mode int

const (
	// Hybrid runs the vector and the keyword path and fuses their rankings.
	// It is the zero value and the default.
	Hybrid Mode = iota
	// VectorOnly runs only the vector (embedding similarity) path.
	VectorOnly
	// KeywordOnly runs only the keyword (BM25 over an inverted index) path.
	KeywordOnly
)

// String returns "hybrid", "vector" or "keyword".
func (m Mode) String() string {
	switch m {
	case Hybrid:
		return "hybrid"
	case VectorOnly:
		return "vector"
	case KeywordOnly:
		return "keyword"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode parses "hybrid", "vector" or "keyword". Anything else is an
// error wrapping [ErrInvalidArgument].
func ParseMode(s string) (Mode, error) {
	switch s {
	case "hybrid":
		return Hybrid, nil
	case "vector":
		return VectorOnly, nil
	case "keyword":
		return KeywordOnly, nil
	}
	return 0, fmt.Errorf("memory: %w: unknown mode %q (want hybrid, vector or keyword)", ErrInvalidArgument, s)
}

// Records is the optional interface of a memory that stores [Record]
// values with ids, namespaces and metadata, and can forget them (a server's
// CRUD). memory/longterm and memory/short implement it.
type Records interface {
	Memory
	// Add stores rec and returns its id; the record is durable (for a
	// memory on disk) and searchable when Add returns.
	Add(ctx context.Context, rec Record) (string, error)
	// AddBatch stores recs in order, all or nothing, and returns their ids.
	AddBatch(ctx context.Context, recs []Record) ([]string, error)
	// Get returns a copy of the record with the given id, and whether it
	// is stored.
	Get(id string) (Record, bool)
	// Forget removes the record with the given id; a missing id is an
	// error wrapping [ErrNotFound].
	Forget(ctx context.Context, id string) error
}

// Facts is the optional interface of a memory whose records are facts
// that change: written once however often they are said, replaced by newer
// versions that keep the old ones as history. memory/longterm and
// memory/postgres implement it.
type Facts interface {
	Records
	// Remember stores recs as AddBatch does (in order, all or nothing)
	// and says what it did with each. A record without an ID whose
	// normalised text (NormalText) a current record of its namespace
	// already holds, or an earlier record of recs, is not stored again:
	// its outcome names that record as a duplicate, and the record's Seen
	// count goes up. A record with an ID is an event (a turn of
	// conversation, an import's line) and is stored as Add stores it, even
	// if its text repeats another's. Add and AddBatch of a Facts memory
	// store records without an ID the same way; Remember also reports it.
	Remember(ctx context.Context, recs ...Record) ([]Outcome, error)
	// Supersede stores rec as the new version of the record old: rec
	// starts to hold at its ValidFrom (its Time, or now, when zero), old
	// stops then (its ValidUntil), and they are linked (Supersedes,
	// SupersededBy). rec's namespace is old's when empty, and may not be
	// another. Compare and set: if old is missing the error wraps
	// [ErrNotFound], if it was superseded already [ErrSuperseded], and
	// nothing is changed.
	Supersede(ctx context.Context, old string, rec Record) (Outcome, error)
	// History returns the versions of the chain that the record id
	// belongs to, oldest first; a missing id is an error wrapping
	// [ErrNotFound].
	History(ctx context.Context, id string) ([]Record, error)
}

// An Outcome says what a write (Facts.Remember, Facts.Supersede) did.
type Outcome struct {
	// ID is the record written, or the stored record a duplicate was
	// merged into.
	ID string
	// Duplicate reports that the text was stored already: nothing new
	// was stored and ID is the existing record's.
	Duplicate bool
	// Superseded is the id of the record this write closed (Supersede).
	Superseded string
	// Similar are the near-duplicates of a record written without an ID:
	// current records of its namespace, said by the same speaker, whose
	// meaning is close to its (by the store's embedder, above a
	// similarity the store documents), most similar first. When the store
	// merges near-duplicates, Duplicate is set and ID is Similar[0]'s.
	Similar []Similar
}

// Similar is a stored record near a written one (Outcome.Similar).
type Similar struct {
	ID   string
	Text string
	// Score is the cosine similarity of the two records' texts (of the
	// stored record's most similar chunk).
	Score float32
}

// Querier is the optional interface of a memory that answers a structured
// [Query] (namespace, time range, mode, count, minimum score).
type Querier interface {
	Query(ctx context.Context, q Query) ([]Hit, error)
}

// ListOptions selects and pages the records [Lister.List] returns. Its zero
// value lists every record.
type ListOptions struct {
	// Namespace restricts the list to one namespace; empty lists all.
	Namespace string
	// From and To restrict the list to records with From ≤ Time < To; a
	// zero bound is open.
	From, To time.Time
	// Offset skips that many matching records; Limit caps how many are
	// returned (0: no cap). Negative values are an error wrapping
	// [ErrInvalidArgument].
	Offset, Limit int
}

// NamespaceHolder is the optional interface of a long-term memory that
// tells cheaply whether a namespace holds any record, so that a search
// that finds nothing in a namespace can say that the namespace is empty (a
// mistyped namespace or user id) rather than that nothing in it is
// relevant.
type NamespaceHolder interface {
	HoldsNamespace(ctx context.Context, ns string) (bool, error)
}

// Lister is the optional interface of a memory that lists its records,
// oldest first (by Time, then by id), for browsing and export.
type Lister interface {
	// List returns the matching records and how many match in total
	// (before Offset and Limit).
	List(ctx context.Context, opts ListOptions) (recs []Record, total int, err error)
}

// Errors that memories return, wrapped with the facts (file, offset, id);
// test them with errors.Is. They are the values of every other agentmem
// package (vdb.ErrCorrupt is memory.ErrCorrupt), so one test covers every
// layer.
var (
	// ErrCorrupt: a store file is damaged beyond a torn log tail. The error
	// names the file and the offset; nothing is modified.
	ErrCorrupt = errs.Corrupt
	// ErrVersion: a store has a format version this build cannot read (a
	// newer one, or an older one that needs `agentmem migrate`).
	ErrVersion = errs.Version
	// ErrClosed: the memory was used after Close.
	ErrClosed = errs.Closed
	// ErrLocked: the store directory is open in another process (or by
	// another handle in this one).
	ErrLocked = errs.Locked
	// ErrEmptyText: a segment, record or batch holds no text to remember.
	ErrEmptyText = errs.EmptyInput
	// ErrDimension: a vector's length differs from the store's.
	ErrDimension = errs.Dimension
	// ErrEmbedderMismatch: a store was opened with another embedder (name or
	// dimension) than the one that built it. The error names both.
	ErrEmbedderMismatch = errs.EmbedderMismatch
	// ErrInvalidArgument: an option, a query field or a record field is out
	// of range.
	ErrInvalidArgument = errs.InvalidArgument
	// ErrNotFound: no record has the given id.
	ErrNotFound = errs.NotFound
	// ErrUnsupported: the operation is not available for this memory (e.g.
	// a snapshot of a memory that has no directory).
	ErrUnsupported = errs.Unsupported
	// ErrTooLarge: an input exceeds a documented size limit.
	ErrTooLarge = errs.TooLarge
	// ErrSuperseded: a record to supersede ([Facts.Supersede]) is no longer
	// current: another write superseded it meanwhile. Nothing was changed;
	// read its history and decide again.
	ErrSuperseded = errs.Superseded
	// ErrDuplicate: a write was refused because a current record of its
	// namespace, said by the same speaker, means nearly the same (a store
	// configured to refuse near-duplicates). The error names it.
	ErrDuplicate = errs.Duplicate
	// ErrUnavailable: the memory's database server cannot be reached or
	// the connection was lost (memory/postgres). Nothing is known to be
	// lost; retry later.
	ErrUnavailable = errs.Unavailable
)
