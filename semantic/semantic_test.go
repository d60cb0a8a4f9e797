package semantic_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/semantic"
	"github.com/agentmem/agentmem/vdb"
)

type note struct {
	Author string `json:"author"`
}

func newHash(t testing.TB) *hash.Embedder {
	t.Helper()
	e, err := hash.New(256)
	require.NoError(t, err)
	return e
}

func TestSemanticMap_PutSearch(t *testing.T) {
	t.Parallel()

	ctx := t.Context()
	m, err := semantic.NewMap[note](newHash(t), newTestDB(t, 256), nil)
	require.NoError(t, err)
	defer m.Close()

	ids, err := m.PutBatch(ctx, []semantic.Entry[note]{
		{Key: "my flight is LH 401 on Friday", Value: note{"user"}},
		{Key: "the cat sleeps on the sofa", Value: note{"user"}},
		{Key: "我喜欢吃四川火锅", Value: note{"用户"}},
	})
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 1, 2}, ids, "ids are handed out in order from 0")
	id, err := m.Put(ctx, "deploy failed with error E1234", note{"ci"})
	require.NoError(t, err)
	assert.Equal(t, int64(3), id)
	assert.Equal(t, 4, m.Len())

	hits, err := m.Search(ctx, "which flight on Friday?", 2, 0.1)
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, int64(0), hits[0].ID)
	assert.Equal(t, "my flight is LH 401 on Friday", hits[0].Key)
	assert.Equal(t, note{"user"}, hits[0].Value)
	assert.Greater(t, hits[0].Score, float32(0.1))

	hits, err = m.Search(ctx, "四川火锅", semantic.DefaultK, semantic.DefaultMinScore)
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "我喜欢吃四川火锅", hits[0].Key)
	assert.Equal(t, note{"用户"}, hits[0].Value)

	hits, err = m.Search(ctx, "completely unrelated zebra", 5, 0.99)
	require.NoError(t, err)
	assert.NotNil(t, hits)
	assert.Empty(t, hits, "nothing above the minimum score is an empty slice")

	e, ok := m.Get(3)
	require.True(t, ok)
	assert.Equal(t, "deploy failed with error E1234", e.Key)
}

func TestSemanticMap_BadInput(t *testing.T) {
	t.Parallel()

	ctx := t.Context()
	db := newTestDB(t, 256)
	m, err := semantic.NewMap[note](newHash(t), db, nil)
	require.NoError(t, err)
	defer m.Close()

	_, err = m.Put(ctx, "  \n", note{})
	require.ErrorIs(t, err, embed.ErrEmptyText)
	_, err = m.PutBatch(ctx, []semantic.Entry[note]{{Key: "fine"}, {Key: ""}})
	require.ErrorIs(t, err, embed.ErrEmptyText)
	assert.Contains(t, err.Error(), "key 1")
	assert.Equal(t, 0, m.Len(), "a batch with an empty key stores nothing")
	assert.Equal(t, 0, db.Len())

	_, err = m.Search(ctx, "", 5, 0)
	require.ErrorIs(t, err, embed.ErrEmptyText)
	for _, k := range []int{0, -3} {
		_, err = m.Search(ctx, "query", k, 0)
		require.ErrorIs(t, err, vdb.ErrInvalidK)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = m.Put(cancelled, "text", note{})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 0, m.Len())

	_, err = semantic.NewMap[note](newHash(t), newTestDB(t, 128), nil)
	require.ErrorIs(t, err, vdb.ErrDimension, "embedder and database dimensions must agree")
}

func TestSemanticMap_Consistency(t *testing.T) {
	t.Parallel()

	ctx := t.Context()
	t.Run("embedding fails", func(t *testing.T) {
		db := newTestDB(t, 256)
		m, err := semantic.NewMap[note](failingEmbedder{newHash(t), errInjected}, db, nil)
		require.NoError(t, err)
		_, err = m.Put(ctx, "text", note{})
		require.ErrorIs(t, err, errInjected)
		assert.Equal(t, 0, m.Len())
		assert.Equal(t, 0, db.Len())
	})
	t.Run("vector add fails", func(t *testing.T) {
		db := newTestDB(t, 256)
		m, err := semantic.NewMap[note](newHash(t), db, nil)
		require.NoError(t, err)
		db.failAdd = fmt.Errorf("disk full: %w", errInjected)
		_, err = m.Put(ctx, "text", note{})
		require.ErrorIs(t, err, errInjected)
		assert.Equal(t, 0, m.Len(), "no index entry is left behind")
		db.failAdd = nil
		id, err := m.Put(ctx, "text", note{})
		require.NoError(t, err)
		assert.Equal(t, int64(0), id, "a failed add spends no id")
	})
	t.Run("index put fails", func(t *testing.T) {
		db := newTestDB(t, 256)
		m, err := semantic.NewMap[note](newHash(t), db, failingIndex[semantic.Entry[note]]{semantic.NewMemIndexMap[semantic.Entry[note]]()})
		require.NoError(t, err)
		_, err = m.Put(ctx, "text", note{})
		require.ErrorIs(t, err, errInjected)
		assert.Equal(t, 0, db.Len(), "the vector is removed again")
	})
}

func TestSemanticMap_DeleteNeverReusesIDs(t *testing.T) {
	t.Parallel()

	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "map.jsonl")
	open := func() (*semantic.SemanticMap[note], *faultyDB) {
		idx, err := semantic.OpenJSONLIndexMap[semantic.Entry[note]](path)
		require.NoError(t, err)
		db := newTestDB(t, 256)
		m, err := semantic.NewMap[note](newHash(t), db, idx)
		require.NoError(t, err)
		require.NoError(t, m.Rebuild(ctx))
		return m, db
	}
	m, db := open()
	_, err := m.PutBatch(ctx, []semantic.Entry[note]{{Key: "alpha"}, {Key: "beta"}, {Key: "gamma"}})
	require.NoError(t, err)
	n, err := m.Delete(ctx, 2, 1, 42)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	assert.False(t, db.has(2), "the vector is deleted too")
	hits, err := m.Search(ctx, "gamma", 5, 0.5)
	require.NoError(t, err)
	assert.Empty(t, hits, "a deleted entry is not found")
	require.NoError(t, m.Close())
	require.NoError(t, m.Close(), "Close is idempotent")
	_, err = m.Put(ctx, "x", note{})
	require.ErrorIs(t, err, semantic.ErrClosed)
	_, err = m.Search(ctx, "x", 1, 0)
	require.ErrorIs(t, err, semantic.ErrClosed)

	m, db = open()
	defer m.Close()
	assert.Equal(t, 1, db.Len(), "Rebuild re-embeds what the log holds")
	id, err := m.Put(ctx, "delta", note{})
	require.NoError(t, err)
	assert.Equal(t, int64(3), id, "deleted ids are never handed out again")
	hits, err = m.Search(ctx, "alpha", 1, 0.5)
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Equal(t, int64(0), hits[0].ID)
}

func TestSemanticMap_Replay(t *testing.T) {
	t.Parallel()

	ctx := t.Context()
	idx, err := semantic.OpenJSONLIndexMap[semantic.Entry[note]](filepath.Join(t.TempDir(), "map.jsonl"))
	require.NoError(t, err)
	db := newTestDB(t, 256)
	m, err := semantic.NewMap[note](newHash(t), db, idx)
	require.NoError(t, err)
	defer m.Close()
	_, err = m.PutBatch(ctx, []semantic.Entry[note]{{Key: "one"}, {Key: "two"}})
	require.NoError(t, err)
	off := idx.Offset()
	_, err = m.Put(ctx, "three", note{})
	require.NoError(t, err)
	_, err = m.Delete(ctx, 0)
	require.NoError(t, err)

	// A database restored from a snapshot taken at off holds ids 0 and 1.
	stale := newTestDB(t, 256)
	vecs, err := newHash(t).Embed(ctx, []string{"one", "two"})
	require.NoError(t, err)
	require.NoError(t, stale.Add(ctx, []int64{0, 1}, vecs))
	m2, err := semantic.NewMap[note](newHash(t), stale, idx)
	require.NoError(t, err)
	ops, err := idx.ReadSince(off)
	require.NoError(t, err)
	require.NoError(t, m2.Replay(ctx, ops))
	assert.False(t, stale.has(0), "a logged delete is replayed")
	assert.True(t, stale.has(1))
	assert.True(t, stale.has(2), "a logged put is re-embedded")
	require.NoError(t, m2.Replay(ctx, ops), "replaying twice is harmless")
	assert.Equal(t, 2, stale.Len())
}

func TestSemanticMap_Concurrent(t *testing.T) {
	t.Parallel()

	ctx := t.Context()
	idx, err := semantic.OpenJSONLIndexMap[semantic.Entry[int]](filepath.Join(t.TempDir(), "map.jsonl"))
	require.NoError(t, err)
	m, err := semantic.NewMap[int](newHash(t), newTestDB(t, 256), idx)
	require.NoError(t, err)
	defer m.Close()

	const writers, perWriter = 4, 20
	var wg sync.WaitGroup
	ids := make([][]int64, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				id, err := m.Put(ctx, fmt.Sprintf("writer %d segment %d", w, i), w*1000+i)
				assert.NoError(t, err)
				ids[w] = append(ids[w], id)
			}
		})
		wg.Go(func() {
			for range perWriter {
				hits, err := m.Search(ctx, fmt.Sprintf("writer %d", w), 3, 0)
				assert.NoError(t, err)
				for _, h := range hits {
					assert.Equal(t, fmt.Sprintf("writer %d segment %d", h.Value/1000, h.Value%1000), h.Key, "a hit's key and value belong together")
				}
			}
		})
	}
	wg.Wait()
	seen := map[int64]bool{}
	for _, ws := range ids {
		for _, id := range ws {
			assert.False(t, seen[id], "id %d handed out twice", id)
			seen[id] = true
		}
	}
	assert.Len(t, seen, writers*perWriter)
	assert.Equal(t, writers*perWriter, m.Len())
}

func TestSemanticSet(t *testing.T) {
	t.Parallel()

	ctx := t.Context()
	s, err := semantic.NewSet(newHash(t), newTestDB(t, 256), nil)
	require.NoError(t, err)
	defer s.Close()
	_, err = s.PutBatch(ctx, []string{"user: book a table for two\nassistant: done, 7pm", "user: 明天北京天气怎么样\nassistant: 晴"})
	require.NoError(t, err)
	hits, err := s.Search(ctx, "北京天气", semantic.DefaultK, semantic.DefaultMinScore)
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Equal(t, hits[0].Key, hits[0].Value, "a set's value is its key")
	assert.Contains(t, hits[0].Value, "北京")
	n, err := s.Delete(ctx, hits[0].ID)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, 1, s.Len())
}

func TestSemanticSet_LogHoldsTextOnce(t *testing.T) {
	t.Parallel()

	path := filepath.Join(t.TempDir(), "set.jsonl")
	idx, err := semantic.OpenJSONLIndexMap[semantic.Entry[struct{}]](path)
	require.NoError(t, err)
	s, err := semantic.NewSet(newHash(t), newTestDB(t, 256), idx)
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Put(t.Context(), "hello")
	require.NoError(t, err)
	ops, err := idx.ReadSince(0)
	require.NoError(t, err)
	assert.Equal(t, []semantic.Op[semantic.Entry[struct{}]]{{ID: 0, Value: semantic.Entry[struct{}]{Key: "hello"}}}, ops)
}
