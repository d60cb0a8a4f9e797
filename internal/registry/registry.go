// Package registry holds plug-ins by name, database/sql style: a driver
// package registers itself from init, and a program opens it by the name
// in a spec. embed keeps its embedder schemes in one, vdb its vector
// backends.
package registry

import (
	"fmt"
	"maps"
	"slices"
	"sync"
)

// A Registry maps names to plug-ins of type T. It is safe for concurrent
// use.
type Registry[T any] struct {
	pkg, kind string // name the registry in panics: "vdb", "backend"

	mu sync.RWMutex
	m  map[string]T
}

// New returns an empty registry of pkg's plug-ins of a kind ("embed",
// "scheme").
func New[T any](pkg, kind string) *Registry[T] {
	return &Registry[T]{pkg: pkg, kind: kind, m: map[string]T{}}
}

// Register adds v under name. A name registered twice panics ("embed:
// Register called twice for scheme hash"): a programming error made at
// init time.
func (r *Registry[T]) Register(name string, v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.m[name]; dup {
		panic(fmt.Sprintf("%s: Register called twice for %s %s", r.pkg, r.kind, name))
	}
	r.m[name] = v
}

// Get returns the plug-in registered under name, if any.
func (r *Registry[T]) Get(name string) (T, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.m[name]
	return v, ok
}

// Names returns the registered names, sorted.
func (r *Registry[T]) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Sorted(maps.Keys(r.m))
}
