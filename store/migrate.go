package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/internal/filelock"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/longterm"
	"github.com/agentmem/agentmem/memory/short"
	"github.com/agentmem/agentmem/semantic"
)

// Files of a short-term store written by the previous release.
const (
	legacyManifest = "manifest.json"
	legacySegments = "segments.jsonl"
	legacyLock     = "lock"
	legacyFormat   = "agentmem.short"
	// migrateTmp is where Migrate builds the new store before it moves
	// it into place.
	migrateTmp = ".migrate-new"
	// logFile is the log of a store in the current format.
	logFile = "memories.log"
	// BackupPrefix starts the name of the directory inside the store where
	// Migrate keeps the previous release's files.
	BackupPrefix = "backup-v1-"
)

// MigrateConfig says how to convert a store.
type MigrateConfig struct {
	// Embedder re-embeds the segments; empty means the one the old store
	// names (which must then be available, e.g. an Ollama server). Another
	// embedder than the old store's is an error wrapping
	// memory.ErrEmbedderMismatch.
	Embedder string
	// Backend is the new store's vector backend spec; empty means the old
	// store's.
	Backend string
	// Logger receives progress and warnings; nil means slog.Default().
	Logger *slog.Logger
}

// MigrateResult describes a conversion.
type MigrateResult struct {
	Segments int    // segments converted (each keeps its id and time)
	Backup   string // directory that holds the previous release's files
	// LogRewritten is set when Migrate rewrote the log of a store in the
	// current format from log format 1 to longterm.LogFormat; Records is
	// then how many records the store holds.
	LogRewritten bool
	Records      int
}

type legacyManifestV1 struct {
	Format   string `json:"format"`
	Version  int    `json:"version"`
	Embedder string `json:"embedder"`
	Dim      int    `json:"dim"`
	Backend  string `json:"backend"`
}

type legacySegment struct {
	Time time.Time `json:"time"`
}

// Migrate converts the short-term store in dir written by the previous
// release (manifest.json with format "agentmem.short", segments.jsonl,
// vectors.BACKEND) into the current format, in place. Each segment keeps
// its id and time; segments are re-embedded with the store's embedder.
//
// Nothing is deleted: the old files are moved into dir/backup-v1-TIME/
// (the result names it). The new store is built beside them first, so an
// error or a crash before the move leaves the old store as it was; a crash
// during the move is finished by running Migrate again.
//
// A store in the current format whose log the previous release wrote (log
// format 1, without sequence numbers; longterm.ReadLogFormat) has its log
// rewritten in longterm.LogFormat: the old log is copied into
// dir/backup-v1-TIME/ and the store is compacted (the result's
// LogRewritten and Records say so). Any other store already in the current
// format is an error wrapping memory.ErrInvalidArgument; a missing one,
// fs.ErrNotExist; one in use, memory.ErrLocked.
func Migrate(ctx context.Context, dir string, cfg MigrateConfig) (MigrateResult, error) {
	if err := checkDir(dir, "migrate"); err != nil {
		return MigrateResult{}, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	tmp := filepath.Join(dir, migrateTmp)
	if _, err := os.Stat(filepath.Join(dir, legacyManifest)); errors.Is(err, fs.ErrNotExist) {
		if _, terr := os.Stat(filepath.Join(tmp, legacyManifest)); terr == nil {
			// A crash after the old files moved away: finish the move.
			return finishMigration(dir, tmp, logger)
		}
		return MigrateResult{}, fmt.Errorf("store: migrate: no memory store in %s: %w", dir, err)
	}
	data, err := os.ReadFile(filepath.Join(dir, legacyManifest))
	if err != nil {
		return MigrateResult{}, fmt.Errorf("store: migrate: %w", err)
	}
	var old legacyManifestV1
	if err := json.Unmarshal(data, &old); err != nil || old.Format != legacyFormat {
		if _, _, _, ierr := Info(dir); ierr == nil {
			if v, err := longterm.ReadLogFormat(dir); err == nil && v < longterm.LogFormat {
				return upgradeLog(ctx, dir, cfg, logger)
			}
			return MigrateResult{}, fmt.Errorf("store: migrate: %w: %s is already in the current format", memory.ErrInvalidArgument, dir)
		}
		return MigrateResult{}, fmt.Errorf("store: migrate: %w: %s: not a short-term store of the previous release", memory.ErrCorrupt, dir)
	}
	if old.Version != 1 || old.Embedder == "" {
		return MigrateResult{}, fmt.Errorf("store: migrate: %w: %s: version %d, embedder %q", memory.ErrVersion, dir, old.Version, old.Embedder)
	}
	lock, err := filelock.Lock(filepath.Join(dir, legacyLock))
	if errors.Is(err, filelock.ErrLocked) {
		return MigrateResult{}, fmt.Errorf("store: migrate: %w: %s", memory.ErrLocked, dir)
	}
	if err != nil {
		return MigrateResult{}, fmt.Errorf("store: migrate: %w", err)
	}
	defer lock.Close()

	embSpec := old.Embedder
	if cfg.Embedder != "" && cfg.Embedder != old.Embedder {
		return MigrateResult{}, fmt.Errorf("store: migrate: %w: %s was built with %s, not %s", memory.ErrEmbedderMismatch, dir, old.Embedder, cfg.Embedder)
	}
	backend := old.Backend
	if cfg.Backend != "" {
		backend = cfg.Backend
	}
	emb, err := embed.Open(embSpec)
	if err != nil {
		return MigrateResult{}, fmt.Errorf("store: migrate: %w", err)
	}
	if err := probeBackend(ctx, emb, backend); err != nil {
		return MigrateResult{}, err
	}
	recs, err := readLegacySegments(dir, tmp, logger)
	if err != nil {
		return MigrateResult{}, err
	}

	// Build the new store beside the old one.
	if err := os.RemoveAll(tmp); err != nil { // a half-built one from an earlier failure
		return MigrateResult{}, fmt.Errorf("store: migrate: %w", err)
	}
	sm, err := short.Open(ctx, tmp, emb, short.WithBackend(backend), short.WithLogger(logger))
	if err != nil {
		return MigrateResult{}, fmt.Errorf("store: migrate: %w", err)
	}
	if _, err := sm.AddBatch(ctx, recs); err != nil {
		sm.Close()
		return MigrateResult{}, fmt.Errorf("store: migrate: %w", err)
	}
	if err := sm.Close(); err != nil {
		return MigrateResult{}, fmt.Errorf("store: migrate: %w", err)
	}
	if got := sm.Info().Dim; got != old.Dim {
		return MigrateResult{}, fmt.Errorf("store: migrate: %w: %s was built at dim %d, %s now makes dim %d",
			memory.ErrEmbedderMismatch, dir, old.Dim, embSpec, got)
	}

	// Move the old files into the backup, the manifest last: until it
	// moves, the directory is still the old store.
	backup := filepath.Join(dir, BackupPrefix+time.Now().UTC().Format("20060102T150405Z"))
	if err := os.Mkdir(backup, 0o755); err != nil {
		return MigrateResult{}, fmt.Errorf("store: migrate: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return MigrateResult{}, fmt.Errorf("store: migrate: %w", err)
	}
	for _, e := range entries {
		n := e.Name()
		if n == legacySegments || strings.HasPrefix(n, "vectors.") {
			if err := os.Rename(filepath.Join(dir, n), filepath.Join(backup, n)); err != nil {
				return MigrateResult{}, fmt.Errorf("store: migrate: %w", err)
			}
		}
	}
	if err := os.Rename(filepath.Join(dir, legacyManifest), filepath.Join(backup, legacyManifest)); err != nil {
		return MigrateResult{}, fmt.Errorf("store: migrate: %w", err)
	}
	res, err := finishMigration(dir, tmp, logger)
	res.Segments, res.Backup = len(recs), backup
	return res, err
}

// upgradeLog rewrites the log of the store in dir, in the current store
// format but with a log of the previous release (format 1, no sequence
// numbers), in the current log format: it copies the old log into
// dir/backup-v1-TIME/ and compacts the store (which also drops forgotten
// records from the log, as Compact always does).
func upgradeLog(ctx context.Context, dir string, cfg MigrateConfig, logger *slog.Logger) (MigrateResult, error) {
	st, err := Open(ctx, dir, Config{Embedder: cfg.Embedder, Backend: cfg.Backend, Logger: logger})
	if err != nil {
		return MigrateResult{}, fmt.Errorf("store: migrate: %w", err)
	}
	defer st.Close()
	backup := filepath.Join(dir, BackupPrefix+time.Now().UTC().Format("20060102T150405Z"))
	if err := os.Mkdir(backup, 0o755); err != nil {
		return MigrateResult{}, fmt.Errorf("store: migrate: %w", err)
	}
	if err := copyFile(filepath.Join(dir, logFile), filepath.Join(backup, logFile)); err != nil {
		return MigrateResult{}, fmt.Errorf("store: migrate: backup: %w", err)
	}
	if err := st.Compact(ctx); err != nil {
		return MigrateResult{}, fmt.Errorf("store: migrate: %w", err)
	}
	res := MigrateResult{Backup: backup, LogRewritten: true, Records: st.Len()}
	if err := st.Close(); err != nil {
		return res, fmt.Errorf("store: migrate: %w", err)
	}
	return res, nil
}

// readLegacySegments reads the old segment log. It reads a copy (in tmp),
// since the reader repairs a torn last line and the original is evidence.
func readLegacySegments(dir, tmp string, logger *slog.Logger) ([]memory.Record, error) {
	if err := os.RemoveAll(tmp); err != nil {
		return nil, fmt.Errorf("store: migrate: %w", err)
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("store: migrate: %w", err)
	}
	defer os.RemoveAll(tmp)
	cp := filepath.Join(tmp, legacySegments)
	if err := copyFile(filepath.Join(dir, legacySegments), cp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("store: migrate: %w", err)
	}
	log, err := semantic.OpenJSONLIndexMap[semantic.Entry[legacySegment]](cp, semantic.WithLogger(logger))
	if err != nil {
		return nil, fmt.Errorf("store: migrate: %w: %w", memory.ErrCorrupt, err)
	}
	defer log.Close()
	var recs []memory.Record
	for id, e := range log.All() {
		recs = append(recs, memory.Record{ID: strconv.FormatInt(id, 10), Text: e.Key, Time: e.Value.Time})
	}
	return recs, nil
}

// finishMigration moves the new store's files from tmp into dir, the
// manifest last, and removes tmp.
func finishMigration(dir, tmp string, logger *slog.Logger) (MigrateResult, error) {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return MigrateResult{}, fmt.Errorf("store: migrate: %w", err)
	}
	for _, e := range entries {
		if n := e.Name(); n != legacyManifest {
			if err := os.Rename(filepath.Join(tmp, n), filepath.Join(dir, n)); err != nil {
				return MigrateResult{}, fmt.Errorf("store: migrate: %w", err)
			}
		}
	}
	if err := os.Rename(filepath.Join(tmp, legacyManifest), filepath.Join(dir, legacyManifest)); err != nil {
		return MigrateResult{}, fmt.Errorf("store: migrate: %w", err)
	}
	if err := os.Remove(tmp); err != nil {
		logger.Warn("store: migrate: temporary directory left behind", "dir", tmp, "err", err)
	}
	return MigrateResult{}, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
