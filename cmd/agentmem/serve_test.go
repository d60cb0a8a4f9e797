package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
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
	t.Parallel()
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

// serveUnderLoad starts the built binary serving a store on a loopback port,
// runs writers that add memories over HTTP until stop is closed, and returns
// the ids the server acknowledged (2xx) when the writers are done.
func serveUnderLoad(t *testing.T, bin, store string) (proc *exec.Cmd, url string, acked func() []string, stopWriters func()) {
	t.Helper()
	addr := freeAddr(t)
	proc = exec.Command(bin, "serve", "--store", store, "--addr", addr)
	proc.Stderr = io.Discard
	require.NoError(t, proc.Start())
	url = "http://" + addr
	require.Eventually(t, func() bool {
		return runCLI(t, "", "health", "--url", url+"/healthz").code == exitOK
	}, 20*time.Second, 50*time.Millisecond, "the server answers /healthz")

	var (
		mu   sync.Mutex
		ids  []string
		wg   sync.WaitGroup
		done = make(chan struct{})
	)
	hc := &http.Client{Timeout: 10 * time.Second}
	for w := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				// Each server's writers write their own texts: a text
				// another server stored already is a duplicate (200,
				// not a new memory), so two servers writing the same
				// ones would acknowledge only the faster one's.
				body := fmt.Sprintf(`{"text": "writer %d note %d about the deploy via %s", "namespace": "load"}`, w, i, addr)
				resp, err := hc.Post(url+"/v1/memories", "application/json", strings.NewReader(body))
				if err != nil {
					return // the server is gone: nothing after this was acknowledged
				}
				var res struct{ ID string }
				err = json.NewDecoder(resp.Body).Decode(&res)
				resp.Body.Close()
				if err == nil && resp.StatusCode == http.StatusCreated && res.ID != "" {
					mu.Lock()
					ids = append(ids, res.ID)
					mu.Unlock()
				}
			}
		})
	}
	var once sync.Once
	stopWriters = func() { once.Do(func() { close(done) }); wg.Wait() }
	t.Cleanup(stopWriters)
	acked = func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(ids)
	}
	return proc, url, acked, stopWriters
}

// waitAcked waits until the writers have n acknowledged writes.
func waitAcked(t *testing.T, acked func() []string, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return len(acked()) >= n }, 60*time.Second, 10*time.Millisecond)
}

// requireStored checks that every acknowledged id is in the store, read by
// a new process (the CLI's get), and that the store verifies. After a
// crash (killed), the log may end in a torn tail: the frame being written
// when the process died, which held no acknowledged write (a write is
// acknowledged once its frame is synced whole). verify reports it as
// damage (exit 1) and a writer's open trims it; so after a crash a torn
// tail may be the one problem found, and repair must then leave a store
// that verifies and still holds every acknowledged id.
func requireStored(t *testing.T, bin, store string, ids []string, killed bool) {
	t.Helper()
	get := func() {
		out, err := exec.Command(bin, append([]string{"--store", store, "--json", "get"}, ids...)...).CombinedOutput()
		require.NoError(t, err, "every acknowledged id is stored: %s", out)
		for _, id := range ids {
			assert.Contains(t, string(out), id)
		}
	}
	get()
	out, err := exec.Command(bin, "--store", store, "verify").CombinedOutput()
	if err != nil && killed {
		require.Contains(t, string(out), "torn tail", "after kill -9 a torn tail is the only damage the store may have: %s", out)
		require.Contains(t, string(out), "1 problem found", "after kill -9 a torn tail is the only damage the store may have: %s", out)
		t.Logf("a torn tail after kill -9, repaired: %s", out)
		out, err = exec.Command(bin, "--store", store, "repair").CombinedOutput()
		require.NoError(t, err, "repair trims the torn tail: %s", out)
		get()
		out, err = exec.Command(bin, "--store", store, "verify").CombinedOutput()
	}
	require.NoError(t, err, "the store verifies: %s", out)
}

// TestServe_Kill9UnderWriteLoad kills the server (SIGKILL) while eight
// clients write over HTTP, restarts it on the same store, and finds every
// write the server acknowledged.
func TestServe_Kill9UnderWriteLoad(t *testing.T) {
	t.Parallel()
	bin := buildCLI(t)
	store := filepath.Join(t.TempDir(), "store")
	var all []string
	for round := range 3 {
		proc, _, acked, stopWriters := serveUnderLoad(t, bin, store)
		waitAcked(t, acked, 50)
		require.NoError(t, proc.Process.Kill())
		_ = proc.Wait()
		stopWriters()
		ids := acked()
		t.Logf("round %d: %d writes acknowledged before kill -9", round, len(ids))
		all = append(all, ids...)
		requireStored(t, bin, store, all, true) // this round's and every earlier round's
	}
}

// TestServe_SIGTERMUnderWriteLoad stops the server with SIGTERM while eight
// clients write: it exits 0 and every acknowledged write is stored.
func TestServe_SIGTERMUnderWriteLoad(t *testing.T) {
	t.Parallel()
	bin := buildCLI(t)
	store := filepath.Join(t.TempDir(), "store")
	proc, _, acked, stopWriters := serveUnderLoad(t, bin, store)
	waitAcked(t, acked, 50)
	require.NoError(t, proc.Process.Signal(syscall.SIGTERM))
	require.NoError(t, proc.Wait(), "a SIGTERM'd server exits 0")
	stopWriters()
	requireStored(t, bin, store, acked(), false)
}
