package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCLI_WriteWhileServing: a CLI write to a store that `agentmem serve`
// owns says once that it waits, naming the server's process, and fails
// with one line that names it and points to the server's API (it printed
// "waiting" lines, some with holder_pid=0, and no hint).
func TestCLI_WriteWhileServing(t *testing.T) {
	t.Parallel()
	bin := buildCLI(t)
	st := filepath.Join(t.TempDir(), "s")
	addr := freeAddr(t)
	srv := exec.Command(bin, "serve", "--store", st, "--addr", addr)
	require.NoError(t, srv.Start())
	t.Cleanup(func() {
		_ = srv.Process.Kill()
		_ = srv.Wait()
	})
	require.Eventually(t, func() bool {
		return runBin(t, bin, ".", "health", "--url", "http://"+addr+"/healthz").code == exitOK
	}, 20*time.Second, 50*time.Millisecond)

	r := runBin(t, bin, ".", "--store", st, "--wait", "300ms", "add", "hello there")
	assert.Equal(t, exitFailure, r.code)
	holder := fmt.Sprintf("process %d", srv.Process.Pid)
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	require.Len(t, lines, 2, "one line while waiting, one error: %q", r.stderr)
	assert.Contains(t, lines[0], "waiting up to 300ms")
	assert.Contains(t, lines[0], holder)
	assert.Contains(t, lines[1], "agentmem: store is locked by another process: "+st+" is in use by "+holder)
	assert.Contains(t, lines[1], "http://"+addr+"/v1/memories")
	assert.NotContains(t, r.stderr, "holder_pid=0")

	r = runBin(t, bin, ".", "--store", st, "--wait", "0", "add", "hello there")
	assert.Equal(t, exitFailure, r.code)
	assert.Equal(t, 1, strings.Count(strings.TrimSpace(r.stderr), "\n")+1, "--wait 0: the error alone: %q", r.stderr)
	assert.Contains(t, r.stderr, holder)
}
