package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentmem/agentmem/internal/pgtest"
)

// binDir holds the agentmem binary the tests that run it share; TestMain
// makes and removes it.
var binDir string

// TestMain makes the folder of the shared binary and finds or starts the
// PostgreSQL of the tests that use a PostgreSQL store (internal/pgtest;
// without one they skip, except under CI).
func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	var err error
	binDir, err = os.MkdirTemp("", "agentmem-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "cmd/agentmem tests:", err)
		return 1
	}
	defer os.RemoveAll(binDir)
	return pgtest.Main(m, "cmd/agentmem")
}

// buildOnce builds the agentmem binary of this test run, with the build
// tags the tests were built with (buildTags: faiss or none), the first
// time a test asks for it.
var buildOnce = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(binDir, "agentmem")
	out, err := exec.Command("go", "build", "-tags", buildTags, "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build -tags %q: %w\n%s", buildTags, err, out)
	}
	return bin, nil
})

// buildCLI returns the agentmem binary, built once per test run; -short
// skips the tests that need it.
func buildCLI(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin, err := buildOnce()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}
