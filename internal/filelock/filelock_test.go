//go:build unix

package filelock

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

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

func TestLockWait_WaitsForRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "LOCK")
	held, err := LockWait(t.Context(), path, 0, nil)
	require.NoError(t, err)
	assert.Equal(t, os.Getpid(), Holder(path), "the holder writes its pid")

	waiting := make(chan int, 1) // the holder the waiter was told of
	done := make(chan error, 1)
	go func() {
		f, err := LockWait(t.Context(), path, time.Minute, func(h int) { waiting <- h })
		if err == nil {
			f.Close()
		}
		done <- err
	}()
	// Release the lock only once the waiter has found it held.
	select {
	case saw := <-waiting:
		assert.Equal(t, os.Getpid(), saw, "the waiter was told whom it waited for")
	case err := <-done:
		t.Fatalf("LockWait returned before waiting: %v", err)
	}
	require.NoError(t, held.Close())
	require.NoError(t, <-done, "the waiter gets the lock once it is released")
}

func TestLockWait_TimesOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "LOCK")
	held, err := LockWait(t.Context(), path, 0, nil)
	require.NoError(t, err)
	defer held.Close()
	start := time.Now()
	_, err = LockWait(t.Context(), path, 120*time.Millisecond, nil)
	require.ErrorIs(t, err, ErrLocked)
	assert.GreaterOrEqual(t, time.Since(start), 120*time.Millisecond)
	assert.Contains(t, err.Error(), fmt.Sprintf("process %d", os.Getpid()))
	assert.Contains(t, err.Error(), "waited")
}
