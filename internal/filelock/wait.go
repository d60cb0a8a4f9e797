package filelock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// LockWait is Lock that waits up to wait for a lock held elsewhere,
// polling, and calls waiting (if not nil) once, with the holder's process
// id and note (see [SetNote]), when it starts waiting: as soon as the
// holder's id can be read, which a holder that has just taken the lock
// writes a moment later (0 if it cannot be read within a quarter of a
// second). When it gets the lock it writes its own process id into the
// file, so that the next waiter can say whom it waits for. A lock still
// held after wait is an error wrapping [ErrLocked] that names the holder,
// its note and how long it waited; a cancelled ctx ends the wait with
// ctx's error.
func LockWait(ctx context.Context, path string, wait time.Duration, waiting func(holder int, note string)) (*os.File, error) {
	start := time.Now()
	delay := 5 * time.Millisecond
	announced := false
	for {
		f, err := Lock(path)
		if err == nil {
			if err := write(f, strconv.Itoa(os.Getpid())); err != nil {
				f.Close()
				return nil, err
			}
			return f, nil
		}
		if !errors.Is(err, ErrLocked) {
			return nil, err
		}
		waited := time.Since(start)
		pid, note := Who(path)
		if waited >= wait {
			holder := ""
			switch {
			case pid > 0 && note != "":
				holder = fmt.Sprintf(" (process %d, %s)", pid, note)
			case pid > 0:
				holder = fmt.Sprintf(" (process %d)", pid)
			}
			return nil, fmt.Errorf("%w%s: %s: waited %s", ErrLocked, holder, path, waited.Round(time.Millisecond))
		}
		if !announced && (pid > 0 || waited >= announceAfter) {
			announced = true
			if waiting != nil {
				waiting(pid, note)
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

// announceAfter is how long LockWait waits for a holder's process id
// before it says that it waits without one.
const announceAfter = 250 * time.Millisecond

// SetNote writes note beside the process id in the lock file f that
// LockWait returned, for waiters to read (what the holder is, e.g. a
// server and its address). It is one line: line breaks become spaces.
func SetNote(f *os.File, note string) error {
	note = strings.Join(strings.Fields(note), " ")
	return write(f, strconv.Itoa(os.Getpid())+" "+note)
}

// write replaces the content of the lock file f with line, writing before
// truncating, so that a reader never finds it empty.
func write(f *os.File, line string) error {
	b := []byte(line + "\n")
	if _, err := f.WriteAt(b, 0); err != nil {
		return fmt.Errorf("filelock: %s: %w", f.Name(), err)
	}
	if err := f.Truncate(int64(len(b))); err != nil {
		return fmt.Errorf("filelock: %s: %w", f.Name(), err)
	}
	return nil
}

// Holder returns the process id that the holder of the lock at path wrote
// into it (LockWait does), or 0 if none can be read.
func Holder(path string) int {
	pid, _ := Who(path)
	return pid
}

// Who returns the process id and the note (SetNote) that the holder of the
// lock at path wrote into it; pid is 0 if none can be read.
func Who(path string) (pid int, note string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, ""
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	id, rest, _ := strings.Cut(strings.TrimSpace(string(line)), " ")
	pid, err = strconv.Atoi(id)
	if err != nil || pid <= 0 {
		return 0, ""
	}
	return pid, strings.TrimSpace(rest)
}
