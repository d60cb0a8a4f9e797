package longterm

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/engine"
)

// TestVectorsBatch: a batch of query vectors answered by one batch search
// gives each the chunks that Vectors gives it alone: with the superseded
// records left out (now) or kept (history), in a time range (searched a
// vector at a time), in a namespace that holds nothing.
func TestVectorsBatch(t *testing.T) {
	ctx := t.Context()
	emb := newCounting(t, 64)
	m, err := New(ctx, emb)
	require.NoError(t, err)
	defer m.Close()
	recs := make([]Record, 300)
	for i := range recs {
		recs[i] = Record{ID: fmt.Sprint("r", i), Namespace: "a", Speaker: []string{"user", "bot"}[i%2],
			Time: time.Unix(1700000000+int64(i), 0).UTC(),
			Text: fmt.Sprintf("Dana lives in Paris and works at Acme, desk %d, floor %d.", i%40, i%7)}
	}
	_, err = m.AddBatch(ctx, recs)
	require.NoError(t, err)
	for i := 0; i < 300; i += 3 {
		_, err := m.Supersede(ctx, fmt.Sprint("r", i), Record{Namespace: "a", Speaker: "user", Text: fmt.Sprintf("Dana moved to Berlin, desk %d.", i)})
		require.NoError(t, err)
	}
	var qvecs [][]float32
	for i := range 25 {
		v, err := emb.Embed(ctx, []string{fmt.Sprintf("user: Dana lives in Paris and works at Acme, desk %d, floor %d.", i, i%5)})
		require.NoError(t, err)
		qvecs = append(qvecs, v[0])
	}
	src, err := m.View(ctx)
	require.NoError(t, err)
	defer src.Close()
	b, ok := src.(engine.VectorBatcher[*parent])
	require.True(t, ok)
	for _, scope := range []engine.Scope{{Namespace: "a", AsOf: time.Now()}, {Namespace: "a", History: true},
		{Namespace: "a", AsOf: time.Now(), From: time.Unix(1700000100, 0)}, {Namespace: "none"}} {
		for _, c := range []struct {
			n        int
			minScore float32
		}{{20, 0.5}, {5, 0.9}, {1000, 0}} {
			got, err := b.VectorsBatch(ctx, scope, qvecs, c.n, c.minScore)
			require.NoError(t, err)
			require.Len(t, got, len(qvecs))
			for i, q := range qvecs {
				want, _, err := src.Vectors(ctx, scope, q, c.n, c.minScore)
				require.NoError(t, err)
				assert.Equal(t, want, got[i], "%+v n=%d min=%v query %d", scope, c.n, c.minScore, i)
			}
		}
	}
}

// TestSimilarBatch: the near-duplicates of a batch of facts, searched
// together, are each fact's alone.
func TestSimilarBatch(t *testing.T) {
	ctx := t.Context()
	emb := newCounting(t, 64)
	m, err := New(ctx, emb, WithEngine(engine.WithNearDuplicates(0.6, engine.NearKeep)))
	require.NoError(t, err)
	defer m.Close()
	for i := range 200 {
		_, err := m.Add(ctx, Record{ID: fmt.Sprint("r", i), Namespace: fmt.Sprint("ns", i%2), Speaker: "user",
			Text: fmt.Sprintf("The staging cluster %d runs release %d of route-planner.", i%30, i%9)})
		require.NoError(t, err)
	}
	for i := 0; i < 200; i += 4 {
		_, err := m.Supersede(ctx, fmt.Sprint("r", i), Record{Namespace: fmt.Sprint("ns", i%2), Speaker: "user", Text: fmt.Sprintf("Cluster %d was retired.", i)})
		require.NoError(t, err)
	}
	var facts []memory.Record
	var texts []string
	for i := range 30 {
		r := memory.Record{Namespace: fmt.Sprint("ns", i%3), Speaker: "user", Text: fmt.Sprintf("The staging cluster %d runs release %d of route-planner now.", i, i%4)}
		facts = append(facts, r)
		texts = append(texts, m.header(&r)+r.Text)
	}
	got, err := engine.SimilarBatch(ctx, m.opts.engine, m, facts, texts, make([][]float32, len(facts)))
	require.NoError(t, err)
	found := 0
	for i, r := range facts {
		want, err := engine.Similar(ctx, m.opts.engine, m, r, texts[i], nil)
		require.NoError(t, err)
		assert.Equal(t, want, got[i], "fact %d", i)
		found += len(want)
	}
	assert.Positive(t, found, "the facts have near-duplicates")
}
