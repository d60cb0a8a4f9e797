package store_test

import (
	"bytes"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/longterm"
	"github.com/agentmem/agentmem/store"
	"github.com/agentmem/agentmem/vdb"
	_ "github.com/agentmem/agentmem/vdb/inmem"
)

// fixture copies the store testdata/name, written by the previous release
// (agentmem import of 12 conversation rounds and one add, hash:64, inmem),
// into a temporary directory.
func fixture(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.CopyFS(dir, os.DirFS(filepath.Join("testdata", name))))
	return dir
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// What the previous release's `agentmem search --json` answered on the
// v1-short fixture: the top hit's id and score.
var previousAnswers = []struct {
	query string
	id    string
	score float32
}{
	{"badge number", "12", 0.6980101},
	{"where is staging", "2", 0.54130995},
	{"which language is route-planner written in", "1", 0.4508962},
}

func TestOpen_OldShortStoreNeedsMigrate(t *testing.T) {
	dir := fixture(t, "v1-short")
	before, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	require.NoError(t, err)
	_, err = store.Open(t.Context(), dir, store.Config{Logger: quiet()})
	require.ErrorIs(t, err, memory.ErrVersion)
	assert.ErrorContains(t, err, "agentmem migrate --store "+dir)
	after, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	require.NoError(t, err)
	assert.Equal(t, before, after, "opening does not touch the old store")
}

func TestMigrate_OldShortStore(t *testing.T) {
	ctx := t.Context()
	dir := fixture(t, "v1-short")
	oldFiles := map[string][]byte{}
	for _, n := range []string{"manifest.json", "segments.jsonl", "vectors.inmem"} {
		b, err := os.ReadFile(filepath.Join(dir, n))
		require.NoError(t, err)
		oldFiles[n] = b
	}
	res, err := store.Migrate(ctx, dir, store.MigrateConfig{Logger: quiet()})
	require.NoError(t, err)
	assert.Equal(t, 13, res.Segments)
	for n, b := range oldFiles {
		got, err := os.ReadFile(filepath.Join(res.Backup, n))
		require.NoError(t, err, "the old files are kept in the backup")
		assert.Equal(t, b, got, n)
	}
	_, err = os.Stat(filepath.Join(dir, "segments.jsonl"))
	assert.ErrorIs(t, err, fs.ErrNotExist)

	kind, emb, backend, err := store.Info(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"short", "hash:64", "inmem"}, []string{string(kind), emb, backend})

	st, err := store.Open(ctx, dir, store.Config{Logger: quiet()})
	require.NoError(t, err)
	defer st.Close()
	assert.Equal(t, store.Short, st.Kind())
	assert.Equal(t, 13, st.Len())
	for _, a := range previousAnswers {
		hits, err := st.Search(ctx, a.query)
		require.NoError(t, err)
		require.NotEmpty(t, hits, a.query)
		assert.Equal(t, a.id, hits[0].ID, "%s: same answer as the previous release", a.query)
		assert.InDelta(t, a.score, hits[0].Score, 1e-5, a.query)
	}
	rec, ok := st.Get("12")
	require.True(t, ok, "segments keep their ids")
	assert.Equal(t, "user: my badge number is NW-20417", rec.Text)

	_, err = store.Migrate(ctx, dir, store.MigrateConfig{})
	assert.ErrorIs(t, err, memory.ErrInvalidArgument, "a second migration is refused")
}

func TestMigrate_Errors(t *testing.T) {
	ctx := t.Context()
	_, err := store.Migrate(ctx, t.TempDir(), store.MigrateConfig{})
	assert.ErrorIs(t, err, fs.ErrNotExist)

	dir := fixture(t, "v1-short")
	_, err = store.Migrate(ctx, dir, store.MigrateConfig{Embedder: "hash:128"})
	assert.ErrorIs(t, err, memory.ErrEmbedderMismatch)
	_, err = store.Migrate(ctx, dir, store.MigrateConfig{Backend: "no-such-backend"})
	assert.ErrorIs(t, err, vdb.ErrUnknownBackend)
	_, err = os.Stat(filepath.Join(dir, "segments.jsonl"))
	assert.NoError(t, err, "a failed migration leaves the old store")
}

func TestOpen_OldLongStore(t *testing.T) {
	ctx := t.Context()
	dir := fixture(t, "v1-long")
	st := openOldLongStore(t, dir, "inmem")
	defer st.Close()
	assert.Equal(t, 13, st.Len())
	hits, err := st.Query(ctx, memory.Query{Text: "badge number", Namespace: "mara"})
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Equal(t, "091a7b936b7f8c987c64cefd", hits[0].ID)
}

// openOldLongStore opens the long-term store in dir written by the previous
// release and checks what does not depend on its backend: the snapshot
// loads, a search gives the previous release's answer, and the manifest
// now records the kind and the full backend spec.
func openOldLongStore(t *testing.T, dir, backend string) *store.Store {
	t.Helper()
	ctx := t.Context()
	_, _, got, err := store.Info(dir)
	require.NoError(t, err)
	assert.Equal(t, backend, got)
	var logs bytes.Buffer
	st, err := store.Open(ctx, dir, store.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	assert.Equal(t, store.Long, st.Kind())
	hits, err := st.Search(ctx, "staging cluster")
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "c86ce92195a4c4835c143c39", hits[0].ID, "the previous release's answer")
	assert.NotContains(t, logs.String(), "snapshot not used", "the old snapshot loads")

	man, err := longterm.ReadManifest(dir)
	require.NoError(t, err)
	assert.Equal(t, "long", man.Kind, "the manifest now records the kind")
	assert.Equal(t, backend, man.Backend, "and the full backend spec")
	return st
}

func TestOpen_NewStore(t *testing.T) {
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "s")
	_, err := store.Open(ctx, dir, store.Config{})
	require.ErrorIs(t, err, fs.ErrNotExist, "no store, no Create")
	assert.False(t, store.Exists(dir))

	_, err = store.Open(ctx, dir, store.Config{Create: true, Backend: "faiss-missing"})
	require.ErrorIs(t, err, vdb.ErrUnknownBackend)
	_, err = os.Stat(dir)
	assert.ErrorIs(t, err, fs.ErrNotExist, "a backend this build lacks is refused before the store is touched")

	st, err := store.Open(ctx, dir, store.Config{Create: true, Kind: store.Long, Embedder: "hash:32", Logger: quiet()})
	require.NoError(t, err)
	_, err = st.Add(ctx, memory.Record{Text: "the staging cluster is staging-eu-1", Namespace: "ops"})
	require.NoError(t, err)
	require.NoError(t, st.Close())

	_, err = store.Open(ctx, dir, store.Config{Kind: store.Short})
	require.ErrorIs(t, err, memory.ErrInvalidArgument)
	assert.ErrorContains(t, err, "holds a long-term memory store, not short-term")
	_, err = store.Open(ctx, dir, store.Config{Embedder: "hash:64"})
	require.ErrorIs(t, err, memory.ErrEmbedderMismatch)
	_, err = store.Open(ctx, dir, store.Config{Kind: "medium"})
	require.ErrorIs(t, err, memory.ErrInvalidArgument)

	st, err = store.Open(ctx, dir, store.Config{Logger: quiet()})
	require.NoError(t, err)
	defer st.Close()
	hits, err := st.Search(ctx, "staging cluster")
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Equal(t, "ops", hits[0].Namespace)

	_, err = store.Open(ctx, dir, store.Config{})
	assert.ErrorIs(t, err, memory.ErrLocked)
}
