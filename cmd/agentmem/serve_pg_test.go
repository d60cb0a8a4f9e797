package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/internal/pgtest"
)

// TestServe_TwoServersOnePostgres runs two `agentmem serve` processes (the
// real binary) on one PostgreSQL store while eight clients write to each,
// kills one with SIGKILL, and then reads every write either server
// acknowledged through the survivor: two servers share one memory, and a
// killed server loses no acknowledged write.
func TestServe_TwoServersOnePostgres(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	bin := buildCLI(t)
	schema := pgtest.UniqueName()
	pgtest.ExecOnCleanup(t, "drop schema "+schema, `DROP SCHEMA IF EXISTS "`+schema+`" CASCADE`)
	store := pgtest.WithParams(dsn, "schema", schema)

	procA, _, ackedA, stopA := serveUnderLoad(t, bin, store) // creates the schema
	procB, urlB, ackedB, stopB := serveUnderLoad(t, bin, store)
	t.Cleanup(func() { _ = procB.Process.Kill(); _ = procB.Wait() })
	waitAcked(t, ackedA, 50)
	waitAcked(t, ackedB, 50)

	require.NoError(t, procA.Process.Kill())
	_ = procA.Wait()
	stopA()
	idsA := ackedA()
	waitAcked(t, ackedB, len(ackedB())+20) // the survivor keeps serving
	stopB()
	idsB := ackedB()
	t.Logf("acknowledged: %d by the killed server, %d by the survivor", len(idsA), len(idsB))

	hc := &http.Client{Timeout: 10 * time.Second}
	texts := map[string]string{}
	for _, id := range append(idsA, idsB...) {
		resp, err := hc.Get(urlB + "/v1/memories/" + id)
		require.NoError(t, err)
		var m struct{ ID, Text, Namespace string }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "acknowledged id %s is stored", id)
		assert.Equal(t, id, m.ID)
		assert.Equal(t, "load", m.Namespace)
		texts[id] = m.Text
	}

	// The survivor's search finds the killed server's writes too (each
	// asked for by its text: the servers may have acknowledged thousands).
	for _, id := range idsA[:min(len(idsA), 25)] {
		body, err := json.Marshal(map[string]any{"query": texts[id], "namespace": "load", "k": 10, "min_relevance": -1})
		require.NoError(t, err)
		resp, err := hc.Post(urlB+"/v1/search", "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		var res struct {
			Hits []struct{ ID string } `json:"hits"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&res))
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.True(t, slices.ContainsFunc(res.Hits, func(h struct{ ID string }) bool { return h.ID == id }),
			"the survivor's search finds %s (%q), written through the killed server", id, texts[id])
	}

	require.NoError(t, procB.Process.Signal(syscall.SIGTERM))
	require.NoError(t, procB.Wait(), "the survivor exits 0 on SIGTERM")
}
