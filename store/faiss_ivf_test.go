//go:build faiss

package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/store"
	"github.com/agentmem/agentmem/vdb/faiss"
)

// notes returns n records with ids prefix0…, in namespace ns.
func notes(prefix, ns string, n int) []memory.Record {
	recs := make([]memory.Record, n)
	for i := range recs {
		recs[i] = memory.Record{
			ID: fmt.Sprint(prefix, i), Namespace: ns,
			Text: fmt.Sprintf("user: note %s-%d, the locker code for shelf %d is %05d", prefix, i, i, 7919*i%100000),
		}
	}
	return recs
}

// TestAdd_FaissUntrainableIVF is issue 10's case with the real Faiss
// backend: an IVF4,Flat index cannot train on a first batch of 70 texts (it
// trains on 39 vectors per list: 156, and the batch brings 70), and the
// store must say so truthfully — an error, no id
// reported, nothing stored (the issue saw "stored 0 of 70" while all 70
// were), nothing left in the log — so that retries neither duplicate nor
// lose, in this process and in the next.
func TestAdd_FaissUntrainableIVF(t *testing.T) {
	for _, kind := range []store.Kind{store.Long, store.Short} {
		t.Run(string(kind), func(t *testing.T) {
			ctx := t.Context()
			dir := filepath.Join(t.TempDir(), "s")
			cfg := store.Config{Create: true, Kind: kind, Embedder: "hash:64", Backend: "faiss:IVF4,Flat", Logger: quiet()}
			st, err := store.Open(ctx, dir, cfg)
			require.NoError(t, err)
			log0 := fileSize(t, filepath.Join(dir, "memories.log"))
			for attempt := range 3 {
				ids, err := st.AddBatch(ctx, notes("t", "mara", 70))
				require.ErrorIs(t, err, faiss.ErrNotTrained, "attempt %d", attempt)
				assert.Empty(t, ids, "attempt %d: no id is reported stored", attempt)
				assert.Equal(t, 0, st.Len(), "attempt %d: and none is", attempt)
				assert.Equal(t, log0, fileSize(t, filepath.Join(dir, "memories.log")), "attempt %d: nothing stays in the log", attempt)
			}
			_, err = st.Add(ctx, memory.Record{ID: "one", Text: "user: one more note", Namespace: "mara"})
			require.ErrorIs(t, err, faiss.ErrNotTrained)
			require.NoError(t, st.Close())

			st, err = store.Open(ctx, dir, store.Config{Logger: quiet()})
			require.NoError(t, err)
			assert.Equal(t, 0, st.Len(), "a new process finds nothing either")
			require.NoError(t, st.Close())
			rep, err := store.Verify(ctx, dir, store.Config{Logger: quiet()})
			require.NoError(t, err)
			assert.Equal(t, 0, rep.Records)
			assert.Equal(t, 0, rep.LogFrames)
		})
	}
}

// TestAdd_FaissIVFRetry: a batch trains a namespace's IVF index with its
// own vectors (the store adds a batch's vectors in one call, so IVF works
// through the store and the CLI), a retry of it replaces rather than
// duplicates, a batch that reaches a namespace whose index cannot train
// yet is refused whole with the stored records untouched, and a new
// process finds exactly what was acknowledged.
func TestAdd_FaissIVFRetry(t *testing.T) {
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "s")
	cfg := store.Config{Create: true, Kind: store.Long, Embedder: "hash:64", Backend: "faiss:IVF4,Flat?trainSize=4", Logger: quiet()}
	st, err := store.Open(ctx, dir, cfg)
	require.NoError(t, err)
	_, err = st.Add(ctx, memory.Record{ID: "one", Text: "user: a single note", Namespace: "mara"})
	require.ErrorIs(t, err, faiss.ErrNotTrained, "one short record's one vector cannot train 4 lists")
	require.Equal(t, 0, st.Len())

	first := notes("t", "mara", 70)
	for range 2 {
		ids, err := st.AddBatch(ctx, first)
		require.NoError(t, err, "70 vectors train 4 lists of trainSize 4")
		assert.Len(t, ids, 70)
		assert.Equal(t, 70, st.Len())
	}
	ids, err := st.AddBatch(ctx, append(notes("t", "mara", 3), notes("v", "other", 5)...))
	require.ErrorIs(t, err, faiss.ErrNotTrained, "namespace other has an index of its own, and 5 vectors do not train it")
	assert.Empty(t, ids)
	assert.Equal(t, 70, st.Len())
	_, ok := st.Get("v0")
	assert.False(t, ok)
	require.NoError(t, st.Close())

	st, err = store.Open(ctx, dir, store.Config{Logger: quiet()})
	require.NoError(t, err)
	assert.Equal(t, 70, st.Len(), "a new process finds exactly what was acknowledged")
	hits, err := st.Query(ctx, memory.Query{Text: "note t-42, the locker code for shelf 42", Namespace: "mara"})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "t42", hits[0].ID)
	require.NoError(t, st.Close())
	rep, err := store.Verify(ctx, dir, store.Config{Logger: quiet()})
	require.NoError(t, err)
	assert.Equal(t, 70, rep.Records)
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	return st.Size()
}
