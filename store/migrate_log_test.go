package store_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/longterm"
	"github.com/agentmem/agentmem/store"
)

// TestMigrate_OldLongStoreLog: the previous release's long-term store opens
// and keeps its log format (1) until Migrate rewrites the log in the
// current one, keeping the old log in the backup; the records, the
// previous release's answer and Verify are the same before and after, and
// a second Migrate is refused.
func TestMigrate_OldLongStoreLog(t *testing.T) {
	ctx := t.Context()
	dir := fixture(t, "v1-long")
	oldLog, err := os.ReadFile(filepath.Join(dir, "memories.log"))
	require.NoError(t, err)
	v, err := longterm.ReadLogFormat(dir)
	require.NoError(t, err)
	require.Equal(t, 1, v, "the fixture is the previous release's")

	st := openOldLongStore(t, dir, "inmem")
	_, err = st.Add(ctx, memory.Record{ID: "after", Text: "added by this release to an old log", Namespace: "mara"})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	v, err = longterm.ReadLogFormat(dir)
	require.NoError(t, err)
	assert.Equal(t, 1, v, "opening, adding and the snapshot at Close keep format 1")
	grown, err := os.ReadFile(filepath.Join(dir, "memories.log"))
	require.NoError(t, err)
	before := answers(ctx, t, dir)

	res, err := store.Migrate(ctx, dir, store.MigrateConfig{Logger: quiet()})
	require.NoError(t, err)
	assert.True(t, res.LogRewritten)
	assert.Equal(t, 14, res.Records)
	backup, err := os.ReadFile(filepath.Join(res.Backup, "memories.log"))
	require.NoError(t, err)
	assert.Equal(t, grown, backup, "the old log is kept")
	assert.Equal(t, oldLog, backup[:len(oldLog)])
	v, err = longterm.ReadLogFormat(dir)
	require.NoError(t, err)
	assert.Equal(t, longterm.LogFormat, v)

	rep, err := store.Verify(ctx, dir, store.Config{Logger: quiet()})
	require.NoError(t, err)
	assert.Equal(t, longterm.LogFormat, rep.LogFormat)
	assert.Equal(t, 14, rep.Records)
	assert.Equal(t, before, answers(ctx, t, dir), "the same records and answers")

	_, err = store.Migrate(ctx, dir, store.MigrateConfig{Logger: quiet()})
	assert.ErrorIs(t, err, memory.ErrInvalidArgument, "a second migration is refused")
}

// answers returns every record of the store in dir and its top hit for a
// few queries.
func answers(ctx context.Context, t *testing.T, dir string) map[string]string {
	t.Helper()
	st, err := store.Open(ctx, dir, store.Config{Logger: quiet(), ReadOnly: true})
	require.NoError(t, err)
	defer st.Close()
	out := map[string]string{}
	recs, _, err := st.List(ctx, memory.ListOptions{})
	require.NoError(t, err)
	for _, r := range recs {
		out[r.ID] = r.Namespace + "|" + r.Speaker + "|" + r.Text + "|" + r.Time.String()
	}
	for _, q := range []string{"staging cluster", "badge number", "added by this release"} {
		hits, err := st.Search(ctx, q)
		require.NoError(t, err)
		require.NotEmpty(t, hits, q)
		out["query:"+q] = hits[0].ID
	}
	return out
}
