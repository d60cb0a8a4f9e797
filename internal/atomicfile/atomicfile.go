// Package atomicfile replaces files atomically: write to a temporary file in
// the same directory, fsync it, rename it over the target, fsync the
// directory. After a crash the target holds the old or the new contents,
// never a torn mix. ("Without the fsync(2) a zero-length file is a valid and
// possible outcome after the rename", as renameio quotes Ts'o.)
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces path with what fill writes. fill's writer is buffered; Write
// flushes it. If fill or any step fails the temporary file is removed and path
// is untouched.
func Write(path string, fill func(w *bufio.Writer) error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriterSize(tmp, 1<<20)
	if err = fill(w); err != nil {
		return err
	}
	if err = w.Flush(); err != nil {
		return fmt.Errorf("atomicfile: write %s: %w", tmp.Name(), err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("atomicfile: sync %s: %w", tmp.Name(), err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("atomicfile: close %s: %w", tmp.Name(), err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	return SyncDir(dir)
}

// WriteBytes replaces path with data, atomically.
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w *bufio.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// SyncDir fsyncs a directory so that a rename or a new file in it is durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	err = d.Sync()
	// Some file systems refuse fsync on a directory; the rename is then as
	// durable as the file system makes it.
	if err != nil && !errors.Is(err, os.ErrInvalid) {
		d.Close()
		return fmt.Errorf("atomicfile: sync dir %s: %w", dir, err)
	}
	return d.Close()
}
