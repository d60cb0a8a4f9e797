package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCLI_ImportRefusesInvalidUTF8: import refuses a line that is not
// UTF-8, naming it, as add does (it stored U+FFFD instead), and stores
// nothing.
func TestCLI_ImportRefusesInvalidUTF8(t *testing.T) {
	t.Parallel()
	bin := buildCLI(t)
	dir := t.TempDir()
	st := filepath.Join(dir, "s")
	f := filepath.Join(dir, "latin1.jsonl")
	require.NoError(t, os.WriteFile(f, []byte("{\"text\":\"fine\"}\n{\"text\":\"caf\xe9 au lait\"}\n"), 0o644))
	for _, kind := range []string{"short", "long"} {
		r := runBin(t, bin, ".", "--store", st+kind, "--memory", kind, "import", f)
		assert.Equal(t, exitFailure, r.code, kind)
		assert.Contains(t, r.stderr, "latin1.jsonl:2: invalid argument: invalid UTF-8 at byte 13 of the line", kind)
		assert.NoDirExists(t, st+kind, "nothing is stored")
	}
	r := runBin(t, bin, ".", "--store", st, "add", "caf\xe9")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "invalid UTF-8")
}

// TestCLI_LongLineRefusedEarly: a 50 MB line is refused once the limit is
// passed, without reading the rest (it took 6-10 s and 130-225 MB), naming
// the flag that sets the limit; the flag lets a larger memory in.
func TestCLI_LongLineRefusedEarly(t *testing.T) {
	t.Parallel()
	bin := buildCLI(t)
	dir := t.TempDir()
	st := filepath.Join(dir, "s")
	// 50 MB from a pipe that counts what import read.
	cmd := exec.Command(bin, "--store", st, "import", "-")
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	cmd.Stdin = pr
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	pr.Close()
	written := 0
	go func() {
		defer pw.Close()
		chunk := []byte(strings.Repeat("word ", 1<<14))
		if _, err := pw.Write([]byte(`{"text":"`)); err != nil {
			return
		}
		for written < 50<<20 {
			n, err := pw.Write(chunk)
			written += n
			if err != nil {
				return // import stopped reading
			}
		}
	}()
	start := time.Now()
	err = cmd.Wait()
	took := time.Since(start)
	require.Error(t, err)
	assert.Equal(t, exitFailure, cmd.ProcessState.ExitCode())
	assert.Contains(t, stderr.String(), "standard input:1: input too large: the line is longer than")
	assert.Contains(t, stderr.String(), "(--max-record-bytes)")
	assert.NotContains(t, stderr.String(), "WithMaxRecordBytes")
	assert.Less(t, took, 5*time.Second)
	assert.NoDirExists(t, st)

	big := filepath.Join(dir, "big.jsonl")
	require.NoError(t, os.WriteFile(big, []byte(`{"text":"`+strings.Repeat("word ", 1<<20)+`"}`+"\n"), 0o644))
	r := runBin(t, bin, ".", "--store", st, "import", big)
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, "--max-record-bytes")
	r = runBin(t, bin, ".", "--store", st, "import", "--max-record-bytes", "8000000", big)
	assert.Equal(t, exitOK, r.code, r.stderr)
	r = runBin(t, bin, ".", "--store", st, "add", "--max-record-bytes", "0", "x")
	assert.Equal(t, exitUsage, r.code)
}

// TestCLI_ContradictingEmbedderIsUsage: an --embedder that contradicts the
// store's is a usage error (exit 2) like every other (it exited 1).
func TestCLI_ContradictingEmbedderIsUsage(t *testing.T) {
	t.Parallel()
	st := filepath.Join(t.TempDir(), "s")
	require.Equal(t, exitOK, runCLI(t, "", "--store", st, "add", "hello world").code)
	for _, args := range [][]string{{"add", "more"}, {"search", "hello"}, {"stats"}} {
		r := runCLI(t, "", append([]string{"--store", st, "--embedder", "hash:256"}, args...)...)
		assert.Equal(t, exitUsage, r.code, "%v: %s", args, r.stderr)
		assert.Contains(t, r.stderr, "--embedder hash:256", "%v", args)
	}
}

// TestCLI_JSONErrors: with --json a failure is one JSON object on standard
// error, in the HTTP API's shape, with a stable code, and the exit code is
// the text mode's.
func TestCLI_JSONErrors(t *testing.T) {
	t.Parallel()
	bin := buildCLI(t)
	dir := t.TempDir()
	st := filepath.Join(dir, "s")
	require.Equal(t, exitOK, runBin(t, bin, ".", "--store", st, "add", "hello world").code)
	for _, tc := range []struct {
		args []string
		code string
		exit int
	}{
		{[]string{"--store", filepath.Join(dir, "none"), "search", "x"}, "not_found", exitFailure},
		{[]string{"--store", st, "--bogus"}, "usage", exitUsage},
		{[]string{"--store", st, "search", "-k", "0", "x"}, "usage", exitUsage},
		{[]string{"--store", st, "get", "nosuchid"}, "not_found", exitFailure},
		{[]string{"--store", st, "--embedder", "hash:3", "add", "x"}, "embedder_mismatch", exitUsage},
		{[]string{"--store", st, "add", "--max-record-bytes", "4", "hello world"}, "too_large", exitFailure},
	} {
		r := runBin(t, bin, ".", append([]string{"--json"}, tc.args...)...)
		assert.Equal(t, tc.exit, r.code, "%v", tc.args)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		require.Len(t, lines, 1, "%v: %q", tc.args, r.stderr)
		var body struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		require.NoError(t, json.Unmarshal([]byte(lines[0]), &body), "%v: %q", tc.args, r.stderr)
		assert.Equal(t, tc.code, body.Error.Code, "%v: %s", tc.args, body.Error.Message)
		assert.NotEmpty(t, body.Error.Message)
		assert.False(t, strings.HasPrefix(body.Error.Message, "agentmem:"), body.Error.Message)
	}
	r := runBin(t, bin, ".", "--store", st, "get", "nosuchid")
	assert.Equal(t, "agentmem: not found: "+st+" holds no memory with id nosuchid\n", r.stderr, "without --json: the text line")
}
