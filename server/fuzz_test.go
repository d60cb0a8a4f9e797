package server

import (
	"net/http"
	"testing"
	"time"

	"github.com/agentmem/agentmem/memory/longterm"
)

// FuzzDecodeRequests decodes arbitrary bodies as each request type and
// turns them into store calls' arguments: nothing panics, every refusal
// is a 4xx with a stable code, and what is accepted is in range.
func FuzzDecodeRequests(f *testing.F) {
	for _, seed := range []string{
		`{"text":"hello","user_id":"42","time":"2024-01-02","metadata":{"a":"b"}}`,
		`{"messages":[{"role":"user","content":"hi"}],"namespace":"n"}`,
		`{"q":"LH401","limit":3,"mode":"keyword","from":"2024-01-01T00:00:00Z","to":"2025-01-01"}`,
		`{"query":"x","k":-1}`, `{"id":"a","text":"b"}`, `{"offset":5,"limit":10,"agent_id":"bot"}`,
		`{"text":"a"} {}`, `[]`, `null`, `{"k":1e99}`, "{\"text\":\"\xff\"}", `{"tags":["x=y"],"min_score":0.5}`,
	} {
		for kind := range uint8(4) {
			f.Add([]byte(seed), kind)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, kind uint8) {
		var err error
		switch kind % 4 {
		case 0:
			var r AddRequest
			if err = decodeJSON(data, &r); err == nil {
				var recs []longterm.Record
				if recs, err = r.records("ns"); err == nil && (len(recs) == 0 || len(recs) > MaxMessages) {
					t.Fatalf("%d records from %q", len(recs), data)
				}
			}
		case 1:
			var r SearchRequest
			if err = decodeJSON(data, &r); err == nil {
				var q longterm.Query
				if q, _, err = r.query(""); err == nil && (q.K < 0 || q.K > MaxK || !q.To.IsZero() && q.To.Before(q.From)) {
					t.Fatalf("out-of-range query %+v from %q", q, data)
				}
			}
		case 2:
			var r ListRequest
			if err = decodeJSON(data, &r); err == nil {
				var o ListOptions
				if o, err = r.options(""); err == nil && (o.Offset < 0 || o.Limit <= 0 || o.Limit > MaxListLimit) {
					t.Fatalf("out-of-range listing %+v from %q", o, data)
				}
			}
		case 3:
			var r UpdateRequest
			if err = decodeJSON(data, &r); err == nil {
				_, err = r.apply(longterm.Record{ID: "x", Text: "old", Time: time.Unix(0, 0)})
			}
		}
		if err != nil {
			if status, code := classify(err); status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge {
				t.Fatalf("refused with %d %s, want a 400 or 413: %v", status, code, err)
			}
		}
	})
}
