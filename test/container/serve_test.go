//go:build container

package container

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestImage_ServeDefaultCommand runs the image as an operator does: its
// default command (agentmem serve --addr :7437) on a named volume with a
// published port. It checks that the image keeps its HEALTHCHECK (the OCI
// format drops it) and that the check passes, that the server refuses to
// start without a token and refuses a request without one, that a write
// is acknowledged, and that a new container on the volume — with the
// Faiss backend, which the image has built in — still finds it.
func TestImage_ServeDefaultCommand(t *testing.T) {
	hc := strings.TrimSpace(mustCLI(t, "", "image", "inspect", "--format", "{{json .Config.Healthcheck}}", image))
	require.NotEqual(t, "null", hc, "the image has no HEALTHCHECK (built in the OCI format? use --format docker)")
	assert.Contains(t, hc, "agentmem")

	vol := newVolume(t)
	_, err := cli(t, "", "run", "--rm", "--label", label, "-v", vol+":/data", image)
	require.Error(t, err, "serving on all interfaces without a token must be refused")
	assert.Contains(t, err.Error(), "AGENTMEM_TOKEN")

	const token = "container-test-token"
	serve := func(args ...string) (ctr, url string) {
		t.Helper()
		ctr = name(t, "ctr")
		run := []string{"run", "-d", "--name", ctr, "--label", label, "-v", vol + ":/data",
			"-e", "AGENTMEM_TOKEN=" + token, "-p", "127.0.0.1::7437", image}
		mustCLI(t, "", append(run, args...)...)
		t.Cleanup(func() { _, _ = cli(t, "", "rm", "-f", ctr) })
		port := strings.TrimSpace(strings.Split(mustCLI(t, "", "port", ctr, "7437"), "\n")[0])
		url = "http://" + strings.Replace(port, "0.0.0.0", "127.0.0.1", 1)
		require.Eventually(t, func() bool {
			resp, err := http.Get(url + "/healthz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		}, time.Minute, 200*time.Millisecond, "the server answers /healthz")
		return ctr, url
	}
	call := func(method, url, tok, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		require.NoError(t, err)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	ctr, url := serve() // the default command
	healthy(t, ctr)
	code, _ := call("POST", url+"/v1/search", "", `{"query": "x"}`)
	assert.Equal(t, http.StatusUnauthorized, code, "a request without the token")
	code, body := call("POST", url+"/v1/memories", token, `{"text": "The staging database is db-stg-7 in Frankfurt.", "namespace": "ops"}`)
	require.Equal(t, http.StatusCreated, code, body)
	mustCLI(t, "", "stop", ctr) // SIGTERM: the server closes the store

	ctr, url = serve("--backend", "faiss", "serve", "--addr", ":7437")
	healthy(t, ctr)
	code, body = call("POST", url+"/v1/search", token, `{"query": "staging database", "namespace": "ops", "k": 1}`)
	require.Equal(t, http.StatusOK, code, body)
	var sr struct {
		Hits []struct{ Text string } `json:"hits"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &sr), body)
	require.Len(t, sr.Hits, 1, "the write survived the restart")
	assert.Contains(t, sr.Hits[0].Text, "db-stg-7")
	mustCLI(t, "", "stop", ctr)
	assert.Equal(t, "faiss", getStats(t, vol).Backend, "the store now keeps its vectors in Faiss")
}

// healthy runs the image's health check in the container ctr: podman runs
// it on demand; docker reports the status of its own runs.
func healthy(t *testing.T, ctr string) {
	t.Helper()
	if engine == "podman" {
		out, err := cli(t, "", "healthcheck", "run", ctr)
		require.NoError(t, err, "the HEALTHCHECK fails: %s", out)
		return
	}
	require.Eventually(t, func() bool {
		out, err := cli(t, "", "inspect", "--format", "{{.State.Health.Status}}", ctr)
		return err == nil && strings.TrimSpace(out) == "healthy"
	}, 2*time.Minute, time.Second, fmt.Sprintf("%s becomes healthy", ctr))
}
