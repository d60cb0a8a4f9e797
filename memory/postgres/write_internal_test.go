package postgres

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentmem/agentmem/chunk"
	"github.com/agentmem/agentmem/memory"
)

// TestRowBytesHoldRows: the sizes commitOnce gives its COPY buffers
// (rowBytes, chunkRowBytes) hold the rows it writes, so that a batch's
// buffer is allocated once.
func TestRowBytesHoldRows(t *testing.T) {
	at := time.Date(2026, 12, 4, 14, 0, 0, 0, time.UTC)
	text := "Grüße from Lisbon. The hotel near the station has rooms! " + strings.Repeat("x", 300)
	for i, p := range []*prepared{
		{rec: memory.Record{ID: "a", Text: "hi"}, chunks: []chunk.Chunk{{Text: "hi", End: 2}}, vecBin: [][]byte{make([]byte, 16)}},
		{
			rec: memory.Record{ID: "r-" + strings.Repeat("9", 40), Text: text, Speaker: "Caroline", Tags: []string{"travel", "", "ü"},
				Time: at, ValidFrom: at, ValidUntil: at.Add(time.Hour), Supersedes: "old", SupersededBy: "new", Seen: 3, LastSeen: at},
			chunks:   []chunk.Chunk{{Text: text[:19], End: 19}, {Text: text[20:], Start: 20, End: len(text)}},
			vecBin:   [][]byte{make([]byte, 140), make([]byte, 4100)},
			termList: []string{"grüße", "hotel", "lisbon", "room", strings.Repeat("x", 300)},
			tfs:      []int32{1, 1, 1, 1, 1},
			textLen:  5,
			textKey:  -42,
		},
	} {
		c := newCopyRows(0)
		c.record(p, 7, 1<<40, 1<<40-1, 1<<40-5)
		assert.LessOrEqual(t, len(c.b)-len(copyHeader), rowBytes(p), "record %q", p.rec.ID)
		if i == 1 { // no field NULL
			assert.Equal(t, len(c.b)-len(copyHeader), rowBytes(p), "record %q", p.rec.ID)
		}
		c = newCopyRows(0)
		c.chunks(p, 7, 1<<40, true)
		want := len(p.rec.Text) + chunkRowBytes*len(p.chunks)
		for _, b := range p.vecBin {
			want += len(b)
		}
		assert.LessOrEqual(t, len(c.b)-len(copyHeader), want, "chunks of %q", p.rec.ID)
		if i == 1 { // its chunks hold all its text but one space
			assert.Equal(t, len(c.b)-len(copyHeader), want-1, "chunks of %q", p.rec.ID)
		}
	}
}

// TestPostingsOf: the postings of written records by term, each term's in
// seq order, are those of appending them record by record.
func TestPostingsOf(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 12))
	for _, n := range []int{0, 1, 7, 300} {
		var ws []written
		for i := range n {
			w := written{seq: int64(10 + 3*i), episode: int64(10 + 3*(i/4)), dl: int32(r.IntN(90) + 1)}
			for _, k := range r.Perm(40)[:r.IntN(12)] {
				w.terms = append(w.terms, fmt.Sprintf("t%02d", k))
				w.tfs = append(w.tfs, int32(r.IntN(5)+1))
			}
			slices.Sort(w.terms)
			ws = append(ws, w)
		}
		want := map[string][]posting{}
		for _, w := range ws {
			for i, term := range w.terms {
				want[term] = append(want[term], posting{seq: w.seq, episode: w.episode, tf: w.tfs[i], dl: w.dl})
			}
		}
		got := postingsOf(ws)
		assert.Equal(t, want, got, "%d records", n)
		for term, ps := range got {
			assert.Equal(t, len(ps), cap(ps), "term %s: appending to its postings does not write over another's", term)
		}
	}
}
