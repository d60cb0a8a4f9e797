package longterm

import (
	"context"
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
			m, err := New(ctx, tc.emb, tc.opts...)
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
