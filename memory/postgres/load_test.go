package postgres_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/postgres"
)

// hasIndex reports whether m's store has its HNSW index.
func hasIndex(t *testing.T, m *postgres.Memory) bool {
	t.Helper()
	var ok bool
	require.NoError(t, m.Pool().QueryRow(t.Context(), `SELECT to_regclass('chunks_hnsw') IS NOT NULL`).Scan(&ok))
	return ok
}

func loadRecords(n int) []memory.Record {
	recs := make([]memory.Record, n)
	for i := range recs {
		recs[i] = memory.Record{ID: fmt.Sprintf("l%d", i), Namespace: fmt.Sprintf("ns%d", i%3),
			Text: fmt.Sprintf("load note %d about cargo %d. The second sentence names crate %d.", i, i%17, i*7)}
	}
	return recs
}

// TestLoad: a load at least as large as the store builds the HNSW index
// once at its end; every record is stored and found, the store verifies,
// and progress counts the batches. A batch that fails keeps the batches
// committed before it, and the index is built all the same.
func TestLoad(t *testing.T) {
	ctx := t.Context()
	m := open(t, storeURL(t), postgres.WithBulkLoad(100))
	require.True(t, hasIndex(t, m))
	recs := loadRecords(250)
	var progress []int
	ids, err := m.Load(ctx, recs, 100, func(n int) { progress = append(progress, n) })
	require.NoError(t, err)
	assert.Equal(t, []int{100, 200, 250}, progress)
	require.Len(t, ids, 250)
	assert.Equal(t, "l249", ids[249])
	assert.Equal(t, 250, m.Len())
	assert.True(t, hasIndex(t, m))
	checkStats(t, m)
	var pending int
	require.NoError(t, m.Pool().QueryRow(ctx, `SELECT count(*) FROM chunks WHERE pending`).Scan(&pending))
	assert.Zero(t, pending, "a load's chunks are in the index")
	hits, err := m.Query(ctx, memory.Query{Text: "crate 1379", Namespace: "ns2"})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "l197", hits[0].ID)

	bad := loadRecords(600)
	bad[450].Text = "  "
	ids, err = m.Load(ctx, bad, 200, nil)
	require.ErrorIs(t, err, memory.ErrEmptyText)
	assert.Contains(t, err.Error(), "stored 400 of 600 records")
	assert.Nil(t, ids)
	assert.Equal(t, 400, m.Len(), "l0…l249 replaced, l250…l399 added")
	assert.True(t, hasIndex(t, m), "built after the failed batch")
	checkStats(t, m)

	_, err = m.Load(ctx, recs, 0, nil)
	assert.ErrorIs(t, err, memory.ErrInvalidArgument)
}
