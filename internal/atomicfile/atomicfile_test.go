package atomicfile

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteReplacesAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	require.NoError(t, WriteBytes(path, []byte("old")))
	require.NoError(t, WriteBytes(path, []byte("new")))

	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new", string(got))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "only the target may remain in the directory")
}

func TestWriteFailureKeepsOldContents(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	require.NoError(t, WriteBytes(path, []byte("old")))

	boom := errors.New("boom")
	err := Write(path, func(w *bufio.Writer) error {
		_, _ = w.WriteString("half")
		return boom
	})
	require.ErrorIs(t, err, boom)

	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "old", string(got), "a failed write must not touch the target")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "the temporary file must be removed")
}

func TestWriteMissingDirectory(t *testing.T) {
	err := WriteBytes(filepath.Join(t.TempDir(), "no", "such", "f"), []byte("x"))
	require.Error(t, err)
	assert.ErrorIs(t, err, os.ErrNotExist)
}
