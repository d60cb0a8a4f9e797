package postgres

import (
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
