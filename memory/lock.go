package memory

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentmem/agentmem/internal/filelock"
)

// lockDir takes an exclusive, non-blocking lock on dir/lock (flock where the
// platform has it), so that two processes cannot append to the same log.
func lockDir(dir string) (*os.File, error) {
	f, err := filelock.Lock(filepath.Join(dir, lockFile))
	if errors.Is(err, filelock.ErrLocked) {
		return nil, fmt.Errorf("%w: %s", ErrStoreLocked, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("memory: lock: %w", err)
	}
	return f, nil
}

func unlockDir(f *os.File) error {
	// Closing the file releases the lock.
	if err := f.Close(); err != nil {
		return fmt.Errorf("memory: unlock: %w", err)
	}
	return nil
}
