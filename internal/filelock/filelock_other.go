//go:build !unix

package filelock

import "os"

// Lock opens path, creating it if needed. Where flock is not available it
// locks nothing: the caller must make sure that one process at a time opens
// a store.
func Lock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
}
