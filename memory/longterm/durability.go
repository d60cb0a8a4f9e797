package longterm

import (
	"fmt"
	"time"

	"github.com/agentmem/agentmem/memory"
)

// Defaults of the store options.
const (
	// DefaultMaxRecordBytes is the largest record Add accepts (its text,
	// id, namespace, speaker and tags together): a larger one is an error
	// wrapping memory.ErrTooLarge, returned before anything is embedded.
	DefaultMaxRecordBytes = 4 << 20
	// DefaultLockWait is how long Open waits for a store locked by another
	// writer (WithLockWait).
	DefaultLockWait = 5 * time.Second
)

// ErrReadOnly: a write (Add, Forget, Snapshot, Compact, Sync) to a memory
// opened WithReadOnly. It wraps [memory.ErrUnsupported].
var ErrReadOnly = fmt.Errorf("%w: store opened read-only", memory.ErrUnsupported)

// storeOptions are the options of the storage side.
type storeOptions struct {
	readOnly       bool
	lockWait       time.Duration
	lockNote       string
	maxRecordBytes int
}

func defaultStoreOptions() storeOptions {
	return storeOptions{lockWait: DefaultLockWait, maxRecordBytes: DefaultMaxRecordBytes}
}

// WithReadOnly opens a store for reading only: Open takes no lock (a
// writer may hold it meanwhile), writes nothing — no manifest upgrade, no
// torn-tail repair, no clean-up, no snapshot at Close — and reads the
// latest snapshot plus the log up to its last complete record: a
// consistent view of every write acknowledged before Open. A missing store
// is an error wrapping os.ErrNotExist. Writes return [ErrReadOnly].
func WithReadOnly() Option {
	return func(o *options) error {
		o.store.readOnly = true
		return nil
	}
}

// WithLockWait sets how long Open waits for a store that another writer
// holds (DefaultLockWait; 0: not at all) before it fails with an error
// wrapping [ErrLocked] that names the holder's process id. d must be ≥ 0.
func WithLockWait(d time.Duration) Option {
	return func(o *options) error {
		if d < 0 {
			return fmt.Errorf("lock wait %s is negative", d)
		}
		o.store.lockWait = d
		return nil
	}
}

// WithLockNote sets what a writer's lock file says about it beside its
// process id, e.g. "agentmem serve, API at http://127.0.0.1:8080/v1": a
// writer that waits for the store, and the ErrLocked error of one that
// gives up, repeat it, so that a user learns what holds the store and
// where to write instead.
func WithLockNote(note string) Option {
	return func(o *options) error {
		o.store.lockNote = note
		return nil
	}
}

// WithMaxRecordBytes sets the largest record Add and AddBatch accept
// (DefaultMaxRecordBytes), counting its text, id, namespace, speaker and
// tags: a larger one is an error wrapping [memory.ErrTooLarge] before
// anything is embedded or written. n must be positive.
func WithMaxRecordBytes(n int) Option {
	return func(o *options) error {
		if n <= 0 {
			return fmt.Errorf("max record bytes must be positive, got %d", n)
		}
		o.store.maxRecordBytes = n
		return nil
	}
}

// recordBytes is the size of r that WithMaxRecordBytes limits.
func recordBytes(r *Record) int {
	n := len(r.Text) + len(r.ID) + len(r.Namespace) + len(r.Speaker)
	for _, t := range r.Tags {
		n += len(t)
	}
	return n
}

// checkSize refuses a record above the limit.
func (m *Memory) checkSize(r *Record) error {
	if n := recordBytes(r); n > m.opts.store.maxRecordBytes {
		return fmt.Errorf("longterm: %w: record %q is %d bytes, the limit is %d",
			memory.ErrTooLarge, r.ID, n, m.opts.store.maxRecordBytes)
	}
	return nil
}

// writable returns ErrReadOnly when m takes no writes. (A log whose
// failed append could not be rolled back refuses appends itself.)
func (m *Memory) writable() error {
	if m.opts.store.readOnly {
		return ErrReadOnly
	}
	return nil
}
