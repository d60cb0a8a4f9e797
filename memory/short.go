package memory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/semantic"
	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/inmem"
)

// Defaults of [ShortMemory], from seed 000 (SemanticSet.search: number 5,
// minDistance 0.3).
const (
	DefaultTopK     = semantic.DefaultK
	DefaultMinScore = semantic.DefaultMinScore
	// DefaultBackend is the vector database ShortMemory uses unless
	// [WithBackend] says otherwise: vdb/inmem, exact and pure Go.
	DefaultBackend = "inmem"
)

// Errors returned by ShortMemory; test them with errors.Is. Empty segments
// and questions are errors wrapping embed.ErrEmptyText.
var (
	// ErrInvalidOption: an option's value is out of range (k ≤ 0, a minimum
	// score outside [-1, 1], a nil backend).
	ErrInvalidOption = errors.New("memory: invalid option")
	// ErrClosed: the memory was used after Close.
	ErrClosed = errors.New("memory: closed")
	// ErrEmbedderMismatch: a store directory was built with another embedder
	// (or dimension) than the one it is opened with. The error names both.
	ErrEmbedderMismatch = errors.New("memory: store was built with another embedder")
	// ErrFormatVersion: a store directory was written by a newer format
	// version than this build reads.
	ErrFormatVersion = errors.New("memory: store format is newer than this build reads")
	// ErrCorruptStore: a store directory's manifest is missing or cannot be
	// decoded, or its log is corrupt. The error names the file.
	ErrCorruptStore = errors.New("memory: corrupt store")
	// ErrStoreLocked: another process has the store directory open.
	ErrStoreLocked = errors.New("memory: store is in use by another process")
)

// An Option configures [NewShort] and [OpenShort].
type Option func(*config)

type config struct {
	topK     int
	minScore float32
	backend  string
	openDB   func(dim int) (vdb.VectorDatabase, error)
	store    string
	logger   *slog.Logger
	err      error // the first invalid option
}

func (c *config) fail(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("%w: "+format, append([]any{ErrInvalidOption}, args...)...)
	}
}

// WithTopK sets how many segments Search returns at most (default 5). n
// must be positive.
func WithTopK(n int) Option {
	return func(c *config) {
		if n <= 0 {
			c.fail("top k must be positive, got %d", n)
			return
		}
		c.topK = n
	}
}

// WithMinScore sets the lowest cosine similarity a segment needs to be
// returned by Search (default 0.3). s must be in [-1, 1]; 0 is allowed and
// keeps every segment that is not dissimilar.
func WithMinScore(s float32) Option {
	return func(c *config) {
		if !(s >= -1 && s <= 1) { // also catches NaN
			c.fail("minimum score must be in [-1, 1], got %v", s)
			return
		}
		c.minScore = s
	}
}

// WithBackend chooses the vector database: open is called with the
// embedder's dimension and name is recorded in a store's manifest (default
// "inmem", [inmem.New]). For example, with the Faiss backend:
//
//	memory.WithBackend("faiss", func(dim int) (vdb.VectorDatabase, error) { return faiss.New(dim) })
//
// A store reopened with another backend than it was saved with re-embeds its
// segments into the new one.
func WithBackend(name string, open func(dim int) (vdb.VectorDatabase, error)) Option {
	return func(c *config) {
		if name == "" || open == nil {
			c.fail("backend needs a name and an open function")
			return
		}
		c.backend, c.openDB = name, open
	}
}

// WithStore keeps the memory in directory dir (created if needed), so that
// it survives a restart; see [OpenShort].
func WithStore(dir string) Option {
	return func(c *config) {
		if dir == "" {
			c.fail("store directory is empty")
			return
		}
		c.store = dir
	}
}

// WithLogger sets the logger for warnings (a repaired log, a snapshot that
// had to be rebuilt). The default is slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

func newConfig(opts []Option) (config, error) {
	c := config{
		topK:     DefaultTopK,
		minScore: DefaultMinScore,
		backend:  DefaultBackend,
		openDB: func(dim int) (vdb.VectorDatabase, error) {
			return inmem.New(dim)
		},
		logger: slog.Default(),
	}
	for _, o := range opts {
		o(&c)
	}
	return c, c.err
}

// segment is the value ShortMemory keeps beside each text.
type segment struct {
	Time time.Time `json:"time"`
}

// ShortMemory is a semantic [Memory]: seed 000's ShortMemory, a
// [semantic.SemanticMap] from each segment's text to the time it was
// stored, over any embedder and vector database. Search returns the most
// similar segments (by default at most 5 with a cosine similarity of at
// least 0.3).
//
// Without a store it lives in memory only. With [WithStore] or
// [OpenShort] it keeps a directory: every Update is durable when it returns
// (a JSONL log, fsynced), and Close (or Flush) snapshots the vectors so that
// reopening does not re-embed everything.
//
// A ShortMemory is safe for concurrent use by multiple goroutines.
type ShortMemory struct {
	cfg   config
	dim   int
	m     *semantic.SemanticMap[segment]
	store *store // nil without a store directory

	closeOnce sync.Once
	closeErr  error
}

var _ Memory = (*ShortMemory)(nil)

// NewShort returns a ShortMemory over emb. Without options it keeps
// segments in memory (vdb/inmem), and Search returns at most 5 segments
// with a score of at least 0.3. With [WithStore] it opens the directory as
// [OpenShort] does, without a context; prefer OpenShort then.
func NewShort(emb embed.Embedder, opts ...Option) (*ShortMemory, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if cfg.store != "" {
		return openShort(context.Background(), emb, cfg)
	}
	return newShort(context.Background(), emb, cfg)
}

func newShort(ctx context.Context, emb embed.Embedder, cfg config) (*ShortMemory, error) {
	if emb == nil {
		return nil, fmt.Errorf("%w: nil embedder", ErrInvalidOption)
	}
	dim, err := embed.Dimension(ctx, emb)
	if err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	db, err := openDB(cfg, dim)
	if err != nil {
		return nil, err
	}
	m, err := semantic.NewMap[segment](emb, db, nil)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("memory: %w", err)
	}
	return &ShortMemory{cfg: cfg, dim: dim, m: m}, nil
}

func openDB(cfg config, dim int) (vdb.VectorDatabase, error) {
	db, err := cfg.openDB(dim)
	if err != nil {
		return nil, fmt.Errorf("memory: open %s backend: %w", cfg.backend, err)
	}
	if db.Dim() != dim {
		db.Close()
		return nil, fmt.Errorf("memory: %s backend: %w: opened with %d, want %d", cfg.backend, vdb.ErrDimension, db.Dim(), dim)
	}
	return db, nil
}

// Update remembers segment, e.g. one round of conversation. An empty or
// white-space-only segment is an error wrapping embed.ErrEmptyText. With a
// store, the segment is durable when Update returns.
func (s *ShortMemory) Update(ctx context.Context, segment string) error {
	_, err := s.UpdateBatch(ctx, []string{segment})
	return err
}

// UpdateBatch remembers segments and returns their IDs. It embeds them in
// one call and, with a store, makes them durable with one fsync, so it is
// much faster than one Update per segment. It is all or nothing.
func (s *ShortMemory) UpdateBatch(ctx context.Context, segments []string) ([]string, error) {
	now := time.Now().UTC()
	entries := make([]semantic.Entry[segment], len(segments))
	for i, text := range segments {
		entries[i] = semantic.Entry[segment]{Key: text, Value: segment{Time: now}}
	}
	ids, err := s.m.PutBatch(ctx, entries)
	if err != nil {
		return nil, wrapClosed(fmt.Errorf("memory: update: %w", err))
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strconv.FormatInt(id, 10)
	}
	return out, nil
}

// Search returns the remembered segments most similar to question, best
// first: at most the configured top k (default 5), each with a score of at
// least the configured minimum (default 0.3). No match is an empty slice.
func (s *ShortMemory) Search(ctx context.Context, question string) ([]Hit, error) {
	return s.SearchN(ctx, question, s.cfg.topK, s.cfg.minScore)
}

// SearchN is Search with an explicit result count and minimum score.
// k ≤ 0 is an error wrapping vdb.ErrInvalidK.
func (s *ShortMemory) SearchN(ctx context.Context, question string, k int, minScore float32) ([]Hit, error) {
	hits, err := s.m.Search(ctx, question, k, minScore)
	if err != nil {
		return nil, wrapClosed(fmt.Errorf("memory: search: %w", err))
	}
	out := make([]Hit, len(hits))
	for i, h := range hits {
		out[i] = Hit{ID: strconv.FormatInt(h.ID, 10), Text: h.Key, Score: h.Score, Time: h.Value.Time}
	}
	return out, nil
}

// Forget removes segments by ID (as Search and UpdateBatch return them) and
// reports how many were present. Unknown IDs are not an error.
func (s *ShortMemory) Forget(ctx context.Context, ids ...string) (int, error) {
	nums := make([]int64, 0, len(ids))
	for _, id := range ids {
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil || n < 0 {
			continue // not an ID this memory handed out
		}
		nums = append(nums, n)
	}
	n, err := s.m.Delete(ctx, nums...)
	if err != nil {
		return n, wrapClosed(fmt.Errorf("memory: forget: %w", err))
	}
	return n, nil
}

// Segments returns every remembered segment in the order it was stored
// (ascending ID), with a zero Score.
func (s *ShortMemory) Segments() []Hit {
	var out []Hit
	for id, e := range s.m.Index().All() {
		out = append(out, Hit{ID: strconv.FormatInt(id, 10), Text: e.Key, Time: e.Value.Time})
	}
	return out
}

// Len returns the number of remembered segments.
func (s *ShortMemory) Len() int { return s.m.Len() }

// Stats describes a ShortMemory.
type Stats struct {
	Segments int     `json:"segments"`
	Vectors  int     `json:"vectors"`
	Embedder string  `json:"embedder"`
	Dim      int     `json:"dim"`
	Backend  string  `json:"backend"`
	TopK     int     `json:"top_k"`
	MinScore float32 `json:"min_score"`
	// Store is the store directory; empty for a memory without one.
	Store string `json:"store,omitempty"`
	// LogBytes is the size of the store's segment log.
	LogBytes int64 `json:"log_bytes,omitempty"`
	// Unsnapshotted counts log bytes written since the last vector
	// snapshot (they are re-embedded on open until the next Flush).
	Unsnapshotted int64 `json:"unsnapshotted_bytes,omitempty"`
}

// Stats returns counts and configuration.
func (s *ShortMemory) Stats() Stats {
	st := Stats{
		Segments: s.m.Len(),
		Vectors:  s.m.DB().Len(),
		Embedder: s.m.Embedder().Name(),
		Dim:      s.dim,
		Backend:  s.cfg.backend,
		TopK:     s.cfg.topK,
		MinScore: s.cfg.minScore,
	}
	if s.store != nil {
		st.Store = s.store.dir
		st.LogBytes = s.store.log.Offset()
		st.Unsnapshotted = st.LogBytes - s.store.checkpoint()
	}
	return st
}

// Flush snapshots the vector database into the store directory, so that
// reopening it does not re-embed the segments written so far. Segments are
// durable without it; it only saves work on open. Without a store, or when
// nothing changed since the last snapshot, it does nothing.
func (s *ShortMemory) Flush(ctx context.Context) error {
	if s.store == nil {
		return nil
	}
	return s.store.flush(ctx, s.m.DB())
}

// Close flushes a store (see [ShortMemory.Flush]) and releases the memory's
// resources. It is idempotent; other methods return errors wrapping
// [ErrClosed] afterwards.
func (s *ShortMemory) Close() error {
	s.closeOnce.Do(func() {
		var errs []error
		if s.store != nil {
			errs = append(errs, s.store.flush(context.Background(), s.m.DB()))
		}
		errs = append(errs, s.m.Close())
		if s.store != nil {
			errs = append(errs, s.store.unlock())
		}
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// wrapClosed makes an error caused by use after Close match ErrClosed.
func wrapClosed(err error) error {
	if errors.Is(err, semantic.ErrClosed) || errors.Is(err, vdb.ErrClosed) {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return err
}
