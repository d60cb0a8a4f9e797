//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package memory

import "os"

// lockDir does nothing on this platform: the caller must make sure that
// only one process opens a store at a time.
func lockDir(string) (*os.File, error) { return nil, nil }

func unlockDir(*os.File) error { return nil }
