package longterm

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed"
)

// conceptModel stands for a sentence-embedding model: a text's vector has
// a 1 in the dimension of each concept one of its words belongs to, so
// "car" and "automobile" meet although they share no letters. It does not
// say its Kind, as a user's model embedder would not.
type conceptModel struct{}

var concepts = map[string]int{
	"car": 0, "automobile": 0, "vehicle": 0,
	"broke": 1, "trouble": 1, "mechanic": 1, "fixing": 1,
	"museum": 2, "opens": 2,
	"lunch": 3, "pasta": 3,
}

func (conceptModel) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 5)
		v[4] = 0.01 // never the zero vector
		for _, w := range strings.Fields(strings.ToLower(t)) {
			if c, ok := concepts[strings.Trim(w, ".,!?")]; ok {
				v[c] = 1
			}
		}
		out[i] = v
	}
	return out, nil
}
func (conceptModel) Dim() int     { return 5 }
func (conceptModel) Name() string { return "concepts" }

// conceptLexical is the same vectors, said to be lexical.
type conceptLexical struct{ conceptModel }

func (conceptLexical) Kind() embed.Kind { return embed.Lexical }

// TestDefaultWeights_ByEmbedderKind: without a fusion option, a model
// embedder's hybrid search is score fusion with the vector path weighing
// as much as the keyword path, a lexical one's margin fusion at
// DefaultVectorWeight; an option overrides both. The record found by
// meaning alone (no word shared with the query, the best cosine) scores
// the vector weight itself. The record found by its word ("automobile",
// the only keyword match) has the median cosine, 0.5: score fusion's
// min–max counts half of it, margin fusion none.
func TestDefaultWeights_ByEmbedderKind(t *testing.T) {
	ctx := t.Context()
	day := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	recs := []Record{ // days apart: no neighbours, no shared episode
		{ID: "meaning", Time: day, Text: "My car broke down, the mechanic is fixing it."},
		{ID: "word", Time: day.AddDate(0, 0, 2), Text: "The automobile museum opens on Monday."},
		{ID: "other", Time: day.AddDate(0, 0, 4), Text: "Lunch was pasta."},
	}
	for _, tc := range []struct {
		name           string
		emb            embed.Embedder
		opts           []Option
		want, wantWord float64
	}{
		{"model", conceptModel{}, nil, DefaultModelVectorWeight, DefaultModelVectorWeight*0.5 + DefaultModelKeywordWeight},
		{"lexical", conceptLexical{}, nil, DefaultVectorWeight, DefaultKeywordWeight},
		{"model, option", conceptModel{}, []Option{WithScoreFusion(0.2, 0.8)}, 0.2, 0.2*0.5 + 0.8},
		{"lexical, option", conceptLexical{}, []Option{WithScoreFusion(0.2, 0.8)}, 0.2, 0.2*0.5 + 0.8},
		{"model, margin option", conceptModel{}, []Option{WithMarginFusion(0.2, 0.8)}, 0.2, 0.8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := New(ctx, tc.emb, append([]Option{everyMatch}, tc.opts...)...)
			require.NoError(t, err)
			t.Cleanup(func() { m.Close() })
			_, err = m.AddBatch(ctx, recs)
			require.NoError(t, err)
			hits, err := m.Query(ctx, Query{Text: "automobile trouble", K: 3})
			require.NoError(t, err)
			byID := map[string]Hit{}
			for _, h := range hits {
				byID[h.ID] = h
			}
			require.Contains(t, byID, "meaning")
			assert.Zero(t, byID["meaning"].KeywordRank, "found by meaning alone")
			assert.Equal(t, 1, byID["meaning"].VectorRank)
			assert.InDelta(t, tc.want, byID["meaning"].Score, 1e-6)
			require.Contains(t, byID, "word")
			assert.InDelta(t, tc.wantWord, byID["word"].Score, 1e-3)
		})
	}
	v, k := DefaultWeights(conceptModel{})
	assert.Equal(t, []float64{0.5, 0.5}, []float64{v, k})
	v, k = DefaultWeights(conceptLexical{})
	assert.Equal(t, []float64{DefaultVectorWeight, DefaultKeywordWeight}, []float64{v, k})
}

// angleLexical puts each word it knows at an angle in the plane, so that a
// text's cosine with "zebra" (0°) falls as its word's angle grows. It says
// it is lexical, so that hybrid search fuses by margin.
type angleLexical struct{}

var angles = map[string]float64{"zebra": 0, "alpha": 10, "bravo": 20, "charlie": 30, "delta": 40, "echo": 50, "foxtrot": 60, "golf": 70}

func (angleLexical) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		a := angles[strings.ToLower(strings.Trim(t, ". "))] * math.Pi / 180
		out[i] = []float32{float32(math.Cos(a)), float32(math.Sin(a))}
	}
	return out, nil
}
func (angleLexical) Dim() int         { return 2 }
func (angleLexical) Name() string     { return "angles" }
func (angleLexical) Kind() embed.Kind { return embed.Lexical }

// TestMarginFusion_CrowdKeepsVectorOrder: a query that no record shares a
// word with is ranked by the vector path alone. Margin fusion gives the
// records at or below the median cosine nothing from it, so they tie at 0;
// they keep the vector path's order (ranking.Order), not their ids'.
func TestMarginFusion_CrowdKeepsVectorOrder(t *testing.T) {
	ctx := t.Context()
	m, err := New(ctx, angleLexical{}, everyMatch)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"}
	day := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	var recs []Record
	for i, w := range words {
		// Ids in the reverse order of the cosines.
		recs = append(recs, Record{ID: fmt.Sprintf("r%d", len(words)-i), Time: day.AddDate(0, 0, 2*i), Text: w})
	}
	_, err = m.AddBatch(ctx, recs)
	require.NoError(t, err)
	hits, err := m.Query(ctx, Query{Text: "zebra", K: len(words)})
	require.NoError(t, err)
	var got []string
	for _, h := range hits {
		got = append(got, h.Text)
		assert.Zero(t, h.KeywordRank)
	}
	assert.Equal(t, words, got, "the vector path's order")
	require.Len(t, hits, len(words))
	assert.Zero(t, hits[len(words)-1].Score, "below the median: nothing from the vector path")
	assert.Greater(t, hits[0].Score, hits[1].Score)
}
