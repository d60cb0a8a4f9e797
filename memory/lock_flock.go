//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package memory

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes an exclusive, non-blocking flock on dir/lock, so that two
// processes cannot append to the same log. The kernel drops the lock when
// the process dies.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", ErrStoreLocked, dir)
		}
		return nil, fmt.Errorf("memory: lock %s: %w", path, err)
	}
	return f, nil
}

func unlockDir(f *os.File) error {
	// Closing the file releases the flock.
	if err := f.Close(); err != nil {
		return fmt.Errorf("memory: unlock: %w", err)
	}
	return nil
}
