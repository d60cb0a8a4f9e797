package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// freeAddr returns a loopback address with a port nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// TestCLI_ServeThenHealth runs `agentmem serve` on a loopback port, checks
// it with `agentmem health` (the image's HEALTHCHECK), adds and searches over
// HTTP, stops it as SIGTERM would (its context), and finds the write in the
// store afterwards.
func TestCLI_ServeThenHealth(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	addr := freeAddr(t)
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var served cliResult
	wg.Go(func() {
		var out, errOut strings.Builder
		code := run(ctx, []string{"serve", "--store", store, "--addr", addr}, strings.NewReader(""), &out, &errOut)
		served = cliResult{code, out.String(), errOut.String()}
	})
	url := "http://" + addr
	require.Eventually(t, func() bool {
		return runCLI(t, "", "health", "--url", url+"/healthz").code == exitOK
	}, 10*time.Second, 50*time.Millisecond, "the server answers /healthz")

	resp, err := http.Post(url+"/v1/memories", "application/json",
		strings.NewReader(`{"text": "The staging database is db-stg-7 in Frankfurt.", "namespace": "ops"}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)

	stop()
	wg.Wait()
	require.Equal(t, exitOK, served.code, served.stderr)

	r := runCLI(t, "", "health", "--url", url+"/healthz", "--timeout", "500ms")
	assert.Equal(t, exitFailure, r.code, "nothing answers once the server stopped")

	r = runCLI(t, "", "search", "--store", store, "--namespace", "ops", "-k", "1", "staging database")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "db-stg-7", "the acknowledged write is in the store after shutdown")
}

func TestCLI_ServeRefusesOpenAddressWithoutToken(t *testing.T) {
	t.Setenv("AGENTMEM_TOKEN", "")
	t.Setenv("AGENTMEM_TOKENS", "")
	store := filepath.Join(t.TempDir(), "store")
	r := runCLI(t, "", "serve", "--store", store, "--addr", fmt.Sprintf("0.0.0.0:%d", 1))
	assert.NotEqual(t, exitOK, r.code)
	assert.Contains(t, r.stderr, "token")
}
