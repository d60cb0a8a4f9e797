//go:build container

// Package container tests the runtime image as users run it: the agentmem
// binary as the entrypoint, the store in a named volume at /data, one
// container per command. make test-container builds the image and runs
// these tests (go test -tags container ./test/container/) with
//
//	AGENTMEM_ENGINE  docker or podman (default docker)
//	AGENTMEM_IMAGE   the image to test (default localhost/agentmem:test)
//
// Every container and volume a test makes carries the label agentmem-test
// and is removed when the test ends.
package container

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	engine = envOr("AGENTMEM_ENGINE", "docker")
	image  = envOr("AGENTMEM_IMAGE", "localhost/agentmem:test")
)

const label = "agentmem-test"

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func TestMain(m *testing.M) {
	if out, err := exec.Command(engine, "image", "inspect", "--format", "{{.Id}}", image).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "container tests: image %s not found with %s (build it with make test-container): %v\n%s",
			image, engine, err, out)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// cli runs the container engine with args, stdin as standard input, and
// returns standard output; a failure is returned with standard error.
func cli(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, engine, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w\n%s", engine, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

func mustCLI(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, err := cli(t, stdin, args...)
	require.NoError(t, err)
	return out
}

// name returns a unique name for a container or volume of this test.
func name(t *testing.T, kind string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	s := regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(t.Name()), "-")
	return fmt.Sprintf("agentmem-test-%s-%s-%s", kind, strings.Trim(s, "-"), hex.EncodeToString(b))
}

// newVolume creates a named volume, removed at the end of the test.
func newVolume(t *testing.T) string {
	t.Helper()
	v := name(t, "vol")
	mustCLI(t, "", "volume", "create", "--label", label, v)
	t.Cleanup(func() {
		if _, err := cli(t, "", "volume", "rm", "-f", v); err != nil {
			t.Errorf("removing volume: %v", err)
		}
	})
	return v
}

// agentmem runs one agentmem command in a new container (removed when it
// exits) with the volume at /data, and returns its standard output.
func agentmem(t *testing.T, vol, stdin string, args ...string) string {
	t.Helper()
	run := []string{"run", "--rm", "-i", "--label", label, "-v", vol + ":/data", image}
	return mustCLI(t, stdin, append(run, args...)...)
}

// facts returns n JSON Lines {"text": ...}, each a distinct sentence
// tagged with tag.
func facts(tag string, n int) (jsonl string, texts []string) {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		text := fmt.Sprintf("%s fact %d: the %s gateway for tenant t%d listens on port %d", tag, i, tag, i, 1000+i)
		texts = append(texts, text)
		line, _ := json.Marshal(map[string]string{"text": text})
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String(), texts
}

type stats struct {
	Segments int    `json:"segments"` // short-term store
	Memories int    `json:"memories"` // long-term store
	Backend  string `json:"backend"`
	Memory   string `json:"memory"`
}

func (s stats) count() int { return max(s.Segments, s.Memories) }

func getStats(t *testing.T, vol string, flags ...string) stats {
	t.Helper()
	var s stats
	out := agentmem(t, vol, "", append(append([]string{"--json"}, flags...), "stats")...)
	require.NoError(t, json.Unmarshal([]byte(out), &s), out)
	return s
}

type searchResult struct {
	Hits []struct {
		Text  string  `json:"text"`
		Score float64 `json:"score"`
	} `json:"hits"`
}

// assertFound searches each text, one container per query, and asserts
// that it is the top hit.
func assertFound(t *testing.T, vol string, flags []string, texts ...string) {
	t.Helper()
	for _, text := range texts {
		out := agentmem(t, vol, "", append(append([]string{"--json"}, flags...), "search", "-k", "1", text)...)
		var r searchResult
		require.NoError(t, json.Unmarshal([]byte(out), &r), out)
		if assert.NotEmpty(t, r.Hits, "search %q", text) {
			assert.Equal(t, text, r.Hits[0].Text, "top hit for %q", text)
		}
	}
}

func TestImage_NonRoot(t *testing.T) {
	id := func(flag string) string {
		return strings.TrimSpace(mustCLI(t, "", "run", "--rm", "--label", label, "--entrypoint", "id", image, flag))
	}
	uid, err := strconv.Atoi(id("-u"))
	require.NoError(t, err)
	assert.NotZero(t, uid, "the image runs as root")
	assert.Equal(t, "10001", id("-u"))
	assert.Equal(t, "10001", id("-g"), "the agentmem group's gid")
	assert.Equal(t, "agentmem", id("-un"))

	// A fresh named volume takes /data's owner from the image, so the
	// unprivileged user can create the store in it.
	vol := newVolume(t)
	owner := mustCLI(t, "", "run", "--rm", "--label", label, "-v", vol+":/data", "--entrypoint", "stat", image, "-c", "%u:%g", "/data")
	assert.Equal(t, "10001:10001", strings.TrimSpace(owner))
}

// TestImage_ImportSearchRestart imports through standard input into a named
// volume, then finds the texts from new containers (a restart: same volume,
// new container), for each backend and memory kind.
func TestImage_ImportSearchRestart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"short inmem", nil},
		{"short faiss", []string{"--backend", "faiss"}},
		{"long faiss", []string{"--memory", "long", "--backend", "faiss"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vol := newVolume(t)
			jsonl, texts := facts("alpha", 300)
			out := agentmem(t, vol, jsonl, append(append([]string{"--json"}, tc.flags...), "import", "--batch", "64", "-")...)
			var imp struct{ Imported, Skipped int }
			require.NoError(t, json.Unmarshal([]byte(out), &imp), out)
			assert.Equal(t, 300, imp.Imported)

			// New containers, no flags: the store remembers its backend and kind.
			s := getStats(t, vol)
			assert.Equal(t, 300, s.count())
			wantBackend := "inmem"
			if len(tc.flags) > 0 {
				wantBackend = "faiss"
			}
			assert.Equal(t, wantBackend, s.Backend)
			assertFound(t, vol, nil, texts[0], texts[149], texts[299])

			// Importing again from another container stores nothing twice.
			out = agentmem(t, vol, jsonl, "--json", "import", "-")
			require.NoError(t, json.Unmarshal([]byte(out), &imp), out)
			assert.Equal(t, 0, imp.Imported)
			assert.Equal(t, 300, getStats(t, vol).count())
		})
	}
}

// killScript imports parts of lines into /data one agentmem import each,
// printing "START k" before and "ACK k" after part k is acknowledged (the
// import exited 0). It runs in the image's shell, as the image's user.
const killScript = `set -e
k=0
while [ $k -lt "$PARTS" ]; do
  k=$((k + 1))
  echo "START $k"
  seq 1 "$LINES" | sed "s/.*/{\"text\": \"part $k line & : the beta gateway for tenant p${k}l& listens on port &$k\"}/" |
    agentmem $FLAGS import --batch "$BATCH" -
  echo "ACK $k"
done
echo DONE
`

func partText(k, i int) string {
	return fmt.Sprintf("part %d line %d : the beta gateway for tenant p%dl%d listens on port %d%d", k, i, k, i, i, k)
}

// TestImage_KillDuringImport kills the container (SIGKILL) while it imports,
// after some imports were acknowledged, and checks from a new container on
// the same volume that every acknowledged line is there, that the store
// opens, and that finishing the import leaves each line exactly once.
func TestImage_KillDuringImport(t *testing.T) {
	const parts, lines, batch = 40, 2000, 100
	for _, tc := range []struct {
		name  string
		flags string
	}{
		{"short inmem", ""},
		{"long faiss", "--memory long --backend faiss"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vol := newVolume(t)
			ctr := name(t, "ctr")
			mustCLI(t, "", "run", "-d", "--name", ctr, "--label", label, "-v", vol+":/data",
				"-e", fmt.Sprintf("PARTS=%d", parts), "-e", fmt.Sprintf("LINES=%d", lines),
				"-e", fmt.Sprintf("BATCH=%d", batch), "-e", "FLAGS="+tc.flags,
				"--entrypoint", "sh", image, "-c", killScript)
			t.Cleanup(func() {
				if _, err := cli(t, "", "rm", "-f", ctr); err != nil {
					t.Errorf("removing container: %v", err)
				}
			})

			// Wait for two acknowledged parts, then kill -9.
			acked := func() (started, acks []string, logs string) {
				logs, err := cli(t, "", "logs", ctr)
				require.NoError(t, err)
				for _, l := range strings.Split(logs, "\n") {
					if f := strings.Fields(l); len(f) == 2 && f[0] == "START" {
						started = append(started, f[1])
					} else if len(f) == 2 && f[0] == "ACK" {
						acks = append(acks, f[1])
					}
				}
				return started, acks, logs
			}
			deadline := time.Now().Add(3 * time.Minute)
			for {
				_, acks, logs := acked()
				require.NotContains(t, logs, "DONE", "the import finished before the kill: make it longer")
				if len(acks) >= 2 {
					break
				}
				require.True(t, time.Now().Before(deadline), "no two parts acknowledged in 3 minutes:\n%s", logs)
				time.Sleep(100 * time.Millisecond)
			}
			mustCLI(t, "", "kill", "--signal", "KILL", ctr)
			mustCLI(t, "", "wait", ctr)
			started, acks, logs := acked()
			t.Logf("killed with %d parts acknowledged, %d started:\n%s", len(acks), len(started), logs)
			require.GreaterOrEqual(t, len(acks), 2)
			require.Greater(t, len(started), len(acks), "the kill did not land during an import")
			require.NotContains(t, logs, "DONE")

			// A new container on the same volume: nothing acknowledged is lost.
			var flags []string
			if tc.flags != "" {
				flags = strings.Fields(tc.flags)
			}
			s := getStats(t, vol)
			assert.GreaterOrEqual(t, s.count(), len(acks)*lines, "acknowledged lines missing after kill -9")
			assert.LessOrEqual(t, s.count(), len(started)*lines, "more lines than were sent")
			for _, k := range []int{1, len(acks)} {
				assertFound(t, vol, flags, partText(k, 1), partText(k, lines))
			}

			// Finish the import: the store is usable, every line is there once.
			var all strings.Builder
			for k := 1; k <= len(started); k++ {
				for i := 1; i <= lines; i++ {
					line, _ := json.Marshal(map[string]string{"text": partText(k, i)})
					all.Write(line)
					all.WriteByte('\n')
				}
			}
			agentmem(t, vol, all.String(), "import", "--batch", "500", "-")
			assert.Equal(t, len(started)*lines, getStats(t, vol).count())
		})
	}
}
