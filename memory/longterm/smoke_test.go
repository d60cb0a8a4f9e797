package longterm

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSmoke(t *testing.T) {
	ctx := t.Context()
	emb := newCounting(t, 256)
	m, err := Open(ctx, t.TempDir(), emb)
	require.NoError(t, err)
	_, err = m.Add(ctx, Record{ID: "a", Text: "We decided to use PostgreSQL. The reason is transactions. Call 138-0013-8000."})
	require.NoError(t, err)
	_, err = m.Add(ctx, Record{ID: "b", Text: "我们决定用PostgreSQL。原因是事务支持更好！"})
	require.NoError(t, err)
	hits, err := m.Query(ctx, Query{Text: "what database did we pick"})
	require.NoError(t, err)
	for _, h := range hits {
		t.Logf("%s %.4f v%d k%d %q", h.ID, h.Score, h.VectorRank, h.KeywordRank, h.Snippets)
	}
	require.NoError(t, m.Close())
}
