package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/internal/pgtest"
	"github.com/agentmem/agentmem/server"
)

// syncBuffer is a bytes.Buffer safe for a process's writes and the test's
// reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// faultLoad is what the clients of TestServe_PostgresStopsAndReturns saw.
type faultLoad struct {
	mu       sync.Mutex
	acked    []string
	statuses map[int]int
	problems []string // answers that are neither a success nor 503 unavailable with Retry-After
	slowest  time.Duration
}

func (l *faultLoad) record(resp *http.Response, took time.Duration, err error, id string, body []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.slowest = max(l.slowest, took)
	switch {
	case err != nil:
		l.problems = append(l.problems, fmt.Sprintf("no answer after %v: %v", took, err))
	case resp.StatusCode == http.StatusServiceUnavailable:
		l.statuses[resp.StatusCode]++
	case resp.StatusCode >= 300:
		l.statuses[resp.StatusCode]++
		l.problems = append(l.problems, fmt.Sprintf("status %d after %v: %s", resp.StatusCode, took, body))
	default:
		l.statuses[resp.StatusCode]++
		if id != "" {
			l.acked = append(l.acked, id)
		}
	}
}

func (l *faultLoad) ackedCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

func (l *faultLoad) unavailable() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.statuses[http.StatusServiceUnavailable]
}

// TestServe_PostgresStopsAndReturns stops the PostgreSQL server under a
// running `agentmem serve` (the real binary) while clients write and
// search, and starts it again: while it is down every request answers at
// once with 503 unavailable and Retry-After (none hangs, none is a 500),
// /healthz stays 200 while /readyz and /v1/stats answer 503, and once it is
// back the server serves again without a restart and every acknowledged
// write is stored. The URL's password (which the cluster's trust
// authentication ignores) is never in the server's log.
func TestServe_PostgresStopsAndReturns(t *testing.T) {
	t.Parallel()
	pg := pgtest.StartCluster(t)
	bin := buildCLI(t)
	const password = "s3cret-fault-pw"
	store := pgtest.WithParams(strings.Replace(pg.DSN, "postgres@", "postgres:"+password+"@", 1), "schema", "fault")
	addr := freeAddr(t)
	proc := exec.Command(bin, "serve", "--store", store, "--addr", addr)
	var log syncBuffer
	proc.Stdout, proc.Stderr = &log, &log
	require.NoError(t, proc.Start())
	t.Cleanup(func() { _ = proc.Process.Kill(); _ = proc.Wait() })
	url := "http://" + addr

	const timeout = 10 * time.Second // a request that takes longer hung
	hc := &http.Client{Timeout: timeout}
	get := func(path string) (int, string, http.Header) {
		resp, err := hc.Get(url + path)
		require.NoError(t, err, "GET %s", path)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(body), resp.Header
	}
	require.Eventually(t, func() bool {
		resp, err := hc.Get(url + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 50*time.Millisecond, "the server is ready")

	load := &faultLoad{statuses: map[int]int{}}
	var wg sync.WaitGroup
	var stop atomic.Bool
	post := func(path, body string) (id string, resp *http.Response, data []byte, err error) {
		resp, err = hc.Post(url+path, "application/json", strings.NewReader(body))
		if err != nil {
			return "", nil, nil, err
		}
		defer resp.Body.Close()
		data, err = io.ReadAll(resp.Body)
		if err != nil {
			return "", resp, nil, err
		}
		if resp.StatusCode == http.StatusServiceUnavailable {
			var e struct{ Error server.Error }
			if json.Unmarshal(data, &e) != nil || e.Error.Code != server.CodeUnavailable || resp.Header.Get("Retry-After") == "" {
				return "", resp, data, fmt.Errorf("503 without code unavailable and Retry-After: %s", data)
			}
			return "", resp, data, nil
		}
		var res struct{ ID string }
		_ = json.Unmarshal(data, &res)
		return res.ID, resp, data, nil
	}
	for w := range 6 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				start := time.Now()
				id, resp, data, err := post("/v1/memories", fmt.Sprintf(`{"text": "writer %d note %d about the failover drill", "namespace": "fault"}`, w, i))
				load.record(resp, time.Since(start), err, id, data)
				if resp != nil && resp.StatusCode == http.StatusServiceUnavailable {
					time.Sleep(20 * time.Millisecond) // a client that honours Retry-After waits longer
				}
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			for !stop.Load() {
				start := time.Now()
				_, resp, data, err := post("/v1/search", `{"query": "failover drill note", "namespace": "fault"}`)
				load.record(resp, time.Since(start), err, "", data)
				if resp != nil && resp.StatusCode == http.StatusServiceUnavailable {
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
	stopLoad := sync.OnceFunc(func() { stop.Store(true); wg.Wait() })
	t.Cleanup(stopLoad)
	require.Eventually(t, func() bool { return load.ackedCount() >= 40 }, 60*time.Second, 10*time.Millisecond)

	pg.Halt(t)
	haltedAt := load.ackedCount()
	require.Eventually(t, func() bool { return load.unavailable() >= 20 }, 30*time.Second, 10*time.Millisecond,
		"requests answer 503 while the database is down")
	status, body, hdr := get("/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, status, "readyz: %s", body)
	assert.NotEmpty(t, hdr.Get("Retry-After"))
	status, body, _ = get("/healthz")
	assert.Equal(t, http.StatusOK, status, "healthz is liveness: %s", body)
	status, body, hdr = get("/v1/stats")
	assert.Equal(t, http.StatusServiceUnavailable, status, "stats: %s", body)
	assert.Contains(t, body, `"unavailable"`)
	assert.NotContains(t, body, `"memories"`)
	assert.NotEmpty(t, hdr.Get("Retry-After"))
	t.Logf("down: %s", body)

	pg.Resume(t)
	require.Eventually(t, func() bool {
		resp, err := hc.Get(url + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 50*time.Millisecond, "ready again without a restart")
	resumedAt := load.ackedCount()
	require.Eventually(t, func() bool { return load.ackedCount() >= resumedAt+40 }, 60*time.Second, 10*time.Millisecond,
		"writes are acknowledged again")
	stopLoad()

	load.mu.Lock()
	acked, statuses, problems, slowest := load.acked, load.statuses, load.problems, load.slowest
	load.mu.Unlock()
	t.Logf("acknowledged %d (%d before the stop, %d after the restart), statuses %v, slowest request %v",
		len(acked), haltedAt, len(acked)-resumedAt, statuses, slowest)
	assert.Empty(t, problems, "every answer is a success or 503 unavailable, within %v", timeout)
	assert.Less(t, slowest, timeout)

	for _, id := range acked {
		status, body, _ := get("/v1/memories/" + id)
		require.Equal(t, http.StatusOK, status, "acknowledged id %s is stored: %s", id, body)
	}
	var st struct{ Memories int }
	status, body, _ = get("/v1/stats")
	require.Equal(t, http.StatusOK, status, body)
	require.NoError(t, json.Unmarshal([]byte(body), &st))
	assert.GreaterOrEqual(t, st.Memories, len(acked))

	require.NoError(t, proc.Process.Signal(syscall.SIGTERM))
	err := proc.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Errorf("serve exited %v; log:\n%s", err, log.String())
	}
	assert.NotContains(t, log.String(), password, "the server's log never shows the password")
}
