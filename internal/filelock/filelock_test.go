//go:build unix

package filelock

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLockIsExclusiveUntilClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "LOCK")
	f, err := Lock(path)
	require.NoError(t, err)

	_, err = Lock(path)
	assert.ErrorIs(t, err, ErrLocked, "a second Lock must fail while the first is held")

	require.NoError(t, f.Close())
	g, err := Lock(path)
	require.NoError(t, err, "closing the file must release the lock")
	require.NoError(t, g.Close())
}

func TestLockMissingDirectory(t *testing.T) {
	_, err := Lock(filepath.Join(t.TempDir(), "no", "LOCK"))
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrLocked)
}
