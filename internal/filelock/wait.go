package filelock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// LockWait is Lock that waits up to wait for a lock held elsewhere,
// polling, and calls waiting (if not nil) once, with the holder's process
// id (0 if unknown), when it starts waiting. When it gets the lock it
// writes its own process id into the file, so that the next waiter can say
// whom it waits for. A lock still held after wait is an error wrapping
// [ErrLocked] that names the holder and how long it waited; a cancelled
// ctx ends the wait with ctx's error.
func LockWait(ctx context.Context, path string, wait time.Duration, waiting func(holder int)) (*os.File, error) {
	start := time.Now()
	delay := 5 * time.Millisecond
	announced := false
	for {
		f, err := Lock(path)
		if err == nil {
			_ = f.Truncate(0)
			_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
			return f, nil
		}
		if !errors.Is(err, ErrLocked) {
			return nil, err
		}
		waited := time.Since(start)
		if waited >= wait {
			holder := ""
			if pid := Holder(path); pid > 0 {
				holder = fmt.Sprintf(" (process %d)", pid)
			}
			return nil, fmt.Errorf("%w%s: %s: waited %s", ErrLocked, holder, path, waited.Round(time.Millisecond))
		}
		if !announced {
			announced = true
			if waiting != nil {
				waiting(Holder(path))
			}
		}
		t := time.NewTimer(min(delay, wait-waited))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("filelock: waiting for %s: %w", path, ctx.Err())
		case <-t.C:
		}
		delay = min(2*delay, 100*time.Millisecond)
	}
}

// Holder returns the process id that the holder of the lock at path wrote
// into it (LockWait does), or 0 if none can be read.
func Holder(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
