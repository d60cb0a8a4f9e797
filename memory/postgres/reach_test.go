package postgres_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/internal/pgtest"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/postgres"
)

// TestServerStopsAndReturns: while the server is stopped, Ping,
// GetContext, Counts, GetMany, Add and Query fail with memory.ErrUnavailable (not
// "missing", not 0); once it is started again the same handle works, and
// what was committed before is there.
func TestServerStopsAndReturns(t *testing.T) {
	t.Parallel()
	pg := pgtest.StartCluster(t)
	ctx := t.Context()
	m := open(t, pgtest.WithParams(pg.DSN, "schema", "reach"))
	id, err := m.Add(ctx, memory.Record{Text: "the failover drill is on Thursday"})
	require.NoError(t, err)
	require.NoError(t, m.Ping(ctx))

	pg.Halt(t)
	assert.ErrorIs(t, m.Ping(ctx), memory.ErrUnavailable)
	_, ok, err := m.GetContext(ctx, id)
	assert.ErrorIs(t, err, memory.ErrUnavailable)
	assert.False(t, ok)
	_, _, err = m.Counts(ctx)
	assert.ErrorIs(t, err, memory.ErrUnavailable)
	got, err := m.GetMany(ctx, []string{id})
	assert.ErrorIs(t, err, memory.ErrUnavailable)
	assert.Nil(t, got)
	_, err = m.Add(ctx, memory.Record{Text: "written while the server is down"})
	assert.ErrorIs(t, err, memory.ErrUnavailable)
	_, err = m.Query(ctx, memory.Query{Text: "failover drill"})
	assert.ErrorIs(t, err, memory.ErrUnavailable)
	t.Log(err)

	pg.Resume(t)
	require.NoError(t, m.Ping(ctx))
	rec, ok, err := m.GetContext(ctx, id)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "the failover drill is on Thursday", rec.Text)
	_, ok, err = m.GetContext(ctx, "no-such-id")
	require.NoError(t, err)
	assert.False(t, ok, "a missing id is not an error")
	got, err = m.GetMany(ctx, []string{"no-such-id", id, id})
	require.NoError(t, err)
	assert.Equal(t, map[string]memory.Record{id: rec}, got, "the stored ones, by id")
	records, chunks, err := m.Counts(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, records)
	assert.Equal(t, 1, chunks)
	_, err = m.Add(ctx, memory.Record{Text: "written after the restart"})
	require.NoError(t, err)
}

// TestErrorsHidePassword: no error of Open or ReadManifest holds the URL's
// password, also when an unescaped "@" in it makes the driver take its end
// for the host.
func TestErrorsHidePassword(t *testing.T) {
	emb := hashEmb(t, 8)
	for _, url := range []string{
		"postgres://agent:xy@hunter22@127.0.0.1:1/memory?connect_timeout=2",
		"postgres://agent:hunter22@127.0.0.1:badport/memory",
		"postgres://agent@127.0.0.1:1/memory?password=hunter22&connect_timeout=2",
		"postgres://agent:hunter22@127.0.0.1:1/memory?schema=Bad-Name",
	} {
		_, err := postgres.Open(t.Context(), url, emb)
		require.Error(t, err, url)
		assert.NotContains(t, err.Error(), "hunter22", url)
		_, err = postgres.ReadManifest(t.Context(), url)
		require.Error(t, err, url)
		assert.NotContains(t, err.Error(), "hunter22", url)
	}
}
