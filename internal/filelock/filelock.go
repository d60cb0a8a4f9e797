// Package filelock takes an exclusive, non-blocking advisory lock on a file,
// so that two processes never append to the same store. The lock belongs to
// the open file: closing it, or the death of the process, releases it, so a
// killed writer leaves no stale lock behind.
package filelock

import "errors"

// ErrLocked: another process (or another open file in this one) holds the
// lock.
var ErrLocked = errors.New("filelock: held by another process")
