package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/longterm"
)

// parityTurns is a short conversation in two namespaces: questions and
// answers that share few words, names, a code.
var parityTurns = []memory.Record{
	{ID: "t1", Speaker: "Alice", Text: "Where are we going for the team offsite this spring?"},
	{ID: "t2", Speaker: "Bob", Text: "We booked the lake house near Annecy for three nights."},
	{ID: "t3", Speaker: "Alice", Text: "Great. Who is driving the rental van?"},
	{ID: "t4", Speaker: "Bob", Text: "Carol drives; the van is reserved under ticket OPS-4711."},
	{ID: "t5", Speaker: "Alice", Text: "Did anyone check the weather forecast for the lake?"},
	{ID: "t6", Speaker: "Bob", Text: "Sunny and mild, around eighteen degrees all week."},
	{ID: "t7", Speaker: "Carol", Text: "I will bring the board games and the coffee grinder."},
	{ID: "u1", Namespace: "other", Speaker: "Dan", Text: "The lake house invoice arrived, ticket OPS-4711 is closed."},
	{ID: "u2", Namespace: "other", Speaker: "Erin", Text: "Annecy in spring is lovely; the van was cheap."},
}

// TestRanksLikeLongterm: the same records, in PostgreSQL and in the
// in-process engine, give the same hits with the same scores in every
// mode (single-path scores are the path's own: cosine, relative BM25).
//
// With exact=1 every vector search is an exact scan; without it a query of
// one (small) namespace scans its chunks exactly and a query of all of
// them uses the HNSW index (exact at this size).
func TestRanksLikeLongterm(t *testing.T) {
	for _, exact := range []string{"1", "0"} {
		t.Run("exact="+exact, func(t *testing.T) { ranksLikeLongterm(t, exact) })
	}
}

func ranksLikeLongterm(t *testing.T, exact string) {
	ctx := t.Context()
	emb := hashEmb(t, 256)
	recs := make([]memory.Record, len(parityTurns))
	for i, r := range parityTurns {
		r.Time = t0.Add(time.Duration(i) * time.Minute)
		recs[i] = r
	}
	pg := open(t, storeURL(t, "exact", exact))
	_, err := pg.AddBatch(ctx, recs)
	require.NoError(t, err)
	lt, err := longterm.New(ctx, emb)
	require.NoError(t, err)
	t.Cleanup(func() { lt.Close() })
	_, err = lt.AddBatch(ctx, recs)
	require.NoError(t, err)

	compare := func(stage string) {
		for _, q := range []string{"who drives the van", "OPS-4711", "lake weather", "what did Bob say about Annecy", "coffee"} {
			for _, ns := range []string{"", "default"} {
				for _, from := range []time.Time{{}, t0.Add(3 * time.Minute)} {
					for _, mode := range []memory.Mode{memory.Hybrid, memory.VectorOnly, memory.KeywordOnly} {
						query := memory.Query{Text: q, Namespace: ns, Mode: mode, K: 5, From: from}
						msg := fmt.Sprintf("%s: %q ns %q from %v %s", stage, q, ns, from, mode)
						want, err := lt.Query(ctx, query)
						require.NoError(t, err)
						got, err := pg.Query(ctx, query)
						require.NoError(t, err)
						require.Len(t, got, len(want), msg)
						for i := range want {
							assert.Equal(t, want[i].ID, got[i].ID, "%s hit %d", msg, i)
							assert.InDelta(t, want[i].Score, got[i].Score, 1e-5, "%s hit %d", msg, i)
							assert.Equal(t, want[i].VectorRank, got[i].VectorRank, "%s hit %d", msg, i)
							assert.Equal(t, want[i].KeywordRank, got[i].KeywordRank, "%s hit %d", msg, i)
						}
						if len(got) > 0 && mode == memory.KeywordOnly {
							assert.InDelta(t, 1, got[0].Score, 1e-6, "%s: keyword only, the best scores 1", msg)
						}
					}
				}
			}
		}
	}
	compare("added")
	// A forgotten record unlinks its neighbours; a replaced one moves to
	// the end of its namespace.
	for _, m := range []interface {
		Forget(context.Context, string) error
		Add(context.Context, memory.Record) (string, error)
	}{pg, lt} {
		require.NoError(t, m.Forget(ctx, "t4"))
		r := parityTurns[1]
		r.Time = t0.Add(10 * time.Minute)
		_, err := m.Add(ctx, r)
		require.NoError(t, err)
	}
	compare("after forget and replace")
	checkStats(t, pg)
}
