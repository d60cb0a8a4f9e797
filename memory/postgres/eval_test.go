package postgres_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/eval"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/postgres"
)

// TestEvalDevSet runs the retrieval evaluation on a data set (the
// development set: AGENTMEM_EVAL_DATA=/work/shared/data/realmem) in the
// in-process store and in PostgreSQL, both ranked by memory/engine, and
// fails if PostgreSQL's recall of any mode at any k differs from the
// in-process one by more than 0.002.
// PostgreSQL runs with the defaults a user gets (an HNSW index from
// DefaultIndexAfter records; the package's other tests build it from the
// first); AGENTMEM_EVAL_INDEX_AFTER=N builds it from N records (0: from
// the first, so that the development set is searched and written through
// the index), and AGENTMEM_EVAL_EXACT=1 runs PostgreSQL's vector path
// without it.
func TestEvalDevSet(t *testing.T) {
	dir := os.Getenv("AGENTMEM_EVAL_DATA")
	if dir == "" {
		t.Skip("set AGENTMEM_EVAL_DATA to an eval data set directory (e.g. /work/shared/data/realmem)")
	}
	ctx := t.Context()
	data, err := eval.Load(dir)
	require.NoError(t, err)
	emb := hashEmb(t, 512)
	base, err := eval.Run(ctx, data, eval.Config{Embedder: emb, NoBM25: true})
	require.NoError(t, err)
	var kv []string
	if os.Getenv("AGENTMEM_EVAL_EXACT") == "1" {
		kv = []string{"exact", "1"}
	}
	indexAfter := postgres.DefaultIndexAfter
	if v := os.Getenv("AGENTMEM_EVAL_INDEX_AFTER"); v != "" {
		indexAfter, err = strconv.Atoi(v)
		require.NoError(t, err, "AGENTMEM_EVAL_INDEX_AFTER")
	}
	url := storeURL(t, kv...)
	pg, err := eval.Run(ctx, data, eval.Config{Embedder: emb, NoBM25: true,
		Open: func(ctx context.Context, header func(memory.Record) string) (eval.Memory, error) {
			return postgres.Open(ctx, url, emb, postgres.WithCreate(), postgres.WithIndexHeader(header), postgres.WithIndexAfter(indexAfter))
		}})
	require.NoError(t, err)
	t.Logf("PostgreSQL with its HNSW index from %d records", indexAfter)
	t.Logf("ingest: in-process %.0f turns/s, PostgreSQL %.0f turns/s", base.TurnsPerSec, pg.TurnsPerSec)
	for i, bm := range base.Modes {
		pm := pg.Modes[i]
		require.Equal(t, bm.Mode, pm.Mode)
		for _, k := range base.Ks {
			t.Logf("%-8s recall@%-2d in-process %.4f  PostgreSQL %.4f  (hit %.4f / %.4f)  p50 %.2f / %.2f ms",
				bm.Mode, k, bm.Overall.Recall[k], pm.Overall.Recall[k], bm.Overall.Hit[k], pm.Overall.Hit[k], bm.P50Millis, pm.P50Millis)
			assert.InDelta(t, bm.Overall.Recall[k], pm.Overall.Recall[k], 0.002, "%s recall@%d", bm.Mode, k)
		}
	}
}

// TestStories runs the fact-change scenario suites (testdata/facts, in
// English and in Chinese) on PostgreSQL as on the file store (eval's
// TestStories_FileStore): with supersede no stale version is found, and a
// question as of a past moment finds the version valid then.
func TestStories(t *testing.T) {
	emb := hashEmb(t, 512)
	for _, suite := range eval.StorySuites {
		stories, err := eval.ReadJSONL[eval.Story]("../../testdata/facts/" + suite.File)
		require.NoError(t, err)
		for _, o := range eval.StoryRuns {
			m := openWith(t, storeURL(t), emb)
			rep, err := eval.RunStories(t.Context(), m, stories, o)
			require.NoError(t, err)
			t.Log(suite.File, rep)
			assert.Empty(t, rep.Problems(), rep.String())
		}
	}
}
