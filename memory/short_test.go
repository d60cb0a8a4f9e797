package memory_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/internal/embedtest"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/inmem"
)

// newHash returns the hash embedder of dimension dim, counting what it embeds.
func newHash(t testing.TB, dim int) *embedtest.Counting { return embedtest.CountingHash(t, dim) }

var rounds = []string{
	"user: my flight is LH 401 on Friday\nassistant: noted, LH 401 on Friday",
	"user: I prefer aisle seats\nassistant: I will remember that you prefer aisle seats",
	"user: 我对花生过敏\nassistant: 好的，我记住了你对花生过敏",
	"user: the staging database password rotates every Monday\nassistant: ok",
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestShortMemory_Defaults(t *testing.T) {
	ctx := t.Context()
	mem, err := memory.NewShort(newHash(t, 512))
	require.NoError(t, err)
	defer mem.Close()
	st := mem.Stats()
	assert.Equal(t, 5, st.TopK, "seed 000: search returns 5")
	assert.InDelta(t, 0.3, st.MinScore, 1e-6, "seed 000: minimum similarity 0.3")
	assert.Equal(t, "inmem", st.Backend)
	assert.Equal(t, "hash:512", st.Embedder)
	assert.Equal(t, 512, st.Dim)
	assert.Empty(t, st.Store)

	hits, err := mem.Search(ctx, "anything")
	require.NoError(t, err)
	assert.NotNil(t, hits)
	assert.Empty(t, hits, "an empty memory finds nothing, without error")

	for _, r := range rounds {
		require.NoError(t, mem.Update(ctx, r))
	}
	hits, err = mem.Search(ctx, "flight LH 401")
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, rounds[0], hits[0].Text)
	assert.Equal(t, "0", hits[0].ID)
	assert.False(t, hits[0].Time.IsZero())
	assert.GreaterOrEqual(t, hits[0].Score, float32(0.3))
	for _, h := range hits {
		assert.GreaterOrEqual(t, h.Score, float32(0.3), "no hit below the minimum score")
	}

	hits, err = mem.Search(ctx, "花生过敏")
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, rounds[2], hits[0].Text)
}

func TestShortMemory_Options(t *testing.T) {
	ctx := t.Context()
	mem, err := memory.NewShort(newHash(t, 512), memory.WithTopK(2), memory.WithMinScore(0))
	require.NoError(t, err)
	defer mem.Close()
	_, err = mem.UpdateBatch(ctx, rounds)
	require.NoError(t, err)
	hits, err := mem.Search(ctx, "user assistant")
	require.NoError(t, err)
	assert.Len(t, hits, 2, "WithTopK(2) caps the results; WithMinScore(0) is a legal request")
	assert.Equal(t, float32(0), mem.Stats().MinScore)

	hits, err = mem.SearchN(ctx, "user assistant", 10, -1)
	require.NoError(t, err)
	assert.Len(t, hits, len(rounds))
	hits, err = mem.SearchN(ctx, "user assistant", math.MaxInt, -1)
	require.NoError(t, err)
	assert.Len(t, hits, len(rounds), "a huge k returns everything")

	var opened []int
	mem2, err := memory.NewShort(newHash(t, 64), memory.WithBackend("counting", func(dim int) (vdb.VectorDatabase, error) {
		opened = append(opened, dim)
		return inmem.New(dim)
	}))
	require.NoError(t, err)
	defer mem2.Close()
	assert.Equal(t, []int{64}, opened, "the backend is opened with the embedder's dimension")
	assert.Equal(t, "counting", mem2.Stats().Backend)

	bad := []struct {
		name string
		opt  memory.Option
	}{
		{"top k zero", memory.WithTopK(0)},
		{"top k negative", memory.WithTopK(-1)},
		{"min score above 1", memory.WithMinScore(1.5)},
		{"min score below -1", memory.WithMinScore(-2)},
		{"nil backend", memory.WithBackend("x", nil)},
		{"empty store", memory.WithStore("")},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := memory.NewShort(newHash(t, 64), tt.opt)
			require.ErrorIs(t, err, memory.ErrInvalidOption)
		})
	}
	_, err = memory.NewShort(nil)
	require.ErrorIs(t, err, memory.ErrInvalidOption)

	_, err = memory.NewShort(newHash(t, 64), memory.WithBackend("wrong-dim", func(int) (vdb.VectorDatabase, error) { return inmem.New(32) }))
	require.ErrorIs(t, err, vdb.ErrDimension)
}

func TestShortMemory_BadInput(t *testing.T) {
	ctx := t.Context()
	mem, err := memory.NewShort(newHash(t, 128))
	require.NoError(t, err)
	for _, s := range []string{"", "   ", "\n\t"} {
		require.ErrorIs(t, mem.Update(ctx, s), embed.ErrEmptyText)
		_, err := mem.Search(ctx, s)
		require.ErrorIs(t, err, embed.ErrEmptyText)
	}
	_, err = mem.UpdateBatch(ctx, []string{"ok", ""})
	require.ErrorIs(t, err, embed.ErrEmptyText)
	assert.Equal(t, 0, mem.Len(), "a batch is all or nothing")
	_, err = mem.SearchN(ctx, "q", 0, 0)
	require.ErrorIs(t, err, vdb.ErrInvalidK)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, mem.Update(cancelled, "text"), context.Canceled)

	require.NoError(t, mem.Close())
	require.NoError(t, mem.Close(), "Close is idempotent")
	require.ErrorIs(t, mem.Update(ctx, "text"), memory.ErrClosed)
	_, err = mem.Search(ctx, "text")
	require.ErrorIs(t, err, memory.ErrClosed)
}

func TestShortMemory_Forget(t *testing.T) {
	ctx := t.Context()
	mem, err := memory.NewShort(newHash(t, 128), memory.WithMinScore(0.5))
	require.NoError(t, err)
	defer mem.Close()
	ids, err := mem.UpdateBatch(ctx, []string{"alpha beta", "gamma delta"})
	require.NoError(t, err)
	assert.Equal(t, []string{"0", "1"}, ids)
	n, err := mem.Forget(ctx, "0", "7", "not-an-id")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	hits, err := mem.Search(ctx, "alpha beta")
	require.NoError(t, err)
	assert.Empty(t, hits)
	segs := mem.Segments()
	require.Len(t, segs, 1)
	assert.Equal(t, "1", segs[0].ID)
	assert.Equal(t, "gamma delta", segs[0].Text)
	assert.False(t, segs[0].Time.IsZero())
}

func TestShortMemory_Concurrent(t *testing.T) {
	ctx := t.Context()
	mem, err := memory.OpenShort(ctx, t.TempDir(), newHash(t, 128), memory.WithMinScore(0))
	require.NoError(t, err)
	defer mem.Close()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 10 {
				assert.NoError(t, mem.Update(ctx, fmt.Sprintf("writer %d wrote segment %d", w, i)))
				_, err := mem.Search(ctx, fmt.Sprintf("segment %d", i))
				assert.NoError(t, err)
			}
		})
	}
	wg.Go(func() { assert.NoError(t, mem.Flush(ctx)) })
	wg.Wait()
	assert.Equal(t, 40, mem.Len())
}

func TestOpenShort_Reopen(t *testing.T) {
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "store")
	emb := newHash(t, 256)
	mem, err := memory.OpenShort(ctx, dir, emb, memory.WithLogger(quiet()))
	require.NoError(t, err)
	_, err = mem.UpdateBatch(ctx, rounds)
	require.NoError(t, err)
	before, err := mem.Search(ctx, "aisle seats")
	require.NoError(t, err)
	require.NotEmpty(t, before)
	require.NoError(t, mem.Close())

	man, err := memory.ReadManifest(dir)
	require.NoError(t, err)
	assert.Equal(t, memory.FormatVersion, man.Version)
	assert.Equal(t, "hash:256", man.Embedder)
	assert.Equal(t, 256, man.Dim)
	assert.Equal(t, "inmem", man.Backend)
	require.NotNil(t, man.Snapshot, "Close writes a vector snapshot")
	assert.Equal(t, len(rounds), man.Snapshot.Vectors)
	assert.FileExists(t, filepath.Join(dir, man.Snapshot.File))

	emb2 := newHash(t, 256)
	mem, err = memory.OpenShort(ctx, dir, emb2, memory.WithLogger(quiet()))
	require.NoError(t, err)
	assert.Equal(t, int64(0), emb2.Texts(), "a clean reopen loads the snapshot and embeds nothing")
	after, err := mem.Search(ctx, "aisle seats")
	require.NoError(t, err)
	require.Len(t, after, len(before))
	for i := range before {
		assert.Equal(t, before[i].ID, after[i].ID)
		assert.Equal(t, before[i].Text, after[i].Text)
		assert.InDelta(t, before[i].Score, after[i].Score, 1e-6)
		assert.True(t, before[i].Time.Equal(after[i].Time), "the time survives the restart")
	}
	ids, err := mem.UpdateBatch(ctx, []string{"one more"})
	require.NoError(t, err)
	assert.Equal(t, []string{fmt.Sprint(len(rounds))}, ids, "ids continue after a restart")
	require.NoError(t, mem.Close())
}

func TestOpenShort_ReplaysLogAfterSnapshot(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	mem, err := memory.OpenShort(ctx, dir, newHash(t, 256), memory.WithLogger(quiet()))
	require.NoError(t, err)
	_, err = mem.UpdateBatch(ctx, rounds)
	require.NoError(t, err)
	require.NoError(t, mem.Flush(ctx))
	require.NoError(t, mem.Update(ctx, "user: remind me to water the plants\nassistant: sure"))
	_, err = mem.Forget(ctx, "1")
	require.NoError(t, err)
	assert.Positive(t, mem.Stats().Unsnapshotted)
	// Simulate a crash: the log has two records the snapshot lacks.
	snapshotBeforeCrash(t, dir, func() { memory.Abandon(mem) })

	emb := newHash(t, 256)
	mem, err = memory.OpenShort(ctx, dir, emb, memory.WithLogger(quiet()))
	require.NoError(t, err)
	defer mem.Close()
	assert.Equal(t, int64(1), emb.Texts(), "only the segment logged after the snapshot is re-embedded")
	assert.Equal(t, len(rounds), mem.Len())
	hits, err := mem.Search(ctx, "water the plants")
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Contains(t, hits[0].Text, "water the plants")
	hits, err = mem.SearchN(ctx, "aisle seats", 10, 0.5)
	require.NoError(t, err)
	assert.Empty(t, hits, "a segment forgotten after the snapshot stays forgotten")
}

// snapshotBeforeCrash runs crash and checks that it left the manifest alone.
func snapshotBeforeCrash(t *testing.T, dir string, crash func()) {
	t.Helper()
	before, err := os.ReadFile(filepath.Join(dir, memory.ManifestFile))
	require.NoError(t, err)
	crash()
	after, err := os.ReadFile(filepath.Join(dir, memory.ManifestFile))
	require.NoError(t, err)
	require.Equal(t, string(before), string(after))
}

func TestOpenShort_DamagedSnapshotIsRebuilt(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	mem, err := memory.OpenShort(ctx, dir, newHash(t, 256), memory.WithLogger(quiet()))
	require.NoError(t, err)
	_, err = mem.UpdateBatch(ctx, rounds)
	require.NoError(t, err)
	require.NoError(t, mem.Close())
	man, err := memory.ReadManifest(dir)
	require.NoError(t, err)
	snap := filepath.Join(dir, man.Snapshot.File)
	data, err := os.ReadFile(snap)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(snap, data[:len(data)/2], 0o644))

	var logs bytes.Buffer
	emb := newHash(t, 256)
	mem, err = memory.OpenShort(ctx, dir, emb, memory.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	require.NoError(t, err)
	defer mem.Close()
	assert.Contains(t, logs.String(), "snapshot unusable")
	assert.Equal(t, int64(len(rounds)), emb.Texts(), "every segment is re-embedded")
	hits, err := mem.Search(ctx, "LH 401")
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, rounds[0], hits[0].Text)
}

func TestOpenShort_SwitchBackend(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	mem, err := memory.OpenShort(ctx, dir, newHash(t, 128), memory.WithLogger(quiet()))
	require.NoError(t, err)
	_, err = mem.UpdateBatch(ctx, rounds)
	require.NoError(t, err)
	require.NoError(t, mem.Close())

	emb := newHash(t, 128)
	mem, err = memory.OpenShort(ctx, dir, emb, memory.WithLogger(quiet()),
		memory.WithBackend("other", func(dim int) (vdb.VectorDatabase, error) { return inmem.New(dim) }))
	require.NoError(t, err)
	assert.Equal(t, int64(len(rounds)), emb.Texts(), "another backend is filled by re-embedding")
	require.NoError(t, mem.Close())
	man, err := memory.ReadManifest(dir)
	require.NoError(t, err)
	assert.Equal(t, "other", man.Backend)
	assert.Equal(t, "vectors.other", man.Snapshot.File)
	assert.NoFileExists(t, filepath.Join(dir, "vectors.inmem"), "the old backend's snapshot is removed")
}

func TestOpenShort_Errors(t *testing.T) {
	ctx := t.Context()
	newStore := func(t *testing.T) string {
		dir := t.TempDir()
		mem, err := memory.OpenShort(ctx, dir, newHash(t, 256), memory.WithLogger(quiet()))
		require.NoError(t, err)
		_, err = mem.UpdateBatch(ctx, rounds)
		require.NoError(t, err)
		require.NoError(t, mem.Close())
		return dir
	}
	editManifest := func(t *testing.T, dir string, edit func(m map[string]any)) {
		path := filepath.Join(dir, memory.ManifestFile)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(data, &m))
		edit(m)
		data, err = json.Marshal(m)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, data, 0o644))
	}

	t.Run("another embedder", func(t *testing.T) {
		dir := newStore(t)
		_, err := memory.OpenShort(ctx, dir, newHash(t, 512))
		require.ErrorIs(t, err, memory.ErrEmbedderMismatch)
		assert.Contains(t, err.Error(), "hash:256", "the error names the store's embedder")
		assert.Contains(t, err.Error(), "hash:512", "and the one it was opened with")
	})
	t.Run("same name another dimension", func(t *testing.T) {
		dir := newStore(t)
		editManifest(t, dir, func(m map[string]any) { m["dim"] = 300 })
		_, err := memory.OpenShort(ctx, dir, newHash(t, 256))
		require.ErrorIs(t, err, memory.ErrEmbedderMismatch)
		assert.Contains(t, err.Error(), "300")
	})
	t.Run("newer format", func(t *testing.T) {
		dir := newStore(t)
		editManifest(t, dir, func(m map[string]any) { m["version"] = memory.FormatVersion + 1; m["embedder"] = 7 })
		_, err := memory.OpenShort(ctx, dir, newHash(t, 256))
		require.ErrorIs(t, err, memory.ErrFormatVersion, "the version is checked before anything else")
		assert.Contains(t, err.Error(), memory.ManifestFile)
	})
	t.Run("corrupt manifest", func(t *testing.T) {
		dir := newStore(t)
		require.NoError(t, os.WriteFile(filepath.Join(dir, memory.ManifestFile), []byte("{not json"), 0o644))
		_, err := memory.OpenShort(ctx, dir, newHash(t, 256))
		require.ErrorIs(t, err, memory.ErrCorruptStore)
	})
	t.Run("missing manifest", func(t *testing.T) {
		dir := newStore(t)
		require.NoError(t, os.Remove(filepath.Join(dir, memory.ManifestFile)))
		_, err := memory.OpenShort(ctx, dir, newHash(t, 256))
		require.ErrorIs(t, err, memory.ErrCorruptStore)
	})
	t.Run("corrupt log line", func(t *testing.T) {
		dir := newStore(t)
		path := filepath.Join(dir, memory.SegmentsFile)
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.WriteString("garbage\n{\"id\":9,\"deleted\":true}\n")
		require.NoError(t, err)
		require.NoError(t, f.Close())
		_, err = memory.OpenShort(ctx, dir, newHash(t, 256))
		require.ErrorIs(t, err, memory.ErrCorruptStore)
		assert.Contains(t, err.Error(), fmt.Sprintf("%s:%d", path, len(rounds)+1), "the error names file and line")
	})
	t.Run("torn log tail is repaired", func(t *testing.T) {
		dir := newStore(t)
		path := filepath.Join(dir, memory.SegmentsFile)
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.WriteString(`{"id":4,"value":{"key":"half a wri`)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		var logs bytes.Buffer
		mem, err := memory.OpenShort(ctx, dir, newHash(t, 256), memory.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		require.NoError(t, err)
		defer mem.Close()
		assert.Equal(t, len(rounds), mem.Len())
		assert.Contains(t, logs.String(), "repaired torn last line")
		assert.FileExists(t, path+".broken")
	})
	t.Run("locked by another open", func(t *testing.T) {
		dir := newStore(t)
		mem, err := memory.OpenShort(ctx, dir, newHash(t, 256))
		require.NoError(t, err)
		_, err = memory.OpenShort(ctx, dir, newHash(t, 256))
		require.ErrorIs(t, err, memory.ErrStoreLocked)
		require.NoError(t, mem.Close())
		mem, err = memory.OpenShort(ctx, dir, newHash(t, 256))
		require.NoError(t, err, "Close releases the lock")
		require.NoError(t, mem.Close())
	})
	t.Run("store is a file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "file")
		require.NoError(t, os.WriteFile(path, nil, 0o644))
		_, err := memory.OpenShort(ctx, path, newHash(t, 256))
		require.Error(t, err)
	})
	t.Run("bad backend name", func(t *testing.T) {
		_, err := memory.OpenShort(ctx, t.TempDir(), newHash(t, 256),
			memory.WithBackend("../x", func(dim int) (vdb.VectorDatabase, error) { return inmem.New(dim) }))
		require.ErrorIs(t, err, memory.ErrInvalidOption)
	})
}

// noPersist hides the backend's Persister, like a backend that cannot save.
type noPersist struct{ vdb.VectorDatabase }

func TestOpenShort_BackendWithoutSnapshots(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	open := memory.WithBackend("plain", func(dim int) (vdb.VectorDatabase, error) {
		db, err := inmem.New(dim)
		return noPersist{db}, err
	})
	mem, err := memory.OpenShort(ctx, dir, newHash(t, 64), open)
	require.NoError(t, err)
	_, err = mem.UpdateBatch(ctx, rounds)
	require.NoError(t, err)
	require.NoError(t, mem.Close(), "a backend that cannot save is not an error")
	man, err := memory.ReadManifest(dir)
	require.NoError(t, err)
	assert.Nil(t, man.Snapshot)

	emb := newHash(t, 64)
	mem, err = memory.OpenShort(ctx, dir, emb, open)
	require.NoError(t, err)
	defer mem.Close()
	assert.Equal(t, int64(len(rounds)), emb.Texts(), "segments are re-embedded from the log instead")
	assert.Equal(t, len(rounds), mem.Stats().Vectors)
}
