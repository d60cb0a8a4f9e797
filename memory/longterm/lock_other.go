//go:build !unix

package longterm

import (
	"os"
	"path/filepath"
)

// lockDir only creates dir/LOCK where flock is not available: the caller
// must make sure that one process at a time opens a store.
func lockDir(dir string) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir, lockFileName), os.O_RDWR|os.O_CREATE, 0o644)
}
