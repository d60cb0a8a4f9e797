package short_test

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

	"github.com/agentmem/agentmem/internal/embedtest"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/longterm"
	"github.com/agentmem/agentmem/memory/short"
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

// Test backends, opened by spec through the registry as real ones are.
var (
	openedMu  sync.Mutex
	openedDim []int // dimensions the "test-counting" backend was opened with
)

// noPersist hides the backend's Persister, like a backend that cannot save.
type noPersist struct{ vdb.VectorDatabase }

func init() {
	vdb.Register("test-counting", func(_ context.Context, cfg vdb.Config) (vdb.VectorDatabase, error) {
		openedMu.Lock()
		openedDim = append(openedDim, cfg.Dim)
		openedMu.Unlock()
		return inmem.New(cfg.Dim)
	})
	vdb.Register("test-wrong-dim", func(context.Context, vdb.Config) (vdb.VectorDatabase, error) { return inmem.New(32) })
	vdb.Register("test-plain", func(_ context.Context, cfg vdb.Config) (vdb.VectorDatabase, error) {
		db, err := inmem.New(cfg.Dim)
		return noPersist{db}, err
	})
}

func TestMemory_Defaults(t *testing.T) {
	ctx := t.Context()
	mem, err := short.New(ctx, newHash(t, 512))
	require.NoError(t, err)
	defer mem.Close()
	info := mem.Info()
	assert.Equal(t, 5, info.TopK, "seed 000: search returns 5")
	assert.InDelta(t, 0.3, info.MinScore, 1e-6, "seed 000: minimum similarity 0.3")
	assert.Equal(t, "inmem", info.Backend)
	assert.Equal(t, "hash:512", info.Embedder)
	assert.Equal(t, 512, info.Dim)
	assert.Equal(t, "short", info.Kind)
	assert.Empty(t, info.Dir)

	hits, err := mem.Search(ctx, "anything")
	require.NoError(t, err)
	assert.NotNil(t, hits)
	assert.Empty(t, hits, "an empty memory finds nothing, without error")

	for _, r := range rounds {
		require.NoError(t, mem.Update(ctx, r))
	}
	assert.Equal(t, len(rounds), mem.Info().Vectors, "one segment is one vector: segments are not chunked")
	hits, err = mem.Search(ctx, "flight LH 401")
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, rounds[0], hits[0].Text)
	assert.NotEmpty(t, hits[0].ID)
	assert.Nil(t, hits[0].Snippets, "the whole segment is the match")
	assert.False(t, hits[0].Time.IsZero())
	for _, h := range hits {
		assert.GreaterOrEqual(t, h.Score, float32(0.3), "no hit below the minimum score")
		assert.LessOrEqual(t, h.Score, float32(1), "scores are cosine similarities")
	}

	hits, err = mem.Search(ctx, "花生过敏")
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, rounds[2], hits[0].Text)
}

func TestMemory_Options(t *testing.T) {
	ctx := t.Context()
	mem, err := short.New(ctx, newHash(t, 512), short.WithTopK(2), short.WithMinScore(0))
	require.NoError(t, err)
	defer mem.Close()
	_, err = mem.UpdateBatch(ctx, rounds)
	require.NoError(t, err)
	hits, err := mem.Search(ctx, "user assistant")
	require.NoError(t, err)
	assert.Len(t, hits, 2, "WithTopK(2) caps the results; WithMinScore(0) is a legal request")
	assert.Equal(t, float32(0), mem.Info().MinScore)

	hits, err = mem.SearchN(ctx, "user assistant", 10, -1)
	require.NoError(t, err)
	assert.Len(t, hits, len(rounds))
	hits, err = mem.SearchN(ctx, "user assistant", math.MaxInt32, -1)
	require.NoError(t, err)
	assert.Len(t, hits, len(rounds), "a huge k returns everything")

	openedMu.Lock()
	openedDim = nil // another test's, or this one's in an earlier run (-count)
	openedMu.Unlock()
	mem2, err := short.New(ctx, newHash(t, 64), short.WithBackend("test-counting"))
	require.NoError(t, err)
	defer mem2.Close()
	require.NoError(t, mem2.Update(ctx, "hello"))
	openedMu.Lock()
	assert.Equal(t, []int{64}, openedDim, "the backend is opened with the embedder's dimension")
	openedMu.Unlock()
	assert.Equal(t, "test-counting", mem2.Info().Backend)

	bad := []struct {
		name string
		opt  short.Option
	}{
		{"top k zero", short.WithTopK(0)},
		{"top k negative", short.WithTopK(-1)},
		{"min score above 1", short.WithMinScore(1.5)},
		{"min score below -1", short.WithMinScore(-2)},
		{"min score NaN", short.WithMinScore(float32(math.NaN()))},
		{"empty backend", short.WithBackend("")},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := short.New(ctx, newHash(t, 64), tt.opt)
			require.ErrorIs(t, err, memory.ErrInvalidArgument)
		})
	}
	_, err = short.New(ctx, nil)
	require.ErrorIs(t, err, memory.ErrInvalidArgument)

	wrong, err := short.New(ctx, newHash(t, 64), short.WithBackend("test-wrong-dim"))
	require.NoError(t, err, "indexes are opened on first use")
	require.ErrorIs(t, wrong.Update(ctx, "hello"), vdb.ErrDimension)
}

func TestMemory_BadInput(t *testing.T) {
	ctx := t.Context()
	mem, err := short.New(ctx, newHash(t, 128))
	require.NoError(t, err)
	for _, s := range []string{"", "   ", "\n\t"} {
		require.ErrorIs(t, mem.Update(ctx, s), memory.ErrEmptyText)
		hits, err := mem.Search(ctx, s)
		require.NoError(t, err, "a question with nothing to look for finds nothing")
		assert.Empty(t, hits)
	}
	_, err = mem.UpdateBatch(ctx, []string{"ok", ""})
	require.ErrorIs(t, err, memory.ErrEmptyText)
	assert.Equal(t, 0, mem.Len(), "a batch is all or nothing")
	_, err = mem.SearchN(ctx, "q", 0, 0)
	require.ErrorIs(t, err, memory.ErrInvalidArgument)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, mem.Update(cancelled, "text"), context.Canceled)

	require.NoError(t, mem.Close())
	require.NoError(t, mem.Close(), "Close is idempotent")
	require.ErrorIs(t, mem.Update(ctx, "text"), memory.ErrClosed)
	_, err = mem.Search(ctx, "text")
	require.ErrorIs(t, err, memory.ErrClosed)
}

func TestMemory_Forget(t *testing.T) {
	ctx := t.Context()
	mem, err := short.New(ctx, newHash(t, 128), short.WithMinScore(0.5))
	require.NoError(t, err)
	defer mem.Close()
	ids, err := mem.UpdateBatch(ctx, []string{"alpha beta", "gamma delta"})
	require.NoError(t, err)
	require.Len(t, ids, 2)
	require.NoError(t, mem.Forget(ctx, ids[0]))
	require.ErrorIs(t, mem.Forget(ctx, "not-an-id"), memory.ErrNotFound)
	hits, err := mem.Search(ctx, "alpha beta")
	require.NoError(t, err)
	assert.Empty(t, hits)
	segs, err := mem.Segments(ctx)
	require.NoError(t, err)
	require.Len(t, segs, 1)
	assert.Equal(t, ids[1], segs[0].ID)
	assert.Equal(t, "gamma delta", segs[0].Text)
	assert.False(t, segs[0].Time.IsZero())
}

func TestMemory_Concurrent(t *testing.T) {
	ctx := t.Context()
	mem, err := short.Open(ctx, t.TempDir(), newHash(t, 128), short.WithMinScore(0))
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

func TestOpen_Reopen(t *testing.T) {
	ctx := t.Context()
	dir, before := seededStore(t, 256)
	man, err := longterm.ReadManifest(dir)
	require.NoError(t, err)
	assert.Equal(t, longterm.Manifest{Format: 1, Embedder: "hash:256", Dim: 256, Backend: "inmem", Kind: "short"}, man)
	assert.FileExists(t, filepath.Join(dir, "snapshot.json"), "Close writes a snapshot")

	emb2 := newHash(t, 256)
	mem, err := short.Open(ctx, dir, emb2, short.WithLogger(quiet()))
	require.NoError(t, err)
	assert.Equal(t, int64(0), emb2.Texts(), "a reopen embeds nothing")
	after, err := mem.Search(ctx, "aisle seats")
	require.NoError(t, err)
	require.Len(t, after, len(before))
	for i := range before {
		assert.Equal(t, before[i].ID, after[i].ID)
		assert.Equal(t, before[i].Text, after[i].Text)
		assert.InDelta(t, before[i].Score, after[i].Score, 1e-6)
		assert.True(t, before[i].Time.Equal(after[i].Time), "the time survives the restart")
	}
	require.NoError(t, mem.Close())

	_, err = longterm.Open(ctx, dir, newHash(t, 256))
	require.ErrorIs(t, err, memory.ErrInvalidArgument, "a short-term store does not open as a long-term one")
}

// copyStore copies the files of the open store in dir, as a crash at this
// moment would leave them (every write is fsynced; the lock is not copied).
func copyStore(t *testing.T, dir string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if e.Name() == "LOCK" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644))
	}
	return dst
}

func TestOpen_ReplaysLogAfterSnapshot(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	mem, err := short.Open(ctx, dir, newHash(t, 256), short.WithLogger(quiet()))
	require.NoError(t, err)
	defer mem.Close()
	ids, err := mem.UpdateBatch(ctx, rounds)
	require.NoError(t, err)
	require.NoError(t, mem.Flush(ctx))
	require.NoError(t, mem.Update(ctx, "user: remind me to water the plants\nassistant: sure"))
	require.NoError(t, mem.Forget(ctx, ids[1]))
	// A crash now: the log has two records the snapshot lacks.
	crashed := copyStore(t, dir)

	emb := newHash(t, 256)
	mem2, err := short.Open(ctx, crashed, emb, short.WithLogger(quiet()))
	require.NoError(t, err)
	defer mem2.Close()
	assert.Equal(t, int64(0), emb.Texts(), "the log carries the vectors: nothing is re-embedded")
	assert.Equal(t, len(rounds), mem2.Len())
	hits, err := mem2.Search(ctx, "water the plants")
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Contains(t, hits[0].Text, "water the plants")
	hits, err = mem2.SearchN(ctx, "aisle seats", 10, 0.5)
	require.NoError(t, err)
	assert.Empty(t, hits, "a segment forgotten after the snapshot stays forgotten")
}

// seededStore returns a closed store of the hash embedder of dimension
// dim holding rounds, and what it answered to "aisle seats" before Close.
func seededStore(t *testing.T, dim int, opts ...short.Option) (string, []memory.Hit) {
	t.Helper()
	dir := t.TempDir()
	mem, err := short.Open(t.Context(), dir, newHash(t, dim), append(opts, short.WithLogger(quiet()))...)
	require.NoError(t, err)
	_, err = mem.UpdateBatch(t.Context(), rounds)
	require.NoError(t, err)
	hits, err := mem.Search(t.Context(), "aisle seats")
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	require.NoError(t, mem.Close())
	return dir, hits
}

func TestOpen_DamagedSnapshotIsAnErrorAndRepairable(t *testing.T) {
	ctx := t.Context()
	dir, _ := seededStore(t, 256)
	_, files, err := longterm.SnapshotVectorFiles(dir)
	require.NoError(t, err)
	snap := files[longterm.DefaultNamespace]
	data, err := os.ReadFile(snap)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(snap, data[:len(data)/2], 0o644))

	emb := newHash(t, 256)
	_, err = short.Open(ctx, dir, emb, short.WithLogger(quiet()))
	require.ErrorIs(t, err, memory.ErrCorrupt, "a damaged snapshot is named, not silently replaced")
	assert.Contains(t, err.Error(), snap)
	rep, err := longterm.Repair(ctx, dir, emb, append(short.Options(), short.WithLogger(quiet()))...)
	require.NoError(t, err)
	assert.Equal(t, len(rounds), rep.RecordsAfter)
	mem, err := short.Open(ctx, dir, emb, short.WithLogger(quiet()))
	require.NoError(t, err)
	defer mem.Close()
	assert.Equal(t, int64(0), emb.Texts(), "the index is rebuilt from the log, without re-embedding")
	hits, err := mem.Search(ctx, "LH 401")
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, rounds[0], hits[0].Text)
}

func TestOpen_SwitchBackend(t *testing.T) {
	ctx := t.Context()
	dir, _ := seededStore(t, 128)
	emb := newHash(t, 128)
	mem, err := short.Open(ctx, dir, emb, short.WithLogger(quiet()), short.WithBackend("test-counting"))
	require.NoError(t, err)
	assert.Equal(t, int64(0), emb.Texts(), "another backend is filled from the log, without re-embedding")
	assert.Equal(t, len(rounds), mem.Info().Vectors)
	require.NoError(t, mem.Close())
	man, err := longterm.ReadManifest(dir)
	require.NoError(t, err)
	assert.Equal(t, "test-counting", man.Backend, "the manifest records the backend")
	backend, _, err := longterm.SnapshotVectorFiles(dir)
	require.NoError(t, err)
	assert.Equal(t, "test-counting", backend)
}

func TestOpen_Errors(t *testing.T) {
	ctx := t.Context()
	newStore := func(t *testing.T) string { dir, _ := seededStore(t, 256); return dir }
	editManifest := func(t *testing.T, dir string, edit func(m map[string]any)) {
		path := filepath.Join(dir, "manifest.json")
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
		_, err := short.Open(ctx, dir, newHash(t, 512))
		require.ErrorIs(t, err, memory.ErrEmbedderMismatch)
		assert.Contains(t, err.Error(), "hash:256", "the error names the store's embedder")
		assert.Contains(t, err.Error(), "hash:512", "and the one it was opened with")
	})
	t.Run("same name another dimension", func(t *testing.T) {
		dir := newStore(t)
		editManifest(t, dir, func(m map[string]any) { m["dim"] = 300 })
		_, err := short.Open(ctx, dir, newHash(t, 256))
		require.ErrorIs(t, err, memory.ErrEmbedderMismatch)
		assert.Contains(t, err.Error(), "300")
	})
	t.Run("newer format", func(t *testing.T) {
		dir := newStore(t)
		editManifest(t, dir, func(m map[string]any) { m["format"] = 99; m["embedder"] = 7 })
		_, err := short.Open(ctx, dir, newHash(t, 256))
		require.ErrorIs(t, err, memory.ErrVersion, "the version is checked before anything else")
		assert.Contains(t, err.Error(), "manifest.json")
	})
	t.Run("previous release's store", func(t *testing.T) {
		dir := newStore(t)
		editManifest(t, dir, func(m map[string]any) { m["format"] = "agentmem.short"; m["version"] = 1 })
		_, err := short.Open(ctx, dir, newHash(t, 256))
		require.ErrorIs(t, err, memory.ErrVersion)
		assert.Contains(t, err.Error(), "agentmem migrate --store")
	})
	t.Run("corrupt manifest", func(t *testing.T) {
		dir := newStore(t)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "manifest.json"), []byte("{not json"), 0o644))
		_, err := short.Open(ctx, dir, newHash(t, 256))
		require.ErrorIs(t, err, memory.ErrCorrupt)
	})
	t.Run("missing manifest", func(t *testing.T) {
		dir := newStore(t)
		require.NoError(t, os.Remove(filepath.Join(dir, "manifest.json")))
		_, err := short.Open(ctx, dir, newHash(t, 256))
		require.ErrorIs(t, err, memory.ErrCorrupt)
	})
	t.Run("corrupt log record", func(t *testing.T) {
		dir := newStore(t)
		require.NoError(t, os.Remove(filepath.Join(dir, "snapshot.json")))
		path := filepath.Join(dir, "memories.log")
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		data[len(data)/2] ^= 0xff // a flipped byte in the middle: not a torn tail
		require.NoError(t, os.WriteFile(path, data, 0o644))
		_, err = short.Open(ctx, dir, newHash(t, 256))
		require.ErrorIs(t, err, memory.ErrCorrupt)
		assert.Contains(t, err.Error(), path, "the error names the file")
	})
	t.Run("torn log tail is repaired", func(t *testing.T) {
		dir := newStore(t)
		path := filepath.Join(dir, "memories.log")
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.Write([]byte{0x20, 0, 0, 0, 1, 2, 3})
		require.NoError(t, err)
		require.NoError(t, f.Close())
		var logs bytes.Buffer
		mem, err := short.Open(ctx, dir, newHash(t, 256), short.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		require.NoError(t, err)
		defer mem.Close()
		assert.Equal(t, len(rounds), mem.Len())
		assert.Contains(t, logs.String(), "torn")
		assert.FileExists(t, path+".broken")
	})
	t.Run("locked by another open", func(t *testing.T) {
		dir := newStore(t)
		mem, err := short.Open(ctx, dir, newHash(t, 256))
		require.NoError(t, err)
		_, err = short.Open(ctx, dir, newHash(t, 256))
		require.ErrorIs(t, err, memory.ErrLocked)
		require.NoError(t, mem.Close())
		mem, err = short.Open(ctx, dir, newHash(t, 256))
		require.NoError(t, err, "Close releases the lock")
		require.NoError(t, mem.Close())
	})
	t.Run("store is a file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "file")
		require.NoError(t, os.WriteFile(path, nil, 0o644))
		_, err := short.Open(ctx, path, newHash(t, 256))
		require.Error(t, err)
	})
}

func TestOpen_BackendWithoutSnapshots(t *testing.T) {
	ctx := t.Context()
	dir, _ := seededStore(t, 64, short.WithBackend("test-plain")) // Close: "a backend that cannot save is not an error"
	assert.NoFileExists(t, filepath.Join(dir, "snapshot.json"))

	emb := newHash(t, 64)
	mem, err := short.Open(ctx, dir, emb, short.WithBackend("test-plain"), short.WithLogger(quiet()))
	require.NoError(t, err)
	defer mem.Close()
	assert.Equal(t, int64(0), emb.Texts(), "the log is replayed instead, without re-embedding")
	assert.Equal(t, len(rounds), mem.Info().Vectors)
}
