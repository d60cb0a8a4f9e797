package postgres_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/postgres"
)

// TestVerify: a store that writes, replaces and forgets verifies clean;
// each kind of damage done to its rows afterwards is named by a problem of
// its own, and the schema's (a missing table, a hole in the migrations)
// too.
func TestVerify(t *testing.T) {
	defer postgres.SetBlocks(4, 8)() // blocks from a few records on
	ctx := t.Context()
	m := open(t, storeURL(t))
	var recs []memory.Record
	for i := range 40 {
		recs = append(recs, memory.Record{ID: fmt.Sprintf("r%d", i), Namespace: []string{"a", "b"}[i%2],
			Speaker: []string{"ana", "bo", ""}[i%3], Text: fmt.Sprintf("note %d about the harbour crane and shipment %d", i, i*3)})
	}
	_, err := m.AddBatch(ctx, recs[:30])
	require.NoError(t, err)
	for _, r := range recs[30:] {
		_, err := m.Add(ctx, r)
		require.NoError(t, err)
	}
	_, err = m.Add(ctx, memory.Record{ID: "r3", Namespace: "b", Text: "note 3 replaced"})
	require.NoError(t, err)
	require.NoError(t, m.Forget(ctx, "r7"))
	// Facts that change (memory.Facts): a duplicate merged, a version superseded.
	_, err = m.Remember(ctx, memory.Record{Namespace: "a", Text: "note 0 about the harbour crane and shipment 0"})
	require.NoError(t, err)
	_, err = m.Supersede(ctx, "r20", memory.Record{Namespace: "a", Text: "note 20 changed: the crane moved to pier 4"})
	require.NoError(t, err)
	problems, err := m.Verify(ctx)
	require.NoError(t, err)
	require.Empty(t, problems)

	exec := func(sql string) {
		t.Helper()
		_, err := m.Pool().Exec(ctx, sql)
		require.NoError(t, err, sql)
	}
	seq := func(id string) string {
		t.Helper()
		var s int64
		require.NoError(t, m.Pool().QueryRow(ctx, `SELECT seq FROM records WHERE id = $1`, id).Scan(&s))
		return fmt.Sprint(s)
	}
	damage := []struct{ sql, want string }{
		{`UPDATE namespaces SET text_docs = text_docs + 1 WHERE name = 'a'`, "namespaces whose statistics disagree with their records: 1 (first: namespace a: text_docs"},
		// The newest record is in its namespace's tail, in no block.
		{`UPDATE records SET tfs[1] = tfs[1] + 1 WHERE seq = (SELECT max(seq) FROM records)`, "records whose terms disagree with them: 1 (first: record "},
		{`UPDATE namespaces SET episode_docs = episode_docs + 2 WHERE name = 'b'`, "namespaces whose episode count disagrees with their episodes: 1"},
		{`UPDATE episodes SET len = len + 1 WHERE episode = (SELECT episode FROM records WHERE id = 'r12')`, "episodes whose length or record count disagrees with their records: 1"},
		{`UPDATE records SET prev_seq = 999999 WHERE id = 'r14'`, "records linked to a previous record that is gone, in another namespace, newer or in another episode: 1 (first: record r14: prev_seq 999999)"},
		{`DELETE FROM chunks WHERE seq = ` + seq("r16"), "records without chunks: 1 (first: record r16)"},
		{`INSERT INTO chunks (seq, ns, time, ord, start_byte, end_byte, text, embedding, pending)
			SELECT 999998, ns, time, ord, start_byte, end_byte, text, embedding, pending FROM chunks WHERE seq = ` + seq("r18"), "chunks of no record, or of another namespace or time than their record's: 1"},
		{`INSERT INTO speakers (ns, speaker, n) VALUES (424242, 'ghost', 1)`, "rows of a namespace that does not exist: 1 (first: a speaker of namespace 424242)"},
		{`UPDATE speakers SET n = n + 5 WHERE speaker = 'ana'`, "speakers whose record count disagrees with their records: 3"}, // ana in a and b, and the ghost
		{`UPDATE posting_blocks SET n = n + 1 WHERE term = 'crane'`, "posting blocks disagree with the records' terms: block of term \"crane\""},
	}
	for _, d := range damage {
		exec(d.sql)
	}
	problems, err = m.Verify(ctx)
	require.NoError(t, err)
	for _, p := range problems {
		t.Log(p)
	}
	for _, d := range damage {
		found := false
		for _, p := range problems {
			if len(p) >= len(d.want) && p[:len(d.want)] == d.want {
				found = true
			}
		}
		assert.True(t, found, "a problem starts %q", d.want)
	}
	assert.Len(t, problems, len(damage), "each damage is one problem")

	// Records have no foreign key to their namespace (schema version
	// 14): one of a namespace that does not exist is found as the
	// other tables' rows are.
	exec(`UPDATE records SET ns = 424243 WHERE id = 'r22'`)
	problems, err = m.Verify(ctx)
	require.NoError(t, err)
	assert.Contains(t, problems, "rows of a namespace that does not exist: 2 (first: a record of namespace 424243)")
	exec(`DELETE FROM speakers WHERE ns = 424242`)
	exec(`UPDATE records SET ns = (SELECT id FROM namespaces WHERE name = 'a') WHERE id = 'r22'`)

	// A lexical embedder's vectors are sparsevec since version 10.
	exec(`ALTER TABLE chunks ALTER COLUMN embedding TYPE vector(256) USING embedding::vector(256)`)
	problems, err = m.Verify(ctx)
	require.NoError(t, err)
	if assert.Len(t, problems, 1) {
		assert.Regexp(t, `^chunks.embedding is of type vector, want sparsevec for embedder hash\S*256 at schema version \d+$`, problems[0])
	}

	exec(`DELETE FROM schema_migrations WHERE version = 2`)
	problems, err = m.Verify(ctx)
	require.NoError(t, err)
	assert.Contains(t, problems, fmt.Sprintf("schema_migrations: %d rows, versions 1 to %d (%d distinct): want each of 1 to %d once",
		postgres.SchemaVersion-1, postgres.SchemaVersion, postgres.SchemaVersion-1, postgres.SchemaVersion))
	exec(`DROP TABLE speakers, episodes`)
	problems, err = m.Verify(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{fmt.Sprintf("schema %q lacks the tables episodes, speakers", m.Schema())}, problems)
}
