//go:build unix

package filelock

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Lock opens path, creating it if needed, and takes an exclusive flock on it
// without waiting. It returns an error wrapping [ErrLocked] when the lock is
// held elsewhere. Close the file to release the lock.
func Lock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, path)
		}
		return nil, fmt.Errorf("filelock: %s: %w", path, err)
	}
	return f, nil
}
