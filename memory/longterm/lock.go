package longterm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentmem/agentmem/internal/filelock"
)

// lockDir takes an exclusive, non-blocking lock on dir/LOCK (flock where the
// platform has it), so that two processes never append to one log.
func lockDir(dir string) (*os.File, error) {
	f, err := filelock.Lock(filepath.Join(dir, lockFileName))
	if errors.Is(err, filelock.ErrLocked) {
		return nil, fmt.Errorf("%w: %s", ErrLocked, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("longterm: lock: %w", err)
	}
	return f, nil
}
