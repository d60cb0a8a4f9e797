//go:build !linux

package inmem

// adviseHugePages is a no-op where transparent huge pages are not available.
func adviseHugePages[T any]([]T) {}
