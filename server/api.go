package server

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/agentmem/agentmem/internal/errs"
	"github.com/agentmem/agentmem/internal/recordid"
	"github.com/agentmem/agentmem/memory"
)

// Limits on requests. Bodies larger than the server's body limit are
// refused with 413 too_large before they are decoded.
const (
	// DefaultMaxBodyBytes is the default limit on a request body (WithMaxBodyBytes).
	DefaultMaxBodyBytes = 1 << 20
	// DefaultK is how many memories a search returns when the request
	// gives no k; MaxK is the most it returns.
	DefaultK, MaxK = 5, 1000
	// DefaultListLimit is how many memories a listing returns by default,
	// MaxListLimit the most it returns.
	DefaultListLimit, MaxListLimit = 50, 1000
	// MaxMessages is the most messages one add request carries.
	MaxMessages = 1000
)

// Message is one turn of a conversation given to add_memory.
type Message struct {
	Role    string `json:"role,omitempty" jsonschema:"who said it: user, assistant, a name; stored as the memory's speaker"`
	Content string `json:"content" jsonschema:"what was said"`
}

// Scope names the namespace of a request. Namespace wins; otherwise
// UserID u and AgentID a make "user:u", "agent:a" or "user:u/agent:a".
type Scope struct {
	Namespace string `json:"namespace,omitempty" jsonschema:"the namespace (a user, an agent, a conversation); default: all for reads, \"default\" for writes, or the namespace the token is pinned to"`
	UserID    string `json:"user_id,omitempty" jsonschema:"shorthand for namespace \"user:<user_id>\" when namespace is not given"`
	AgentID   string `json:"agent_id,omitempty" jsonschema:"shorthand for namespace \"agent:<agent_id>\" (\"user:<user_id>/agent:<agent_id>\" with user_id) when namespace is not given"`
}

// namespace returns the namespace the scope names ("" if none).
func (s Scope) namespace() string {
	switch {
	case s.Namespace != "":
		return s.Namespace
	case s.UserID != "" && s.AgentID != "":
		return "user:" + s.UserID + "/agent:" + s.AgentID
	case s.UserID != "":
		return "user:" + s.UserID
	case s.AgentID != "":
		return "agent:" + s.AgentID
	}
	return ""
}

// AddRequest is the body of POST /v1/memories and the arguments of the
// add_memory tool: a text, or messages (each stored as its own memory, in
// one atomic batch).
type AddRequest struct {
	Text     string    `json:"text,omitempty" jsonschema:"what to remember: a fact, a note, a round of conversation (give text or messages)"`
	Content  string    `json:"content,omitempty" jsonschema:"same as text"`
	Messages []Message `json:"messages,omitempty" jsonschema:"conversation turns to remember, each stored as its own memory with the role as speaker"`
	ID       string    `json:"id,omitempty" jsonschema:"the memory's id (default: generated); an existing id is replaced"`
	Scope
	Time     string            `json:"time,omitempty" jsonschema:"when it was said, RFC 3339 (2024-05-01T15:04:05Z) or a date (2024-05-01); default: now"`
	Speaker  string            `json:"speaker,omitempty" jsonschema:"who said it"`
	Tags     []string          `json:"tags,omitempty" jsonschema:"free labels"`
	Metadata map[string]string `json:"metadata,omitempty" jsonschema:"key/value pairs, stored as tags \"key=value\""`
	Validity
}

// Validity is when what a memory says holds (memory.Record.ValidFrom and
// ValidUntil).
type Validity struct {
	ValidFrom  string `json:"valid_from,omitempty" jsonschema:"when it starts to hold (RFC 3339 or a date); default: its time"`
	ValidUntil string `json:"valid_until,omitempty" jsonschema:"when it stops holding; default: until updated"`
}

// set sets rec's validity from v.
func (v Validity) set(rec *memory.Record) error {
	var err error
	if rec.ValidFrom, err = parseTime("valid_from", v.ValidFrom); err != nil {
		return err
	}
	rec.ValidUntil, err = parseTime("valid_until", v.ValidUntil)
	return err
}

// records turns the request into the records to store, namespace ns. A
// text without an id is a fact, which the store keeps once; messages are
// turns of a conversation, events that are kept however often their text
// repeats, so each gets an id.
func (r *AddRequest) records(ns string) ([]memory.Record, error) {
	text := cmp.Or(r.Text, r.Content)
	if text != "" && len(r.Messages) > 0 {
		return nil, invalid("give text or messages, not both")
	}
	if text == "" && len(r.Messages) == 0 {
		return nil, invalid("text (or messages) is required")
	}
	if len(r.Messages) > MaxMessages {
		return nil, fmt.Errorf("server: %d messages, at most %d: %w", len(r.Messages), MaxMessages, errs.TooLarge)
	}
	if len(r.Messages) > 0 && r.ID != "" {
		return nil, invalid("id applies to a text, not to messages")
	}
	t, err := parseTime("time", r.Time)
	if err != nil {
		return nil, err
	}
	tags := mergeTags(r.Tags, r.Metadata)
	if text != "" {
		rec := memory.Record{ID: r.ID, Text: text, Time: t, Namespace: ns, Speaker: r.Speaker, Tags: tags}
		return []memory.Record{rec}, r.Validity.set(&rec)
	}
	if r.ValidFrom != "" || r.ValidUntil != "" {
		return nil, invalid("valid_from and valid_until apply to a text, not to messages")
	}
	recs := make([]memory.Record, len(r.Messages))
	for i, m := range r.Messages {
		if m.Content == "" {
			return nil, invalid(fmt.Sprintf("messages[%d]: content is required", i))
		}
		recs[i] = memory.Record{ID: recordid.New(), Text: m.Content, Time: t, Namespace: ns, Speaker: cmp.Or(m.Role, r.Speaker), Tags: tags}
	}
	return recs, nil
}

// UpdateRequest is the body of PUT /v1/memories/{id} and the arguments of
// update_memory: a new version of the memory, with the fields given in
// place of the stored ones and the others kept, that supersedes it (the
// old version stays as history, until the new one's valid_from).
type UpdateRequest struct {
	ID       string            `json:"id,omitempty" jsonschema:"the id of the memory to update"`
	MemoryID string            `json:"memory_id,omitempty" jsonschema:"same as id"`
	Text     string            `json:"text,omitempty" jsonschema:"the new text"`
	Content  string            `json:"content,omitempty" jsonschema:"same as text"`
	Time     string            `json:"time,omitempty" jsonschema:"the new time, RFC 3339 or a date"`
	Speaker  string            `json:"speaker,omitempty" jsonschema:"the new speaker"`
	Tags     []string          `json:"tags,omitempty" jsonschema:"the new labels (replace the stored ones, with metadata)"`
	Metadata map[string]string `json:"metadata,omitempty" jsonschema:"the new key/value pairs (replace the stored ones, with tags)"`
	Validity
}

// apply returns old with the request's fields applied: the new version's
// record (no id: the store gives it one), for Supersede.
func (r *UpdateRequest) apply(old memory.Record) (memory.Record, error) {
	rec := memory.Record{Text: old.Text, Time: old.Time, Namespace: old.Namespace, Speaker: old.Speaker, Tags: old.Tags}
	if r.Time == "" {
		rec.Time = time.Time{} // the new version is said now
	}
	if err := r.Validity.set(&rec); err != nil {
		return rec, err
	}
	if text := cmp.Or(r.Text, r.Content); text != "" {
		rec.Text = text
	}
	if r.Time != "" {
		t, err := parseTime("time", r.Time)
		if err != nil {
			return rec, err
		}
		rec.Time = t
	}
	if r.Speaker != "" {
		rec.Speaker = r.Speaker
	}
	if r.Tags != nil || r.Metadata != nil {
		rec.Tags = mergeTags(r.Tags, r.Metadata)
	}
	return rec, nil
}

// SearchRequest is the body of POST /v1/search and the arguments of
// search_memory.
type SearchRequest struct {
	Query string `json:"query,omitempty" jsonschema:"what to look for: a question, words, a name, a code"`
	Q     string `json:"q,omitempty" jsonschema:"same as query"`
	Scope
	K        int               `json:"k,omitempty" jsonschema:"how many memories to return (default 5, at most 1000)"`
	Limit    int               `json:"limit,omitempty" jsonschema:"same as k"`
	TopK     int               `json:"top_k,omitempty" jsonschema:"same as k"`
	Mode     string            `json:"mode,omitempty" jsonschema:"hybrid (default: meaning and exact words), vector (meaning) or keyword (exact words)"`
	From     string            `json:"from,omitempty" jsonschema:"only memories at or after this time (RFC 3339 or a date)"`
	To       string            `json:"to,omitempty" jsonschema:"only memories before this time (RFC 3339 or a date)"`
	MinScore float32           `json:"min_score,omitempty" jsonschema:"minimum cosine similarity of a meaning match (0: the store's default)"`
	Metadata map[string]string `json:"metadata,omitempty" jsonschema:"only memories with all these key/value pairs"`
	Tags     []string          `json:"tags,omitempty" jsonschema:"only memories with all these labels"`
	// Neighbours asks for context: memory.Query.Neighbours.
	Neighbours int `json:"neighbours,omitempty" jsonschema:"also return up to this many memories said just before and just after each hit in its conversation (0..50): the question an answer replies to"`
	// MinRelevance is memory.Query.MinRelevance.
	MinRelevance float32 `json:"min_relevance,omitempty" jsonschema:"lowest relevance of a hit, 0..1 (0: the store's default; -1: every memory that matched at all); fewer than k hits, or none, means nothing more is relevant"`
	// Explain is memory.Query.Explain.
	Explain bool `json:"explain,omitempty" jsonschema:"also say why each memory surfaced"`
	// MaxTokens is memory.Query.MaxTokens.
	MaxTokens int `json:"max_tokens,omitempty" jsonschema:"a budget in tokens for the memories returned, with their neighbours: the most relevant that fit (0: none)"`
	// AsOf and History are memory.Query.AsOf and History.
	AsOf    string `json:"as_of,omitempty" jsonschema:"search what held at this time, and count the query's 'yesterday' or 'last week' back from it; default now"`
	History bool   `json:"history,omitempty" jsonschema:"search old versions too"`
}

// query turns the request into a memory.Query in namespace ns and the
// tags every hit must carry.
func (r *SearchRequest) query(ns string) (memory.Query, []string, error) {
	q := memory.Query{Text: cmp.Or(r.Query, r.Q), Namespace: ns, MinScore: r.MinScore, MinRelevance: r.MinRelevance, Explain: r.Explain, MaxTokens: r.MaxTokens}
	if strings.TrimSpace(q.Text) == "" {
		return q, nil, invalid("query is required")
	}
	k := cmp.Or(r.K, r.Limit, r.TopK)
	if k < 0 || k > MaxK {
		return q, nil, invalid(fmt.Sprintf("k = %d, want 1..%d", k, MaxK))
	}
	q.K = k
	if r.Mode != "" {
		m, err := memory.ParseMode(strings.ToLower(r.Mode))
		if err != nil {
			return q, nil, invalid(fmt.Sprintf("mode %q: want hybrid, vector or keyword", r.Mode))
		}
		q.Mode = m
	}
	if r.MinScore < 0 || r.MinScore > 1 {
		return q, nil, invalid(fmt.Sprintf("min_score = %g, want 0..1", r.MinScore))
	}
	if r.MaxTokens < 0 {
		return q, nil, invalid(fmt.Sprintf("max_tokens = %d, want ≥ 0", r.MaxTokens))
	}
	if !(r.MinRelevance >= -1 && r.MinRelevance <= 1) {
		return q, nil, invalid(fmt.Sprintf("min_relevance = %g, want 0..1 (or -1: none)", r.MinRelevance))
	}
	if r.Neighbours < 0 || r.Neighbours > memory.MaxNeighbours {
		return q, nil, invalid(fmt.Sprintf("neighbours = %d, want 0..%d", r.Neighbours, memory.MaxNeighbours))
	}
	q.Neighbours = r.Neighbours
	var err error
	if q.From, q.To, err = parseRange(r.From, r.To); err != nil {
		return q, nil, err
	}
	if q.AsOf, err = parseTime("as_of", r.AsOf); err != nil {
		return q, nil, err
	}
	q.History = r.History
	return q, mergeTags(r.Tags, r.Metadata), nil
}

// ListRequest is the arguments of list_memories (and the query parameters
// of GET /v1/memories).
type ListRequest struct {
	Scope
	From     string `json:"from,omitempty" jsonschema:"only memories at or after this time (RFC 3339 or a date)"`
	To       string `json:"to,omitempty" jsonschema:"only memories before this time (RFC 3339 or a date)"`
	Offset   int    `json:"offset,omitempty" jsonschema:"how many memories to skip (paging)"`
	Limit    int    `json:"limit,omitempty" jsonschema:"how many memories to return (default 50, at most 1000)"`
	PageSize int    `json:"page_size,omitempty" jsonschema:"same as limit"`
}

// options turns the request into ListOptions in namespace ns.
func (r *ListRequest) options(ns string) (ListOptions, error) {
	o := ListOptions{Namespace: ns, Offset: r.Offset, Limit: cmp.Or(r.Limit, r.PageSize, DefaultListLimit)}
	if o.Offset < 0 {
		return o, invalid(fmt.Sprintf("offset = %d, want ≥ 0", o.Offset))
	}
	if o.Limit < 0 || o.Limit > MaxListLimit {
		return o, invalid(fmt.Sprintf("limit = %d, want 1..%d", o.Limit, MaxListLimit))
	}
	var err error
	o.From, o.To, err = parseRange(r.From, r.To)
	return o, err
}

// IDRequest is the arguments of get_memory and delete_memory.
type IDRequest struct {
	ID       string `json:"id,omitempty" jsonschema:"the memory's id"`
	MemoryID string `json:"memory_id,omitempty" jsonschema:"same as id"`
}

// Memory is a stored memory as the API returns it.
type Memory struct {
	ID        string    `json:"id"`
	Text      string    `json:"text"`
	Namespace string    `json:"namespace"`
	Time      time.Time `json:"time"`
	Speaker   string    `json:"speaker,omitempty"`
	Tags      []string  `json:"tags,omitempty"`
	// Metadata holds the tags of the form key=value.
	Metadata map[string]string `json:"metadata,omitempty"`
	// ValidFrom and ValidUntil are when what it says holds, when set;
	// Supersedes and SupersededBy the versions it replaced and that
	// replaced it; Seen how often its text was written again, LastSeen
	// when (memory.Record).
	ValidFrom    *time.Time `json:"valid_from,omitempty"`
	ValidUntil   *time.Time `json:"valid_until,omitempty"`
	Supersedes   string     `json:"supersedes,omitempty"`
	SupersededBy string     `json:"superseded_by,omitempty"`
	Seen         int        `json:"seen,omitempty"`
	LastSeen     *time.Time `json:"last_seen,omitempty"`
}

// Hit is one memory found by a search.
type Hit struct {
	Memory
	Score float32 `json:"score"`
	// Relevance is how likely the memory is what the search looks for,
	// 0..1, with one meaning in every mode and namespace.
	Relevance float32 `json:"relevance"`
	// Explain says why it surfaced, when the search asked.
	Explain *Explanation `json:"explain,omitempty"`
	// Tokens is what it costs of the search's token budget (max_tokens).
	Tokens int `json:"tokens,omitempty"`
	// Snippets are the parts of Text that matched.
	Snippets []string `json:"snippets,omitempty"`
	// VectorRank and KeywordRank are the 1-based ranks on each retrieval
	// path (0: not found by that path).
	VectorRank  int `json:"vector_rank,omitempty"`
	KeywordRank int `json:"keyword_rank,omitempty"`
	// Before and After are the memories said just before and after this
	// one in its conversation, oldest first, when the search asked for
	// neighbours.
	Before []Memory `json:"before,omitempty"`
	After  []Memory `json:"after,omitempty"`
}

// AddResult answers an add: the ids stored, in order (ID is the first).
type AddResult struct {
	ID  string   `json:"id"`
	IDs []string `json:"ids"`
	// Duplicate: the text was stored already; ID is the stored memory's,
	// which counts it as said again. Similar are the stored memories that
	// say nearly the same (same speaker), most similar first.
	Duplicate bool            `json:"duplicate"`
	Similar   []SimilarMemory `json:"similar,omitempty"`
}

// SimilarMemory is a stored memory that says nearly what an added one
// says (memory.Similar).
type SimilarMemory struct {
	ID    string  `json:"id"`
	Text  string  `json:"text"`
	Score float32 `json:"score"`
}

// HistoryResult is the answer of GET /v1/memories/{id}/history and the
// memory_history tool: every version, oldest first.
type HistoryResult struct {
	Versions []Memory `json:"versions"`
}

// Explanation says why a hit surfaced (memory.Explanation).
type Explanation struct {
	Paths       []string `json:"paths"`
	Terms       []string `json:"terms"`
	Keyword     float64  `json:"keyword"`
	OwnKeyword  float64  `json:"own_keyword"`
	Answers     string   `json:"answers,omitempty"`
	Vector      float64  `json:"vector"`
	Fused       float64  `json:"fused"`
	BestKeyword float64  `json:"best_keyword"`
	BestVector  float64  `json:"best_vector"`
	Coverage    float64  `json:"coverage"`
	BestShare   float64  `json:"best_share"`
	Records     int      `json:"records"`
	// Documents: the query is Chinese and the namespace holds passages,
	// whose relevance a model fitted on documents computes.
	Documents bool `json:"documents,omitempty"`
	// UnknownNames: the query's names the namespace never mentions.
	UnknownNames []string `json:"unknown_names,omitempty"`
	// Speakers: the speakers the query asks about in the namespace.
	Speakers []string `json:"speakers,omitempty"`
	// Aliases: for a speaker, the names the query calls them by that they
	// gave as theirs.
	Aliases map[string][]string `json:"aliases,omitempty"`
	// LaterThan: the hits, said earlier by the same speaker, that this
	// one restates and was placed before.
	LaterThan []string `json:"later_than,omitempty"`
}

// SearchResult answers a search.
type SearchResult struct {
	Hits []Hit `json:"hits"`
	// Tokens is what the hits cost of the search's token budget
	// (max_tokens), 0 without one.
	Tokens int `json:"tokens,omitempty"`
	// Reason says why there are no hits.
	Reason string `json:"reason,omitempty"`
}

// A SearchResult's Reason when it has no hits: no memory is relevant to
// the query (NoRelevantMemory); the namespace searched holds no memory at
// all (EmptyNamespace, followed by its name: a mistyped namespace or user
// id); some memories are relevant, but none fits its max_tokens
// (NothingFits, followed by what the smallest of them takes); some are,
// but none has the tags it asks for (NoneTagged).
const (
	NoRelevantMemory = "no memory is relevant"
	EmptyNamespace   = "the namespace holds no memories"
	NothingFits      = "no relevant memory fits the token budget"
	NoneTagged       = "no relevant memory has the tags asked for"
)

// EmptyReason returns why q, which st answered with no hits, has none:
// EmptyNamespace when q names a namespace that holds nothing (asked of a
// memory.NamespaceHolder); NoRelevantMemory; or, when q has a token budget
// (MaxTokens) and st finds relevant memories without it (a second search,
// made only then), NothingFits with how many there are and the fewest
// tokens one of them takes, so that a caller can tell "nothing relevant"
// from "a budget too small".
func EmptyReason(ctx context.Context, st memory.Querier, q memory.Query) (string, error) {
	if h, ok := st.(memory.NamespaceHolder); ok && q.Namespace != "" {
		holds, err := h.HoldsNamespace(ctx, q.Namespace)
		if err != nil {
			return "", err
		}
		if !holds {
			return fmt.Sprintf("%s: %q", EmptyNamespace, q.Namespace), nil
		}
	}
	budget := q.MaxTokens
	if budget <= 0 {
		return NoRelevantMemory, nil
	}
	q.MaxTokens = math.MaxInt32 // every hit fits, and each says what it costs
	hits, err := st.Query(ctx, q)
	if err != nil || len(hits) == 0 {
		return NoRelevantMemory, err
	}
	return nothingFits(budget, hits), nil
}

// nothingFits is the reason of an empty answer under a token budget
// whose relevant memories (hits, searched without it: each says what it
// costs) are too large for it.
func nothingFits(budget int, hits []memory.Hit) string {
	if len(hits) == 1 {
		return fmt.Sprintf("%s of %d: the one relevant memory takes %d", NothingFits, budget, hits[0].Tokens)
	}
	least := hits[0].Tokens
	for _, h := range hits {
		least = min(least, h.Tokens)
	}
	return fmt.Sprintf("%s of %d: the smallest of the %d relevant memories takes %d", NothingFits, budget, len(hits), least)
}

// ListResult answers a listing: one page and how many match in all.
type ListResult struct {
	Memories []Memory `json:"memories"`
	Total    int      `json:"total"`
	Offset   int      `json:"offset"`
	Limit    int      `json:"limit"`
}

// DeleteResult answers delete_memory.
type DeleteResult struct {
	Deleted string `json:"deleted"`
}

// Stats answers GET /v1/stats.
type Stats struct {
	Memories int  `json:"memories"`
	Chunks   int  `json:"chunks,omitempty"`
	ReadOnly bool `json:"read_only"`
}

func toMemory(r memory.Record) Memory {
	m := Memory{ID: r.ID, Text: r.Text, Namespace: r.Namespace, Time: r.Time, Speaker: r.Speaker, Tags: r.Tags,
		ValidFrom: timePtr(r.ValidFrom), ValidUntil: timePtr(r.ValidUntil), Supersedes: r.Supersedes, SupersededBy: r.SupersededBy,
		Seen: r.Seen, LastSeen: timePtr(r.LastSeen)}
	for _, t := range r.Tags {
		if k, v, ok := strings.Cut(t, "="); ok && k != "" {
			if m.Metadata == nil {
				m.Metadata = make(map[string]string)
			}
			m.Metadata[k] = v
		}
	}
	return m
}

func toHit(h memory.Hit) Hit {
	m := toMemory(memory.Record{ID: h.ID, Text: h.Text, Namespace: h.Namespace, Time: h.Time, Speaker: h.Speaker, Tags: h.Tags,
		ValidFrom: h.ValidFrom, ValidUntil: h.ValidUntil, Supersedes: h.Supersedes, SupersededBy: h.SupersededBy})
	out := Hit{Memory: m, Score: h.Score, Relevance: h.Relevance, Snippets: h.Snippets, VectorRank: h.VectorRank, KeywordRank: h.KeywordRank,
		Before: toMemories(h.Before), After: toMemories(h.After)}
	out.Explain = Explain(h.Explain)
	out.Tokens = h.Tokens
	return out
}

// Explain returns x as the API reports it (nil for nil).
func Explain(x *memory.Explanation) *Explanation {
	if x == nil {
		return nil
	}
	return &Explanation{Paths: x.Paths, Terms: x.Terms, Keyword: x.Keyword, OwnKeyword: x.OwnKeyword, Answers: x.Answers, Vector: x.Vector, Fused: x.Fused,
		BestKeyword: x.BestKeyword, BestVector: x.BestVector, Coverage: x.Coverage, BestShare: x.BestShare, Records: x.Records, Documents: x.Documents, UnknownNames: x.UnknownNames, Speakers: x.Speakers, Aliases: x.Aliases,
		LaterThan: x.LaterThan}
}

// toMemories converts records; none is nil.
func toMemories(rs []memory.Record) []Memory {
	if len(rs) == 0 {
		return nil
	}
	out := make([]Memory, len(rs))
	for i, r := range rs {
		out[i] = toMemory(r)
	}
	return out
}

// mergeTags returns tags followed by the metadata as "key=value", sorted
// by key.
func mergeTags(tags []string, meta map[string]string) []string {
	if len(meta) == 0 {
		return tags
	}
	out := append([]string(nil), tags...)
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		out = append(out, k+"="+meta[k])
	}
	return out
}

// hasTags reports whether every tag in want is among have.
func hasTags(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// parseTime parses an RFC 3339 time or a date; "" is the zero time.
func parseTime(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, invalid(fmt.Sprintf("%s %q: want RFC 3339 (2006-01-02T15:04:05Z) or a date (2006-01-02)", field, s))
}

// parseRange parses a [from, to) time range.
func parseRange(from, to string) (f, t time.Time, err error) {
	if f, err = parseTime("from", from); err != nil {
		return
	}
	if t, err = parseTime("to", to); err != nil {
		return
	}
	if !f.IsZero() && !t.IsZero() && t.Before(f) {
		err = invalid("to is before from")
	}
	return
}

// invalid returns an invalid-argument error with the message msg.
func invalid(msg string) error {
	return fmt.Errorf("server: %s: %w", msg, errs.InvalidArgument)
}

// timePtr is t for an optional time field: nil when zero.
func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
