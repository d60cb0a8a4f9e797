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
		f, err := LockWait(t.Context(), path, time.Minute, func(h int, _ string) { waiting <- h })
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

// TestSetNote: a holder's note reaches a waiter and the error of one that
// gives up, with its process id.
func TestSetNote(t *testing.T) {
	path := filepath.Join(t.TempDir(), "LOCK")
	held, err := LockWait(t.Context(), path, 0, nil)
	require.NoError(t, err)
	defer held.Close()
	require.NoError(t, SetNote(held, "agentmem serve\nat http://127.0.0.1:8080"))
	pid, note := Who(path)
	assert.Equal(t, os.Getpid(), pid)
	assert.Equal(t, "agentmem serve at http://127.0.0.1:8080", note)
	assert.Equal(t, os.Getpid(), Holder(path))

	var calls []string
	_, err = LockWait(t.Context(), path, 50*time.Millisecond, func(h int, n string) { calls = append(calls, fmt.Sprint(h, " ", n)) })
	require.ErrorIs(t, err, ErrLocked)
	assert.Equal(t, []string{fmt.Sprint(os.Getpid(), " agentmem serve at http://127.0.0.1:8080")}, calls, "one call, naming the holder")
	assert.Contains(t, err.Error(), fmt.Sprintf("(process %d, agentmem serve at http://127.0.0.1:8080)", os.Getpid()))
}
