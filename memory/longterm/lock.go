package longterm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/agentmem/agentmem/internal/filelock"
)

// lockDir takes an exclusive lock on dir/LOCK (flock where the platform has
// it), so that two processes never append to one log. It waits up to wait
// for another writer to finish, and says so on logger, once, naming the
// holder (its process id and what it noted, see WithLockNote) when it has
// to.
func lockDir(ctx context.Context, dir string, wait time.Duration, logger *slog.Logger) (*os.File, error) {
	path := filepath.Join(dir, lockFileName)
	f, err := filelock.LockWait(ctx, path, wait, func(pid int, note string) {
		holder := "another process"
		switch {
		case pid > 0 && note != "":
			holder = fmt.Sprintf("process %d (%s)", pid, note)
		case pid > 0:
			holder = fmt.Sprintf("process %d", pid)
		}
		logger.Warn(fmt.Sprintf("longterm: %s is in use by %s; waiting up to %s", dir, holder, wait))
	})
	if errors.Is(err, filelock.ErrLocked) {
		return nil, fmt.Errorf("%w: %s: %w", ErrLocked, dir, err)
	}
	if err != nil {
		return nil, fmt.Errorf("longterm: lock: %w", err)
	}
	return f, nil
}
