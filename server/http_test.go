package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHTTP_Roundtrip(t *testing.T) {
	ts := start(t, nil)

	r := ts.call(t, "POST", "/v1/memories", "", AddRequest{Text: "Caroline flies LH401 to Frankfurt on Friday", Scope: Scope{UserID: "42"},
		Time: "2024-05-03T10:00:00Z", Speaker: "Caroline", Tags: []string{"travel"}, Metadata: map[string]string{"source": "chat"}})
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	var added AddResult
	r.decode(t, &added)
	require.NotEmpty(t, added.ID)
	assert.Equal(t, []string{added.ID}, added.IDs)
	assert.Equal(t, "/v1/memories/"+added.ID, r.header.Get("Location"))

	r = ts.call(t, "GET", "/v1/memories/"+added.ID, "", nil)
	require.Equal(t, http.StatusOK, r.status)
	var m Memory
	r.decode(t, &m)
	assert.Equal(t, Memory{ID: added.ID, Text: "Caroline flies LH401 to Frankfurt on Friday", Namespace: "user:42",
		Time: time.Date(2024, 5, 3, 10, 0, 0, 0, time.UTC), Speaker: "Caroline",
		Tags: []string{"travel", "source=chat"}, Metadata: map[string]string{"source": "chat"}}, m)

	// Messages: one memory each, role as speaker, in one batch.
	r = ts.call(t, "POST", "/v1/memories", "", map[string]any{"namespace": "user:42", "messages": []Message{
		{Role: "user", Content: "My dog is called Biscuit"}, {Role: "assistant", Content: "Noted: your dog Biscuit"}}})
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	var batch AddResult
	r.decode(t, &batch)
	require.Len(t, batch.IDs, 2)
	got, ok := ts.mem.Get(batch.IDs[0])
	require.True(t, ok)
	assert.Equal(t, "user", got.Speaker)
	assert.Equal(t, 3, ts.mem.Len())

	// Search, with the names models guess (q, limit, user_id).
	r = ts.call(t, "POST", "/v1/search", "", map[string]any{"q": "LH401", "limit": 2, "user_id": "42"})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	var sr SearchResult
	r.decode(t, &sr)
	require.NotEmpty(t, sr.Hits)
	assert.Equal(t, added.ID, sr.Hits[0].ID)
	assert.Positive(t, sr.Hits[0].Score)
	assert.Positive(t, sr.Hits[0].KeywordRank)
	assert.NotEmpty(t, sr.Hits[0].Snippets)
	assert.LessOrEqual(t, len(sr.Hits), 2)

	// Metadata filter, mode, time range.
	r = ts.call(t, "POST", "/v1/search", "", SearchRequest{Query: "dog Biscuit", Metadata: map[string]string{"source": "chat"}})
	r.decode(t, &sr)
	assert.Empty(t, sr.Hits, "no memory about the dog has source=chat")
	assert.Equal(t, NoneTagged, sr.Reason, "relevant memories, none with the tags")
	r = ts.call(t, "POST", "/v1/search", "", SearchRequest{Query: "Biscuit", Mode: "keyword", From: "2000-01-01", To: time.Now().Add(time.Hour).Format(time.RFC3339)})
	r.decode(t, &sr)
	require.Len(t, sr.Hits, 2)
	assert.ElementsMatch(t, batch.IDs, []string{sr.Hits[0].ID, sr.Hits[1].ID})
	r = ts.call(t, "POST", "/v1/search", "", SearchRequest{Query: "Biscuit", To: "2020-01-01"})
	r.decode(t, &sr)
	assert.Empty(t, sr.Hits)
	assert.Equal(t, NoRelevantMemory, sr.Reason, "an empty result says why")
	r = ts.call(t, "POST", "/v1/search", "", map[string]any{"query": "Biscuit", "user_id": "43"})
	sr = SearchResult{}
	r.decode(t, &sr)
	assert.Empty(t, sr.Hits)
	assert.Equal(t, EmptyNamespace+`: "user:43"`, sr.Reason, "a namespace that holds nothing (a mistyped user id) says so")

	// Relevance: every hit has one in (0, 1]; min_relevance leaves out
	// those below it; explain says why each surfaced.
	r = ts.call(t, "POST", "/v1/search", "", SearchRequest{Query: "LH401", MinRelevance: -1, Explain: true})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	r.decode(t, &sr)
	require.NotEmpty(t, sr.Hits)
	for _, h := range sr.Hits {
		assert.Positive(t, h.Relevance, h.ID)
		assert.LessOrEqual(t, h.Relevance, float32(1), h.ID)
		require.NotNil(t, h.Explain, h.ID)
		assert.NotEmpty(t, h.Explain.Paths, h.ID)
	}
	assert.Contains(t, sr.Hits[0].Explain.Terms, "lh401")
	assert.Empty(t, sr.Hits[0].Explain.UnknownNames)
	assert.Positive(t, sr.Hits[0].Explain.Records, "how many records the hit's namespace holds")
	top := sr.Hits[0].Relevance
	r = ts.call(t, "POST", "/v1/search", "", map[string]any{"query": "Is LH401 the flight to Oslo?", "min_relevance": -1, "explain": true})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	assert.Contains(t, string(r.body), `"unknown_names":["Oslo"]`, "the name the memory never heard of, in the JSON")
	r = ts.call(t, "POST", "/v1/search", "", SearchRequest{Query: "LH401", MinRelevance: min(1, top+0.001)})
	r.decode(t, &sr)
	assert.Empty(t, sr.Hits, "no hit is above the best one's relevance")
	r = ts.call(t, "POST", "/v1/search", "", SearchRequest{Query: "LH401", MinRelevance: 1.5})
	assert.Equal(t, http.StatusBadRequest, r.status, "body: %s", r.body)

	// A token budget: the hits that fit, each with its cost, and the sum.
	r = ts.call(t, "POST", "/v1/search", "", map[string]any{"query": "Biscuit dog lake", "min_relevance": -1, "max_tokens": 30})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	sr = SearchResult{}
	r.decode(t, &sr)
	require.NotEmpty(t, sr.Hits)
	sum := 0
	for _, h := range sr.Hits {
		assert.Positive(t, h.Tokens, h.ID)
		sum += h.Tokens
	}
	assert.Equal(t, sum, sr.Tokens)
	assert.LessOrEqual(t, sr.Tokens, 30)
	r = ts.call(t, "POST", "/v1/search", "", map[string]any{"query": "Biscuit", "max_tokens": -3})
	assert.Equal(t, http.StatusBadRequest, r.status, "body: %s", r.body)
	// A budget no relevant memory fits says so, not "nothing relevant".
	r = ts.call(t, "POST", "/v1/search", "", map[string]any{"query": "Biscuit dog lake", "min_relevance": -1, "max_tokens": 1})
	sr = SearchResult{}
	r.decode(t, &sr)
	assert.Empty(t, sr.Hits)
	assert.True(t, strings.HasPrefix(sr.Reason, NothingFits+" of 1: "), sr.Reason)
	// With tags, the budget is spent on the memories that have them: the
	// dog's two memories rank first and fit, but have no "travel".
	r = ts.call(t, "POST", "/v1/search", "", map[string]any{"query": "LH401 Caroline", "tags": []string{"travel"}, "max_tokens": 1000})
	sr = SearchResult{}
	r.decode(t, &sr)
	require.Len(t, sr.Hits, 1)
	flight := sr.Hits[0]
	require.Positive(t, flight.Tokens)
	r = ts.call(t, "POST", "/v1/search", "", map[string]any{"query": "my dog Biscuit, noted, and LH401", "min_relevance": -1, "max_tokens": flight.Tokens + 1})
	sr = SearchResult{}
	r.decode(t, &sr)
	require.NotEmpty(t, sr.Hits)
	require.NotEqual(t, flight.ID, sr.Hits[0].ID, "without tags an untagged memory is first")
	r = ts.call(t, "POST", "/v1/search", "", map[string]any{"query": "my dog Biscuit, noted, and LH401", "min_relevance": -1, "max_tokens": flight.Tokens + 1, "tags": []string{"travel"}})
	sr = SearchResult{}
	r.decode(t, &sr)
	require.Len(t, sr.Hits, 1, "body: %s", r.body)
	assert.Equal(t, flight.ID, sr.Hits[0].ID)
	assert.Equal(t, flight.Tokens, sr.Tokens)
	r = ts.call(t, "POST", "/v1/search", "", map[string]any{"query": "LH401 Caroline", "max_tokens": 1, "tags": []string{"travel"}})
	sr = SearchResult{}
	r.decode(t, &sr)
	assert.Empty(t, sr.Hits)
	assert.Equal(t, fmt.Sprintf("%s of 1: the one relevant memory takes %d", NothingFits, flight.Tokens), sr.Reason, "what the memory with the tags takes")

	// Neighbours: each hit with what was said just before and after it in
	// its conversation (the flight, a year earlier, is another one).
	r = ts.call(t, "POST", "/v1/search", "", SearchRequest{Query: "Biscuit", Mode: "keyword", Neighbours: 2, Scope: Scope{Namespace: "user:42"}})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	r.decode(t, &sr)
	require.Len(t, sr.Hits, 2)
	for _, h := range sr.Hits {
		switch h.ID {
		case batch.IDs[0]:
			assert.Empty(t, h.Before)
			require.Len(t, h.After, 1)
			assert.Equal(t, "Noted: your dog Biscuit", h.After[0].Text)
			assert.Equal(t, "assistant", h.After[0].Speaker)
		case batch.IDs[1]:
			require.Len(t, h.Before, 1)
			assert.Equal(t, batch.IDs[0], h.Before[0].ID)
			assert.Empty(t, h.After)
		}
	}
	// Explain names the speakers a query asks about: the user, for a
	// question in the first person about the asker's things.
	r = ts.call(t, "POST", "/v1/search", "", SearchRequest{Query: "What is my dog called?", Mode: "keyword", Explain: true, MinRelevance: -1, Scope: Scope{Namespace: "user:42"}})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	r.decode(t, &sr)
	require.NotEmpty(t, sr.Hits)
	require.NotNil(t, sr.Hits[0].Explain)
	assert.Equal(t, []string{"user"}, sr.Hits[0].Explain.Speakers)
	assert.Contains(t, string(r.body), `"speakers":["user"]`)

	// List: time order, paging, namespace.
	r = ts.call(t, "GET", "/v1/memories?namespace=user:42&limit=2", "", nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	var lr ListResult
	r.decode(t, &lr)
	assert.Equal(t, 3, lr.Total)
	require.Len(t, lr.Memories, 2)
	assert.Equal(t, added.ID, lr.Memories[0].ID, "the oldest first")
	r = ts.call(t, "GET", "/v1/memories?user_id=42&offset=2&limit=2", "", nil)
	r.decode(t, &lr)
	assert.Equal(t, 3, lr.Total)
	require.Len(t, lr.Memories, 1)
	r = ts.call(t, "GET", "/v1/memories?namespace=nobody", "", nil)
	r.decode(t, &lr)
	assert.Zero(t, lr.Total)
	assert.Empty(t, lr.Memories)

	// Update stores a new version that keeps what is not given, and
	// keeps the old one as history.
	r = ts.call(t, "PUT", "/v1/memories/"+added.ID, "", UpdateRequest{Text: "Caroline flies LH402 to Munich on Saturday"})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	r.decode(t, &m)
	assert.Equal(t, "Caroline flies LH402 to Munich on Saturday", m.Text)
	assert.Equal(t, "Caroline", m.Speaker)
	assert.Equal(t, "user:42", m.Namespace)
	assert.Equal(t, added.ID, m.Supersedes, "the new version names the old one")
	assert.NotEqual(t, added.ID, m.ID, "a new version has an id of its own")
	stored, _ := ts.mem.Get(added.ID)
	assert.Equal(t, "Caroline flies LH401 to Frankfurt on Friday", stored.Text, "the old version is kept as it was")
	assert.Equal(t, m.ID, stored.SupersededBy)
	assert.Equal(t, 4, ts.mem.Len())
	r = ts.call(t, "GET", "/v1/memories/"+m.ID+"/history", "", nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	var hr HistoryResult
	r.decode(t, &hr)
	require.Len(t, hr.Versions, 2)
	assert.Equal(t, []string{added.ID, m.ID}, []string{hr.Versions[0].ID, hr.Versions[1].ID}, "oldest first")
	assert.NotNil(t, hr.Versions[0].ValidUntil, "the old version says until when it held")
	// A second update of the old version fails: it was superseded.
	r = ts.call(t, "PUT", "/v1/memories/"+added.ID, "", UpdateRequest{Text: "Caroline flies LH403 to Rome"})
	assert.Equal(t, http.StatusConflict, r.status, "body: %s", r.body)
	assert.Equal(t, CodeSuperseded, r.errCode(t))
	// A search finds the current version, with history both.
	sr = SearchResult{}
	r = ts.call(t, "POST", "/v1/search", "", SearchRequest{Query: "Caroline flight", Scope: Scope{Namespace: "user:42"}, MinRelevance: -1})
	r.decode(t, &sr)
	for _, h := range sr.Hits {
		assert.NotEqual(t, added.ID, h.ID, "a search now does not find the superseded version")
	}
	r = ts.call(t, "POST", "/v1/search", "", SearchRequest{Query: "Caroline flight", Scope: Scope{Namespace: "user:42"}, MinRelevance: -1, History: true})
	r.decode(t, &sr)
	assert.True(t, slices.ContainsFunc(sr.Hits, func(h Hit) bool { return h.ID == added.ID && h.SupersededBy == m.ID }),
		"a search of history finds it, marked")
	require.Equal(t, http.StatusNoContent, ts.call(t, "DELETE", "/v1/memories/"+m.ID, "", nil).status)

	// Stats, health.
	r = ts.call(t, "GET", "/v1/stats", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	var st Stats
	r.decode(t, &st)
	assert.Equal(t, 3, st.Memories)
	assert.Positive(t, st.Chunks)
	r = ts.call(t, "GET", "/healthz", "", nil)
	assert.Equal(t, http.StatusOK, r.status)
	assert.JSONEq(t, `{"status":"ok"}`, string(r.body))

	// Delete, then it is gone.
	r = ts.call(t, "DELETE", "/v1/memories/"+added.ID, "", nil)
	assert.Equal(t, http.StatusNoContent, r.status)
	r = ts.call(t, "GET", "/v1/memories/"+added.ID, "", nil)
	assert.Equal(t, http.StatusNotFound, r.status)
	assert.Equal(t, CodeNotFound, r.errCode(t))
	assert.Equal(t, 2, ts.mem.Len())

	// Metrics count requests by route.
	r = ts.call(t, "GET", "/metrics", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	assert.Contains(t, string(r.body), `agentmem_http_requests_total{code="201",route="POST /v1/memories"} 2`)
	assert.Contains(t, string(r.body), "agentmem_store_memories 2")
}

func TestHTTP_Errors(t *testing.T) {
	ts := start(t, nil, WithMaxBodyBytes(4096))
	id := ts.add(t, "", AddRequest{Text: "a memory"})

	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
		code               string
	}{
		{"empty body", "POST", "/v1/memories", "", 400, CodeBadJSON},
		{"not JSON", "POST", "/v1/memories", "text=hello", 400, CodeBadJSON},
		{"unknown field", "POST", "/v1/memories", `{"txt":"hello"}`, 400, CodeBadJSON},
		{"wrong type", "POST", "/v1/search", `{"query":"x","k":"five"}`, 400, CodeBadJSON},
		{"trailing data", "POST", "/v1/search", `{"query":"x"} {}`, 400, CodeBadJSON},
		{"no text", "POST", "/v1/memories", `{"namespace":"a"}`, 400, CodeInvalidArgument},
		{"text and messages", "POST", "/v1/memories", `{"text":"a","messages":[{"content":"b"}]}`, 400, CodeInvalidArgument},
		{"empty message", "POST", "/v1/memories", `{"messages":[{"role":"user"}]}`, 400, CodeInvalidArgument},
		{"id with messages", "POST", "/v1/memories", `{"id":"x","messages":[{"content":"b"}]}`, 400, CodeInvalidArgument},
		{"punctuation only", "POST", "/v1/memories", `{"text":"?!"}`, 400, CodeInvalidArgument},
		{"invalid UTF-8", "POST", "/v1/memories", []byte("{\"text\":\"caf\xe9\"}"), 400, CodeInvalidArgument},
		{"bad time", "POST", "/v1/memories", `{"text":"a","time":"yesterday"}`, 400, CodeInvalidArgument},
		{"no query", "POST", "/v1/search", `{"k":3}`, 400, CodeInvalidArgument},
		{"negative k", "POST", "/v1/search", `{"query":"a","k":-1}`, 400, CodeInvalidArgument},
		{"huge k", "POST", "/v1/search", `{"query":"a","k":1001}`, 400, CodeInvalidArgument},
		{"bad mode", "POST", "/v1/search", `{"query":"a","mode":"fuzzy"}`, 400, CodeInvalidArgument},
		{"bad min_score", "POST", "/v1/search", `{"query":"a","min_score":2}`, 400, CodeInvalidArgument},
		{"bad neighbours", "POST", "/v1/search", `{"query":"a","neighbours":51}`, 400, CodeInvalidArgument},
		{"to before from", "POST", "/v1/search", `{"query":"a","from":"2024-02-01","to":"2024-01-01"}`, 400, CodeInvalidArgument},
		{"bad list limit", "GET", "/v1/memories?limit=5000", nil, 400, CodeInvalidArgument},
		{"list limit not a number", "GET", "/v1/memories?limit=ten", nil, 400, CodeInvalidArgument},
		{"negative offset", "GET", "/v1/memories?offset=-1", nil, 400, CodeInvalidArgument},
		{"unknown list parameter", "GET", "/v1/memories?q=x", nil, 400, CodeInvalidArgument},
		{"update id mismatch", "PUT", "/v1/memories/" + id, `{"id":"other"}`, 400, CodeInvalidArgument},
		{"update bad time", "PUT", "/v1/memories/" + id, `{"time":"soon"}`, 400, CodeInvalidArgument},
		{"get missing", "GET", "/v1/memories/nope", nil, 404, CodeNotFound},
		{"update missing", "PUT", "/v1/memories/nope", `{"text":"x"}`, 404, CodeNotFound},
		{"delete missing", "DELETE", "/v1/memories/nope", nil, 404, CodeNotFound},
		{"unknown route", "GET", "/v2/things", nil, 404, CodeNotFound},
		{"wrong method", "PATCH", "/v1/memories/" + id, nil, 405, CodeMethodNotAllowed},
		{"wrong method on search", "GET", "/v1/search", nil, 405, CodeMethodNotAllowed},
		{"body too large", "POST", "/v1/memories", `{"text":"` + strings.Repeat("a", 5000) + `"}`, 413, CodeTooLarge},
		{"too many messages", "POST", "/v1/memories", map[string]any{"messages": slices.Repeat([]Message{{Content: "x"}}, MaxMessages+1)}, 413, CodeTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "too many messages" {
				ts := start(t, nil) // the default body limit holds 1001 messages
				r := ts.call(t, tc.method, tc.path, "", tc.body)
				assert.Equal(t, tc.status, r.status, "body: %s", r.body)
				assert.Equal(t, tc.code, r.errCode(t))
				return
			}
			r := ts.call(t, tc.method, tc.path, "", tc.body)
			assert.Equal(t, tc.status, r.status, "body: %s", r.body)
			assert.Equal(t, "application/json", r.header.Get("Content-Type"))
			assert.Equal(t, tc.code, r.errCode(t))
		})
	}
	r := ts.call(t, "PATCH", "/v1/memories/"+id, "", nil)
	assert.Equal(t, "GET, PUT, DELETE", r.header.Get("Allow"))
	assert.Equal(t, 1, ts.mem.Len(), "no bad request stored anything")
}

func TestHTTP_ClosedStore(t *testing.T) {
	ts := start(t, nil)
	id := ts.add(t, "", AddRequest{Text: "before close"})
	require.NoError(t, ts.mem.Close())
	for _, r := range []response{
		ts.call(t, "POST", "/v1/memories", "", AddRequest{Text: "after close"}),
		ts.call(t, "POST", "/v1/search", "", SearchRequest{Query: "close"}),
		ts.call(t, "DELETE", "/v1/memories/"+id, "", nil),
	} {
		assert.Equal(t, http.StatusServiceUnavailable, r.status, "body: %s", r.body)
		assert.Equal(t, CodeUnavailable, r.errCode(t))
	}
}

func TestHTTP_ReadOnly(t *testing.T) {
	mem := newMemory(t)
	id, err := mem.Add(t.Context(), recordFor("kept as is"))
	require.NoError(t, err)
	ts := start(t, mem, WithReadOnly())
	for _, r := range []response{
		ts.call(t, "POST", "/v1/memories", "", AddRequest{Text: "new"}),
		ts.call(t, "PUT", "/v1/memories/"+id, "", UpdateRequest{Text: "changed"}),
		ts.call(t, "DELETE", "/v1/memories/"+id, "", nil),
	} {
		assert.Equal(t, http.StatusForbidden, r.status)
		assert.Equal(t, CodeReadOnly, r.errCode(t))
	}
	r := ts.call(t, "POST", "/v1/search", "", SearchRequest{Query: "kept"})
	require.Equal(t, http.StatusOK, r.status)
	var sr SearchResult
	r.decode(t, &sr)
	require.Len(t, sr.Hits, 1)
	assert.Equal(t, "kept as is", sr.Hits[0].Text)
	r = ts.call(t, "GET", "/v1/stats", "", nil)
	var st Stats
	r.decode(t, &st)
	assert.True(t, st.ReadOnly)
}

func TestHTTP_ListPreexistingStore(t *testing.T) {
	mem := newMemory(t)
	id, err := mem.Add(t.Context(), recordFor("added before the server"))
	require.NoError(t, err)
	ts := start(t, mem)
	r := ts.call(t, "GET", "/v1/memories", "", nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	var lr ListResult
	r.decode(t, &lr)
	assert.Equal(t, 1, lr.Total, "a record stored before the server started is listed")
	require.Len(t, lr.Memories, 1)
	assert.Equal(t, id, lr.Memories[0].ID)
}

func TestHTTP_Auth(t *testing.T) {
	toks, err := ParseTokens("admin-secret=*, pinned-secret=user:42")
	require.NoError(t, err)
	ts := start(t, nil, WithTokens(toks))

	// No token, or a wrong one: 401 on everything but /healthz and /openapi.json.
	for _, tok := range []string{"", "wrong", "admin-secre", "admin-secretx"} {
		for _, rt := range [][2]string{{"GET", "/v1/memories/x"}, {"POST", "/v1/search"}, {"GET", "/v1/stats"}, {"GET", "/metrics"}, {"GET", "/v1/memories"}} {
			r := ts.call(t, rt[0], rt[1], tok, nil)
			assert.Equal(t, http.StatusUnauthorized, r.status, "%s %s with %q", rt[0], rt[1], tok)
			assert.Equal(t, CodeUnauthorized, r.errCode(t))
			assert.NotEmpty(t, r.header.Get("WWW-Authenticate"))
		}
	}
	assert.Equal(t, http.StatusOK, ts.call(t, "GET", "/healthz", "", nil).status)
	assert.Equal(t, http.StatusOK, ts.call(t, "GET", "/openapi.json", "", nil).status)

	other := ts.add(t, "admin-secret", AddRequest{Text: "the other user's secret plan", Scope: Scope{Namespace: "user:7"}})
	// The pinned token writes into its namespace by default, and may name it.
	mine := ts.add(t, "pinned-secret", AddRequest{Text: "my secret plan"})
	got, _ := ts.mem.Get(mine)
	assert.Equal(t, "user:42", got.Namespace)
	ts.add(t, "pinned-secret", AddRequest{Text: "my second plan", Scope: Scope{UserID: "42"}})

	// It cannot write, read, list or search elsewhere.
	forbidden := []response{
		ts.call(t, "POST", "/v1/memories", "pinned-secret", AddRequest{Text: "x", Scope: Scope{Namespace: "user:7"}}),
		ts.call(t, "POST", "/v1/memories", "pinned-secret", AddRequest{Text: "x", ID: other}), // would move it
		ts.call(t, "POST", "/v1/search", "pinned-secret", SearchRequest{Query: "plan", Scope: Scope{Namespace: "user:7"}}),
		ts.call(t, "GET", "/v1/memories?namespace=user:7", "pinned-secret", nil),
		ts.call(t, "GET", "/v1/stats", "pinned-secret", nil),
		ts.call(t, "GET", "/metrics", "pinned-secret", nil),
	}
	for _, r := range forbidden {
		assert.Equal(t, http.StatusForbidden, r.status, "body: %s", r.body)
		assert.Equal(t, CodeForbidden, r.errCode(t))
	}
	for _, r := range []response{ // another namespace's memory does not exist for it
		ts.call(t, "GET", "/v1/memories/"+other, "pinned-secret", nil),
		ts.call(t, "PUT", "/v1/memories/"+other, "pinned-secret", UpdateRequest{Text: "mine now"}),
		ts.call(t, "DELETE", "/v1/memories/"+other, "pinned-secret", nil),
		ts.call(t, "GET", "/v1/memories/"+other+"/history", "pinned-secret", nil),
	} {
		assert.Equal(t, http.StatusNotFound, r.status)
		assert.Equal(t, CodeNotFound, r.errCode(t))
	}
	still, ok := ts.mem.Get(other)
	require.True(t, ok)
	assert.Equal(t, "the other user's secret plan", still.Text)

	// A search without a namespace sees only its own.
	r := ts.call(t, "POST", "/v1/search", "pinned-secret", SearchRequest{Query: "secret plan", K: 10})
	var sr SearchResult
	r.decode(t, &sr)
	require.Len(t, sr.Hits, 2)
	for _, h := range sr.Hits {
		assert.Equal(t, "user:42", h.Namespace)
	}
	r = ts.call(t, "GET", "/v1/memories", "pinned-secret", nil)
	var lr ListResult
	r.decode(t, &lr)
	assert.Equal(t, 2, lr.Total)
	// The admin sees everything.
	r = ts.call(t, "POST", "/v1/search", "admin-secret", SearchRequest{Query: "secret plan", K: 10})
	r.decode(t, &sr)
	assert.Len(t, sr.Hits, 3)
	assert.Equal(t, http.StatusNoContent, ts.call(t, "DELETE", "/v1/memories/"+mine, "pinned-secret", nil).status)
	assert.Equal(t, http.StatusOK, ts.call(t, "GET", "/metrics", "admin-secret", nil).status)
}

func TestParseTokens(t *testing.T) {
	toks, err := ParseTokens(" a=user:1 ,b=*, c ,,")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": "user:1", "b": "*", "c": "*"}, toks)
	for _, bad := range []string{"=user:1", "tok="} {
		_, err := ParseTokens(bad)
		assert.ErrorContains(t, err, "invalid argument", bad)
		assert.NotContains(t, err.Error(), "user:1", "the entry (a secret) is not echoed")
	}
	env := map[string]string{EnvTokenVar: "solo", EnvTokensVar: "p=user:9"}
	toks, err = EnvTokens(func(k string) string { return env[k] })
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"solo": "*", "p": "user:9"}, toks)
}

func TestListen_RefusesNonLoopbackWithoutToken(t *testing.T) {
	srv, err := New(newMemory(t), WithLogger(quiet))
	require.NoError(t, err)
	for _, addr := range []string{":7437", "0.0.0.0:7437", "192.0.2.1:7437", "example.com:80"} {
		err := srv.ListenAndServe(t.Context(), addr, time.Second)
		assert.ErrorIs(t, err, ErrInsecure, addr)
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", "[::1]:0"} {
		assert.True(t, loopbackAddr(addr), addr)
	}
}

func TestOpenAPIMatchesRoutes(t *testing.T) {
	ts := start(t, nil)
	r := ts.call(t, "GET", "/openapi.json", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(r.body, &doc))
	assert.Equal(t, "3.1.0", doc.OpenAPI)
	var documented []string
	for path, item := range doc.Paths {
		for method := range item {
			if method != "parameters" {
				documented = append(documented, strings.ToUpper(method)+" "+path)
			}
		}
	}
	assert.ElementsMatch(t, apiRoutes, documented)
	// Every documented route is served (no 404/405 from the router).
	for _, rt := range apiRoutes {
		method, path, _ := strings.Cut(rt, " ")
		path = strings.ReplaceAll(path, "{id}", "x")
		r := ts.call(t, method, path, "", nil)
		assert.NotEqual(t, http.StatusMethodNotAllowed, r.status, rt)
		assert.NotContains(t, string(r.body), "no route", rt) // a 404 is the missing memory's

	}
}

// TestHTTP_Duplicates: the same text added twice to a namespace is one
// memory, and the second add says so (200, duplicate, the stored id);
// messages are turns, kept however often they repeat.
func TestHTTP_Duplicates(t *testing.T) {
	ts := start(t, nil)
	first := ts.add(t, "", AddRequest{Text: "Dana lives in Paris.", Scope: Scope{UserID: "dana"}})
	r := ts.call(t, "POST", "/v1/memories", "", AddRequest{Text: "dana lives in paris", Scope: Scope{UserID: "dana"}})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	var res AddResult
	r.decode(t, &res)
	assert.True(t, res.Duplicate)
	assert.Equal(t, first, res.ID)
	assert.Equal(t, 1, ts.mem.Len())
	got, _ := ts.mem.Get(first)
	assert.Equal(t, 1, got.Seen)

	// Another namespace is another memory.
	ts.add(t, "", AddRequest{Text: "Dana lives in Paris.", Scope: Scope{UserID: "sam"}})
	// Turns repeat.
	r = ts.call(t, "POST", "/v1/memories", "", AddRequest{Scope: Scope{UserID: "dana"},
		Messages: []Message{{Role: "user", Content: "Thanks!"}, {Role: "assistant", Content: "Anytime."}, {Role: "user", Content: "Thanks!"}}})
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	assert.Equal(t, 5, ts.mem.Len())
}

// TestOpenAPIDescribesFields: every JSON field of the API's requests and
// answers is a property of its schema in /openapi.json (through allOf and
// $ref), so a client generated from the document sees all of them.
func TestOpenAPIDescribesFields(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(openAPI, &doc))
	type schema struct {
		Ref        string                     `json:"$ref"`
		Properties map[string]json.RawMessage `json:"properties"`
		AllOf      []json.RawMessage          `json:"allOf"`
	}
	var props func(raw json.RawMessage) map[string]bool
	props = func(raw json.RawMessage) map[string]bool {
		var s schema
		require.NoError(t, json.Unmarshal(raw, &s))
		out := map[string]bool{}
		if name, ok := strings.CutPrefix(s.Ref, "#/components/schemas/"); ok {
			require.Contains(t, doc.Components.Schemas, name)
			return props(doc.Components.Schemas[name])
		}
		for p := range s.Properties {
			out[p] = true
		}
		for _, a := range s.AllOf {
			for p := range props(a) {
				out[p] = true
			}
		}
		return out
	}
	var fields func(typ reflect.Type) []string
	fields = func(typ reflect.Type) []string {
		var out []string
		for f := range typ.Fields() {
			if f.Anonymous {
				out = append(out, fields(f.Type)...)
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name != "" && name != "-" && f.IsExported() {
				out = append(out, name)
			}
		}
		return out
	}
	for name, v := range map[string]any{
		"SearchRequest": SearchRequest{}, "SearchResult": SearchResult{}, "Hit": Hit{}, "Memory": Memory{}, "Explanation": Explanation{},
		"AddRequest": AddRequest{}, "AddResult": AddResult{}, "SimilarMemory": SimilarMemory{}, "UpdateRequest": UpdateRequest{},
		"ListResult": ListResult{}, "HistoryResult": HistoryResult{}, "Stats": Stats{},
	} {
		raw, ok := doc.Components.Schemas[name]
		if !assert.True(t, ok, "no schema %s", name) {
			continue
		}
		have := props(raw)
		for _, f := range fields(reflect.TypeOf(v)) {
			assert.True(t, have[f], "%s.%s is not in /openapi.json", name, f)
		}
	}
}

// TestHTTP_SearchAskedNow: a search without as_of is asked now: "what did
// we talk about yesterday?" is the day before the clock's, without
// today's talk; with as_of, the day before it.
func TestHTTP_SearchAskedNow(t *testing.T) {
	ts := start(t, nil)
	now := time.Now().UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	morning := today
	if now.Add(-time.Minute).After(today) {
		morning = now.Add(-time.Minute)
	}
	add := func(text, speaker string, at time.Time) string {
		r := ts.call(t, "POST", "/v1/memories", "", AddRequest{Text: text, Speaker: speaker, Time: at.Format(time.RFC3339Nano)})
		require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
		var added AddResult
		r.decode(t, &added)
		return added.ID
	}
	y1 := add("Can you help me draft a cover letter for Acme?", "user", today.Add(-14*time.Hour))
	y2 := add("Open with the Spark pipeline you built.", "assistant", today.Add(-14*time.Hour+time.Minute))
	add("Good morning, one more question.", "user", morning)
	search := func(req SearchRequest) []string {
		r := ts.call(t, "POST", "/v1/search", "", req)
		require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
		var sr SearchResult
		r.decode(t, &sr)
		var ids []string
		for _, h := range sr.Hits {
			ids = append(ids, h.ID)
		}
		return ids
	}
	assert.ElementsMatch(t, []string{y1, y2}, search(SearchRequest{Query: "What did we talk about yesterday?"}))
	assert.Empty(t, search(SearchRequest{Query: "What did we talk about yesterday?", AsOf: today.Add(-14 * time.Hour).Format(time.RFC3339)}),
		"as of the day before, its yesterday held nothing")
}

// TestHTTP_ExplainAliases: explain names the speakers a query asks about
// and the names it calls them by that they gave as theirs.
func TestHTTP_ExplainAliases(t *testing.T) {
	ts := start(t, nil)
	r := ts.call(t, "POST", "/v1/memories", "", map[string]any{"namespace": "team:7", "messages": []Message{
		{Role: "user", Content: "Hi, I'm Priya."}, {Role: "assistant", Content: "Nice to meet you, Priya!"},
		{Role: "user", Content: "I prefer table-driven tests."}}})
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	r = ts.call(t, "POST", "/v1/search", "", SearchRequest{Query: "Which tests does Priya prefer?", Mode: "keyword", Explain: true, MinRelevance: -1, Scope: Scope{Namespace: "team:7"}})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	var sr SearchResult
	r.decode(t, &sr)
	require.NotEmpty(t, sr.Hits)
	assert.Equal(t, "I prefer table-driven tests.", sr.Hits[0].Text)
	require.NotNil(t, sr.Hits[0].Explain)
	assert.Equal(t, []string{"user"}, sr.Hits[0].Explain.Speakers)
	assert.Contains(t, string(r.body), `"aliases":{"user":["Priya"]}`)
}

// TestHTTP_ExplainLaterThan: of two facts added beside each other, the
// later comes first and its explanation names the earlier (later_than).
func TestHTTP_ExplainLaterThan(t *testing.T) {
	ts := start(t, nil)
	for _, f := range []AddRequest{
		{Text: "My manager is Tom.", Time: "2026-01-12", Speaker: "user", Scope: Scope{Namespace: "dana"}},
		{Text: "My manager is Ingrid now.", Time: "2026-05-02", Speaker: "user", Scope: Scope{Namespace: "dana"}},
	} {
		r := ts.call(t, "POST", "/v1/memories", "", f)
		require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	}
	r := ts.call(t, "POST", "/v1/search", "", SearchRequest{Query: "Who is my manager?", Explain: true, Scope: Scope{Namespace: "dana"}})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	var sr SearchResult
	r.decode(t, &sr)
	require.Len(t, sr.Hits, 2)
	assert.Equal(t, []string{"My manager is Ingrid now.", "My manager is Tom."}, []string{sr.Hits[0].Text, sr.Hits[1].Text})
	require.NotNil(t, sr.Hits[0].Explain)
	assert.Equal(t, []string{sr.Hits[1].ID}, sr.Hits[0].Explain.LaterThan)
	assert.Contains(t, string(r.body), `"later_than":["`+sr.Hits[1].ID+`"]`)
}
