package semantic

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"os"
	"slices"
	"sync"

	"github.com/agentmem/agentmem/internal/atomicfile"
)

// An IndexMap maps the int64 IDs of a vector database back to values: the
// last link of the chain embedder → vector database → IndexMap. IDs must be
// ≥ 0. Implementations are safe for concurrent use by multiple goroutines.
//
// Values are stored as given (a shallow copy): a value type holding slices or
// maps shares them with the caller, who must not modify them afterwards.
type IndexMap[V any] interface {
	// Get returns the value stored under id.
	Get(id int64) (V, bool)
	// Put stores each item's value under its ID, replacing what was there.
	// The batch is all or nothing: on error nothing was stored.
	Put(items ...Item[V]) error
	// Delete removes the given IDs and reports how many were present.
	// Unknown IDs are not an error.
	Delete(ids ...int64) (int, error)
	// Len returns the number of stored values.
	Len() int
	// MaxID returns the highest ID ever stored, including IDs deleted since,
	// or -1 if none was. Callers that hand out IDs start above it, so that an
	// ID is never reused.
	MaxID() int64
	// All iterates over a snapshot of the stored items in ascending ID order.
	All() iter.Seq2[int64, V]
	// Close releases the map's resources. It is idempotent; every other
	// method except Get, Len, MaxID and All returns ErrClosed afterwards.
	Close() error
}

// Item is one ID and its value.
type Item[V any] struct {
	ID    int64 `json:"id"`
	Value V     `json:"value"`
}

// Errors returned by index maps and semantic maps; test them with errors.Is.
var (
	// ErrClosed: the map was used after Close.
	ErrClosed = errors.New("semantic: map is closed")
	// ErrInvalidID: an ID is negative.
	ErrInvalidID = errors.New("semantic: invalid id")
	// ErrCorrupt: a file holds a line or document that cannot be decoded.
	// The error names the file and, for a JSONL log, the line.
	ErrCorrupt = errors.New("semantic: corrupt file")
	// ErrVersion: a file was written by a newer format version than this
	// build reads.
	ErrVersion = errors.New("semantic: unsupported format version")
)

func checkIDs[V any](items []Item[V]) error {
	for _, it := range items {
		if it.ID < 0 {
			return fmt.Errorf("%w: %d (IDs must be ≥ 0)", ErrInvalidID, it.ID)
		}
	}
	return nil
}

// table is the unsynchronized core both index maps share.
type table[V any] struct {
	m     map[int64]V
	maxID int64
}

func newTable[V any]() table[V] { return table[V]{m: map[int64]V{}, maxID: -1} }

func (t *table[V]) put(id int64, v V) {
	t.m[id] = v
	t.maxID = max(t.maxID, id)
}

func (t *table[V]) del(id int64) bool {
	if _, ok := t.m[id]; !ok {
		return false
	}
	delete(t.m, id)
	return true
}

func (t *table[V]) sortedItems() []Item[V] {
	ids := slices.Sorted(maps.Keys(t.m))
	out := make([]Item[V], len(ids))
	for i, id := range ids {
		out[i] = Item[V]{ID: id, Value: t.m[id]}
	}
	return out
}

func itemsSeq[V any](items []Item[V]) iter.Seq2[int64, V] {
	return func(yield func(int64, V) bool) {
		for _, it := range items {
			if !yield(it.ID, it.Value) {
				return
			}
		}
	}
}

// MemIndexMap is an [IndexMap] held in memory, which can be saved to and
// loaded from a JSON file. The zero value is not ready for use; call
// [NewMemIndexMap] or [LoadMemIndexMap]. It is safe for concurrent use by
// multiple goroutines.
type MemIndexMap[V any] struct {
	mu     sync.RWMutex // guards t and closed
	t      table[V]
	closed bool
}

var _ IndexMap[int] = (*MemIndexMap[int])(nil)

// NewMemIndexMap returns an empty in-memory index map.
func NewMemIndexMap[V any]() *MemIndexMap[V] {
	return &MemIndexMap[V]{t: newTable[V]()}
}

// memFileVersion is the format version of the JSON file MemIndexMap.Save writes.
const memFileVersion = 1

// memFile is the JSON document MemIndexMap.Save writes.
type memFile[V any] struct {
	Version int       `json:"version"`
	MaxID   int64     `json:"max_id"`
	Items   []Item[V] `json:"items"`
}

// Get implements [IndexMap].
func (m *MemIndexMap[V]) Get(id int64) (V, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	v, ok := m.t.m[id]
	return v, ok
}

// Put implements [IndexMap].
func (m *MemIndexMap[V]) Put(items ...Item[V]) error {
	if err := checkIDs(items); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	for _, it := range items {
		m.t.put(it.ID, it.Value)
	}
	return nil
}

// Delete implements [IndexMap].
func (m *MemIndexMap[V]) Delete(ids ...int64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return 0, ErrClosed
	}
	n := 0
	for _, id := range ids {
		if m.t.del(id) {
			n++
		}
	}
	return n, nil
}

// Len implements [IndexMap].
func (m *MemIndexMap[V]) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.t.m)
}

// MaxID implements [IndexMap].
func (m *MemIndexMap[V]) MaxID() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.t.maxID
}

// All implements [IndexMap].
func (m *MemIndexMap[V]) All() iter.Seq2[int64, V] {
	m.mu.RLock()
	items := m.t.sortedItems()
	m.mu.RUnlock()
	return itemsSeq(items)
}

// Close implements [IndexMap]. The contents stay readable.
func (m *MemIndexMap[V]) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}

// Save writes the map to path as one JSON document, items sorted by ID, and
// replaces path atomically (temporary file, fsync, rename, directory fsync).
func (m *MemIndexMap[V]) Save(path string) error {
	m.mu.RLock()
	doc := memFile[V]{Version: memFileVersion, MaxID: m.t.maxID, Items: m.t.sortedItems()}
	m.mu.RUnlock()
	return atomicfile.Write(path, func(w *bufio.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			return fmt.Errorf("semantic: save %s: %w", path, err)
		}
		return nil
	})
}

// LoadMemIndexMap reads a map that [MemIndexMap.Save] wrote. A file of a
// newer format is an error wrapping [ErrVersion]; one that cannot be decoded
// wraps [ErrCorrupt]. Errors name the file.
func LoadMemIndexMap[V any](path string) (*MemIndexMap[V], error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("semantic: load: %w", err)
	}
	var head struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	switch {
	case head.Version == nil || *head.Version < 1:
		return nil, fmt.Errorf("%w: %s: missing format version", ErrCorrupt, path)
	case *head.Version > memFileVersion:
		return nil, fmt.Errorf("%w: %s has version %d, this build reads up to %d", ErrVersion, path, *head.Version, memFileVersion)
	}
	var doc memFile[V]
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	m := NewMemIndexMap[V]()
	for _, it := range doc.Items {
		if it.ID < 0 {
			return nil, fmt.Errorf("%w: %s: negative id %d", ErrCorrupt, path, it.ID)
		}
		m.t.put(it.ID, it.Value)
	}
	m.t.maxID = max(m.t.maxID, doc.MaxID)
	return m, nil
}
