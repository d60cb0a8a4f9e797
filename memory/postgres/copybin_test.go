package postgres_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	pgv "github.com/pgvector/pgvector-go"
	pgxvec "github.com/pgvector/pgvector-go/pgx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory/postgres"
)

// TestCopyValues writes rows through the writes' binary COPY encoder and
// reads them back with pgx, for the values a write can hold: NULLs, empty
// and non-empty arrays, times before PostgreSQL's epoch (2000) and far
// after it, text that is not ASCII, vectors dense and sparse (zeros left
// out of a sparsevec, a negative zero among them).
func TestCopyValues(t *testing.T) {
	ctx := t.Context()
	m := openWith(t, storeURL(t), hashEmb(t, 8)) // the schema, and the vector extension
	conn, err := pgx.Connect(ctx, withParams(needPG(t), "search_path", m.Schema()+",public"))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(ctx) })
	require.NoError(t, pgxvec.RegisterTypes(ctx, conn))
	_, err = conn.Exec(ctx, `CREATE TABLE copied (i8 bigint, i4 int, s text, at timestamptz, ss text[], is4 int[], b bool, v vector(4), sv sparsevec(6))`)
	require.NoError(t, err)

	at := []time.Time{
		time.Date(1969, 7, 20, 20, 17, 40, 123456000, time.UTC),
		time.Date(2026, 12, 4, 13, 45, 0, 999999000, time.UTC),
		time.Date(2999, 1, 1, 0, 0, 0, 1000, time.UTC),
	}
	type row struct {
		i8  int64
		i4  int32
		s   string
		at  time.Time
		ss  []string
		is4 []int32
		b   bool
		v   []float32
		sv  []float32
	}
	rows := []row{
		{-1 << 40, -7, "Grüße, 世界 🙂", at[0], []string{}, []int32{}, false, []float32{0, -1.5, 2, 0}, []float32{0, 0.5, 0, float32(negZero()), -3, 0}},
		{1<<62 + 5, 1 << 30, "", at[1], []string{"a", "", "ü, \"quoted\" {x}"}, []int32{1, -2, 1<<31 - 1}, true, []float32{1, 2, 3, 4}, []float32{1, 2, 3, 4, 5, 6}},
		{0, 0, "null fields follow", time.Time{}, []string{"one"}, []int32{42}, true, []float32{0.25, 0, 0, 0}, []float32{0, 0, 0, 0, 0, 7}},
	}
	var values [][]any
	for _, r := range rows {
		values = append(values, []any{r.i8, r.i4, r.s, r.at, r.ss, r.is4, r.b,
			postgres.Vector{V: r.v}, postgres.Vector{V: r.sv, Sparse: true}})
	}
	values = append(values, []any{nil, nil, nil, nil, nil, nil, nil, nil, nil})
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	require.NoError(t, postgres.CopyValues(ctx, tx, "copied", []string{"i8", "i4", "s", "at", "ss", "is4", "b", "v", "sv"}, values))
	require.NoError(t, tx.Commit(ctx))

	got, err := conn.Query(ctx, `SELECT i8, i4, s, at, ss, is4, b, v, sv FROM copied ORDER BY i8 NULLS LAST`)
	require.NoError(t, err)
	defer got.Close()
	want := []row{rows[0], rows[2], rows[1]}
	i := 0
	for got.Next() {
		if i == len(want) {
			var i8, i4, s, at, ss, is4, b, v, sv any
			require.NoError(t, got.Scan(&i8, &i4, &s, &at, &ss, &is4, &b, &v, &sv))
			assert.Equal(t, []any{nil, nil, nil, nil, nil, nil, nil, nil, nil}, []any{i8, i4, s, at, ss, is4, b, v, sv}, "the row of NULLs")
			i++
			continue
		}
		w := want[i]
		var r row
		var at *time.Time
		var v pgv.Vector
		var sv pgv.SparseVector
		require.NoError(t, got.Scan(&r.i8, &r.i4, &r.s, &at, &r.ss, &r.is4, &r.b, &v, &sv))
		assert.Equal(t, w.i8, r.i8)
		assert.Equal(t, w.i4, r.i4)
		assert.Equal(t, w.s, r.s)
		if w.at.IsZero() {
			assert.Nil(t, at, "a zero time is NULL")
		} else {
			require.NotNil(t, at)
			assert.True(t, w.at.Equal(*at), "time %v, got %v", w.at, *at)
		}
		assert.Equal(t, w.ss, r.ss)
		assert.Equal(t, w.is4, r.is4)
		assert.Equal(t, w.b, r.b)
		assert.Equal(t, w.v, v.Slice())
		assert.Equal(t, int32(len(w.sv)), sv.Dimensions())
		var nz []float32
		for _, x := range w.sv {
			if x != 0 {
				nz = append(nz, x)
			}
		}
		assert.Equal(t, nz, sv.Values(), "a sparsevec holds the non-zero elements")
		assert.Equal(t, w.sv, sv.Slice())
		i++
	}
	require.NoError(t, got.Err())
	assert.Equal(t, len(want)+1, i)
}

func negZero() float64 {
	z := 0.0
	return -z
}
