package semantic

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/agentmem/agentmem/internal/atomicfile"
)

// JSONLIndexMap is an [IndexMap] kept in memory and backed by an append-only
// JSON Lines log on disk. Each Put appends one line per item,
//
//	{"id":3,"value":...}
//
// and each Delete one line per ID that was present,
//
//	{"id":3,"deleted":true}
//
// Opening the log replays it. A Put or Delete is durable when it returns:
// the lines of one call are written with one write and made durable with one
// fsync, and concurrent calls share fsyncs (group commit: a writer whose
// lines another goroutine's fsync already covered does not sync again), so
// both batching and concurrency amortise the fsync.
//
// The memory stores no longer use it (memory/short and memory/longterm share
// longterm's binary log); store.Migrate reads the previous release's
// segments.jsonl with it.
//
// If the process dies in the middle of a write, the log ends in a torn line
// (no final newline). [OpenJSONLIndexMap] repairs that as etcd's wal.Repair
// does: it copies the file to <path>.broken, truncates the torn line, fsyncs
// and logs a warning. Any other line that cannot be decoded is an error
// naming the file and line ([LineError], wrapping [ErrCorrupt]); nothing is
// repaired then.
//
// A JSONLIndexMap is safe for concurrent use by multiple goroutines. The
// log must not be opened by two maps (or two processes) at the same time.
type JSONLIndexMap[V any] struct {
	path string

	// syncMu is held by the goroutine running an fsync, and by Close; it
	// is taken before mu, never while holding mu.
	syncMu sync.Mutex

	mu      sync.RWMutex // guards everything below
	t       table[V]     // the state of the durable records
	f       *os.File
	written int64          // bytes written to the log (complete lines)
	durable int64          // bytes known to be on stable storage
	pending []pendingApply // writes not yet durable, in log order
	broken  error          // sticky: set when a failed write or fsync left the log in an unknown state
	closed  bool
}

// pendingApply is a write waiting for its fsync: once the log is durable up
// to end, apply makes it visible.
type pendingApply struct {
	end   int64
	apply func()
}

var _ IndexMap[int] = (*JSONLIndexMap[int])(nil)

// JSONLOption configures [OpenJSONLIndexMap].
type JSONLOption func(*jsonlConfig)

type jsonlConfig struct {
	logger *slog.Logger
}

// WithLogger sets the logger that receives the torn-tail repair warning.
// The default is slog.Default().
func WithLogger(l *slog.Logger) JSONLOption {
	return func(c *jsonlConfig) {
		if l != nil {
			c.logger = l
		}
	}
}

// LineError reports a line of a JSONL log that cannot be decoded. It matches
// [ErrCorrupt] under errors.Is.
type LineError struct {
	Path string // the log file
	Line int    // 1-based line number
	Err  error  // what was wrong
}

// Error returns "semantic: PATH:LINE: what was wrong".
func (e *LineError) Error() string {
	return fmt.Sprintf("semantic: %s:%d: %v", e.Path, e.Line, e.Err)
}

// Unwrap returns ErrCorrupt and the underlying error.
func (e *LineError) Unwrap() []error { return []error{ErrCorrupt, e.Err} }

// Op is one record of a JSONL log: a put of Value under ID, or a delete.
type Op[V any] struct {
	ID      int64
	Value   V // zero for a delete
	Deleted bool
}

// logLine is the on-disk shape of one record, as read back.
type logLine struct {
	ID      *int64          `json:"id"`
	Value   json.RawMessage `json:"value"`
	Deleted bool            `json:"deleted"`
}

type putLine[V any] struct {
	ID    int64 `json:"id"`
	Value V     `json:"value"`
}

type delLine struct {
	ID      int64 `json:"id"`
	Deleted bool  `json:"deleted"`
}

func decodeLine[V any](line []byte) (Op[V], error) {
	var rec logLine
	if err := json.Unmarshal(line, &rec); err != nil {
		return Op[V]{}, err
	}
	switch {
	case rec.ID == nil:
		return Op[V]{}, errors.New(`record has no "id"`)
	case *rec.ID < 0:
		return Op[V]{}, fmt.Errorf("negative id %d", *rec.ID)
	case rec.Deleted && rec.Value != nil:
		return Op[V]{}, errors.New(`record has both "value" and "deleted"`)
	case rec.Deleted:
		return Op[V]{ID: *rec.ID, Deleted: true}, nil
	case rec.Value == nil:
		return Op[V]{}, errors.New(`record has neither "value" nor "deleted"`)
	}
	op := Op[V]{ID: *rec.ID}
	if err := json.Unmarshal(rec.Value, &op.Value); err != nil {
		return Op[V]{}, fmt.Errorf("value: %w", err)
	}
	return op, nil
}

// scanLog reads complete lines from r, starting at line number first+1,
// and calls fn for each decoded record. It returns the byte length of the
// complete lines and their count, and whether a torn (newline-less) tail
// followed them.
func scanLog[V any](r io.Reader, path string, first int, fn func(Op[V])) (size int64, lines int, torn bool, err error) {
	br := bufio.NewReaderSize(r, 1<<16)
	for {
		line, rerr := br.ReadSlice('\n')
		if rerr == bufio.ErrBufferFull {
			// A long line: gather the rest of it.
			buf := bytes.Clone(line)
			for rerr == bufio.ErrBufferFull {
				line, rerr = br.ReadSlice('\n')
				buf = append(buf, line...)
			}
			line = buf
		}
		if n := len(line); n > 0 && line[n-1] == '\n' {
			op, derr := decodeLine[V](line[:n-1])
			if derr != nil {
				return size, lines, false, &LineError{Path: path, Line: first + lines + 1, Err: derr}
			}
			fn(op)
			size += int64(n)
			lines++
			continue
		}
		if rerr == io.EOF {
			return size, lines, len(line) > 0, nil
		}
		if rerr != nil {
			return size, lines, false, fmt.Errorf("semantic: read %s: %w", path, rerr)
		}
	}
}

// OpenJSONLIndexMap opens (creating if needed) the JSONL log at path and
// replays it. A torn last line is repaired with a warning; any other bad line
// is a [*LineError].
func OpenJSONLIndexMap[V any](path string, opts ...JSONLOption) (*JSONLIndexMap[V], error) {
	cfg := jsonlConfig{logger: slog.Default()}
	for _, o := range opts {
		o(&cfg)
	}
	_, statErr := os.Stat(path)
	created := errors.Is(statErr, os.ErrNotExist)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("semantic: open log: %w", err)
	}
	if created {
		if err := atomicfile.SyncDir(filepath.Dir(path)); err != nil {
			f.Close()
			return nil, err
		}
	}
	m := &JSONLIndexMap[V]{path: path, t: newTable[V](), f: f}
	size, lines, torn, err := scanLog(f, path, 0, func(op Op[V]) {
		if op.Deleted {
			m.t.del(op.ID)
		} else {
			m.t.put(op.ID, op.Value)
		}
	})
	if err == nil && torn {
		err = repairTail(f, path, size, lines+1, cfg.logger)
	}
	if err == nil {
		_, err = f.Seek(size, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	m.written, m.durable = size, size
	return m, nil
}

// repairTail keeps a copy of the whole log in path.broken and truncates the
// torn line that starts at offset good.
func repairTail(f *os.File, path string, good int64, line int, log *slog.Logger) error {
	broken := path + ".broken"
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("semantic: repair %s: %w", path, err)
	}
	err := atomicfile.Write(broken, func(w *bufio.Writer) error {
		_, err := io.Copy(w, f)
		return err
	})
	if err != nil {
		return fmt.Errorf("semantic: repair %s: keep copy: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("semantic: repair %s: %w", path, err)
	}
	if err := f.Truncate(good); err != nil {
		return fmt.Errorf("semantic: repair %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("semantic: repair %s: %w", path, err)
	}
	log.Warn("semantic: repaired torn last line of log (an unfinished write before a crash)",
		"file", path, "line", line, "dropped_bytes", fi.Size()-good, "copy", broken)
	return nil
}

// Path returns the log's file name.
func (m *JSONLIndexMap[V]) Path() string { return m.path }

// Offset returns the length in bytes of the durable part of the log. A
// caller that snapshots state derived from the map records it, and later
// catches up with [JSONLIndexMap.ReadSince].
func (m *JSONLIndexMap[V]) Offset() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.durable
}

// ReadSince returns the records appended after offset, which must be a value
// [JSONLIndexMap.Offset] returned for this log.
func (m *JSONLIndexMap[V]) ReadSince(offset int64) ([]Op[V], error) {
	m.mu.RLock()
	end := m.durable
	m.mu.RUnlock()
	if offset < 0 || offset > end {
		return nil, fmt.Errorf("semantic: %s: offset %d outside the log (%d bytes)", m.path, offset, end)
	}
	f, err := os.Open(m.path)
	if err != nil {
		return nil, fmt.Errorf("semantic: %w", err)
	}
	defer f.Close()
	if offset > 0 {
		var b [1]byte
		if _, err := f.ReadAt(b[:], offset-1); err != nil {
			return nil, fmt.Errorf("semantic: %s: %w", m.path, err)
		}
		if b[0] != '\n' {
			return nil, fmt.Errorf("semantic: %s: offset %d is not at a line boundary", m.path, offset)
		}
	}
	var ops []Op[V]
	_, _, _, err = scanLog(io.NewSectionReader(f, offset, end-offset), m.path, 0, func(op Op[V]) {
		ops = append(ops, op)
	})
	if err != nil {
		return nil, err
	}
	return ops, nil
}

// appendLocked writes buf at the end of the log and queues apply to run
// once it is durable. It returns the log offset the caller must wait for
// with waitDurable. m.mu is held.
func (m *JSONLIndexMap[V]) appendLocked(buf []byte, apply func()) (int64, error) {
	if m.closed {
		return 0, ErrClosed
	}
	if m.broken != nil {
		return 0, m.broken
	}
	if _, err := m.f.Write(buf); err != nil {
		// Try to cut the partial write off so that the log stays usable.
		if terr := m.f.Truncate(m.written); terr == nil {
			if _, serr := m.f.Seek(m.written, io.SeekStart); serr == nil {
				return 0, fmt.Errorf("semantic: append to %s: %w", m.path, err)
			}
		}
		m.broken = fmt.Errorf("semantic: log %s unusable after a failed write: %w", m.path, err)
		return 0, m.broken
	}
	m.written += int64(len(buf))
	m.pending = append(m.pending, pendingApply{end: m.written, apply: apply})
	return m.written, nil
}

// waitDurable returns once the log is durable up to end, running an fsync
// unless another goroutine's fsync already covered it (group commit).
func (m *JSONLIndexMap[V]) waitDurable(end int64) error {
	m.syncMu.Lock()
	defer m.syncMu.Unlock()
	m.mu.RLock()
	done, broken, target := m.durable >= end, m.broken, m.written
	m.mu.RUnlock()
	switch {
	case done:
		return nil
	case broken != nil:
		return broken
	}
	err := m.f.Sync()
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		// After a failed fsync the kernel's view of the file can no longer
		// be trusted; refuse further writes rather than risk silent loss.
		// The pending writes never become visible.
		m.broken = fmt.Errorf("semantic: log %s unusable after a failed fsync: %w", m.path, err)
		m.pending = nil
		return m.broken
	}
	m.durable = target
	n := 0
	for _, p := range m.pending {
		if p.end > target {
			break
		}
		p.apply()
		n++
	}
	m.pending = slices.Delete(m.pending, 0, n)
	return nil
}

// Get implements [IndexMap].
func (m *JSONLIndexMap[V]) Get(id int64) (V, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	v, ok := m.t.m[id]
	return v, ok
}

// Put implements [IndexMap]. It returns once the records are durable.
func (m *JSONLIndexMap[V]) Put(items ...Item[V]) error {
	if err := checkIDs(items); err != nil {
		return err
	}
	if len(items) == 0 {
		return nil
	}
	encoded, err := encodeItems(items)
	if err != nil {
		return err
	}
	wait, err := m.putAsync(encoded, items)
	if err != nil {
		return err
	}
	return wait()
}

// putAsync appends encoded items to the log and returns a function that
// waits until they are durable (and visible). It lets a caller holding its
// own lock release it before the fsync, so that concurrent writers share it.
func (m *JSONLIndexMap[V]) putAsync(encoded []byte, items []Item[V]) (wait func() error, err error) {
	m.mu.Lock()
	end, err := m.appendLocked(encoded, func() {
		for _, it := range items {
			m.t.put(it.ID, it.Value)
		}
	})
	m.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return func() error { return m.waitDurable(end) }, nil
}

// putAsyncItems implements asyncPutter for SemanticMap.
func (m *JSONLIndexMap[V]) putAsyncItems(items []Item[V]) (wait func() error, err error) {
	if err := checkIDs(items); err != nil {
		return nil, err
	}
	encoded, err := encodeItems(items)
	if err != nil {
		return nil, err
	}
	return m.putAsync(encoded, items)
}

// encodeItems returns the log lines for items.
func encodeItems[V any](items []Item[V]) ([]byte, error) {
	var buf bytes.Buffer
	for _, it := range items {
		b, err := json.Marshal(putLine[V]{ID: it.ID, Value: it.Value})
		if err != nil {
			return nil, fmt.Errorf("semantic: encode id %d: %w", it.ID, err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

// Delete implements [IndexMap]. It logs a record for each ID that was
// present and returns once they are durable.
func (m *JSONLIndexMap[V]) Delete(ids ...int64) (int, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return 0, ErrClosed
	}
	var buf bytes.Buffer
	var present []int64
	seen := make(map[int64]bool, len(ids))
	for _, id := range ids {
		if _, ok := m.t.m[id]; !ok || seen[id] {
			continue
		}
		seen[id] = true
		b, _ := json.Marshal(delLine{ID: id, Deleted: true}) // cannot fail
		buf.Write(b)
		buf.WriteByte('\n')
		present = append(present, id)
	}
	if len(present) == 0 {
		m.mu.Unlock()
		return 0, nil
	}
	end, err := m.appendLocked(buf.Bytes(), func() {
		for _, id := range present {
			m.t.del(id)
		}
	})
	m.mu.Unlock()
	if err != nil {
		return 0, err
	}
	if err := m.waitDurable(end); err != nil {
		return 0, err
	}
	return len(present), nil
}

// Len implements [IndexMap].
func (m *JSONLIndexMap[V]) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.t.m)
}

// MaxID implements [IndexMap].
func (m *JSONLIndexMap[V]) MaxID() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.t.maxID
}

// All implements [IndexMap].
func (m *JSONLIndexMap[V]) All() iter.Seq2[int64, V] {
	m.mu.RLock()
	items := m.t.sortedItems()
	m.mu.RUnlock()
	return itemsSeq(items)
}

// Close closes the log file. It is idempotent. The contents stay readable.
// Writes still waiting for their fsync are made durable first.
func (m *JSONLIndexMap[V]) Close() error {
	m.syncMu.Lock()
	defer m.syncMu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	var errs []error
	if m.written > m.durable && m.broken == nil {
		if err := m.f.Sync(); err != nil {
			m.broken = fmt.Errorf("semantic: log %s unusable after a failed fsync: %w", m.path, err)
			errs = append(errs, m.broken)
		} else {
			m.durable = m.written
			for _, p := range m.pending {
				p.apply()
			}
		}
		m.pending = nil
	}
	if err := m.f.Close(); err != nil {
		errs = append(errs, fmt.Errorf("semantic: close %s: %w", m.path, err))
	}
	return errors.Join(errs...)
}
