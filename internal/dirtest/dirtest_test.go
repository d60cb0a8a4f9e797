package dirtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHashes(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a"), []byte("abc"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "b"), []byte(""), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "LOCK"), []byte("123"), 0o644))
	h := Hashes(t, dir, "LOCK")
	assert.Equal(t, map[string]string{
		"a":                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		filepath.Join("sub", "b"): "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	}, h)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "LOCK"), []byte("456"), 0o644))
	assert.Equal(t, h, Hashes(t, dir, "LOCK"), "a skipped file does not count")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a"), []byte("abd"), 0o644))
	assert.NotEqual(t, h, Hashes(t, dir, "LOCK"))
}
