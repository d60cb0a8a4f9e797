package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/internal/filelock"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/longterm"
	"github.com/agentmem/agentmem/store"
	"github.com/agentmem/agentmem/vdb"
)

// open opens the store in --store through the store opener
// (store.OpenURL): a store directory or a PostgreSQL URL. With create
// false a missing store is an error (search and stats have nothing to
// read).
//
// The kind, embedder and backend of a store directory are the store's
// unless --memory, --embedder, --backend or --index are given; for a new
// store they are the flags' (defaults: short, hash:512, inmem). An
// explicit --memory or --embedder that conflicts with the store is an
// error; another backend switches the store to it (its vector indexes are
// rebuilt from the log, without re-embedding). A PostgreSQL store is
// long-term and keeps its vectors itself: --memory short, --backend and
// --index are usage errors for it (see kind). cfg carries
// command-specific settings (TopK, MinScore, ReadOnly).
func (a *app) open(cmd *cobra.Command, create bool, cfg store.Config) (store.Memory, error) {
	kind, err := a.kind(cmd)
	if err != nil {
		return nil, err
	}
	exists := store.Exists(a.store)
	if (!exists && !store.IsURL(a.store)) || flagChanged(cmd, "memory") {
		cfg.Kind = kind
	}
	if (!exists && !store.IsURL(a.store)) || flagChanged(cmd, "embedder") {
		cfg.Embedder = a.embedder
	}
	if !store.IsURL(a.store) {
		if cfg.Backend, err = a.backendSpec(cmd, exists); err != nil {
			return nil, err
		}
	}
	cfg.Create = create
	cfg.LockWait = a.lockWait()
	cfg.Logger = a.logger(cmd)
	st, err := store.OpenURL(cmd.Context(), a.store, cfg)
	if err != nil {
		return nil, a.storeError(err, cfg)
	}
	return st, nil
}

// logger is the stores' logger: warnings on standard error, as JSON lines
// with --json (so that standard error holds JSON only).
func (a *app) logger(cmd *cobra.Command) *slog.Logger {
	opts := &slog.HandlerOptions{Level: slog.LevelWarn}
	if a.json {
		return slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), opts))
	}
	return slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), opts))
}

// where is --store as the CLI prints it: a URL without its password.
func (a *app) where() string { return store.Redact(a.store) }

// dirOnly refuses a command that applies to store directories only
// (repair, migrate) for a PostgreSQL store.
func (a *app) dirOnly(cmd *cobra.Command) error {
	if !store.IsURL(a.store) {
		return nil
	}
	return usageError{fmt.Errorf("%s applies to store directories, not to a PostgreSQL store (%s)", cmd.Name(), a.where())}
}

// lockWait is --wait as store.Config.LockWait (negative: do not wait).
func (a *app) lockWait() time.Duration {
	if a.wait <= 0 {
		return -1
	}
	return a.wait
}

// storeError explains an error of the store opener (or Verify, Repair)
// for the command line, and marks usage mistakes.
func (a *app) storeError(err error, cfg store.Config) error {
	url := store.IsURL(a.store)
	switch {
	case errors.Is(err, fs.ErrNotExist) && (url || !store.Exists(a.store)):
		return notFoundError{fmt.Errorf("no memory store in %s (add or import something first, or pass --store DIR or --store postgres://…)", a.where())}
	case errors.Is(err, embed.ErrUnknownScheme) || errors.Is(err, embed.ErrBadSpec):
		return usageError{fmt.Errorf("--embedder: %w", err)}
	case errors.Is(err, vdb.ErrUnsupported) || (errors.Is(err, vdb.ErrUnknownBackend) && isFaiss(cfg.Backend)):
		// A backend this binary was built without: not a usage mistake.
		// Said once, in the CLI's words (the library's chain says it at
		// every level); the sentinel stays for --json's code.
		return reworded{"--backend faiss: this agentmem was built without Faiss: use make build-faiss (go build -tags faiss; needs cgo and libfaiss-dev) or the container image, which has it", err}
	case errors.Is(err, vdb.ErrUnknownBackend):
		return usageError{fmt.Errorf("unknown --backend %q: %w", store.Redact(a.backend), err)}
	case errors.Is(err, memory.ErrLocked) && !url:
		// One line that names the holder and, for a server, where to
		// write instead (its lock note).
		holder := "another process"
		if pid, note := filelock.Who(filepath.Join(a.store, "LOCK")); pid > 0 && note != "" {
			holder = fmt.Sprintf("process %d, %s", pid, note)
		} else if pid > 0 {
			holder = fmt.Sprintf("process %d", pid)
		}
		return fmt.Errorf("%w: %s is in use by %s; gave up after %s (--wait)", memory.ErrLocked, a.where(), holder, max(a.wait, 0))
	case errors.Is(err, memory.ErrEmbedderMismatch) && cfg.Embedder != "":
		// --embedder contradicts the store: a usage mistake like any other.
		return usageError{fmt.Errorf("--embedder %s: %w", cfg.Embedder, err)}
	case errors.Is(err, memory.ErrCorrupt) && !url:
		return fmt.Errorf("%w\n(agentmem verify --store %s describes the damage; agentmem repair --store %s repairs it, keeping a backup)", err, a.store, a.store)
	}
	return err
}

func isFaiss(spec string) bool {
	name, _ := vdb.ParseSpec(spec)
	return name == "faiss"
}

// kind returns the kind of memory the command works on: the kind of the
// store in --store if there is one (an explicit --memory that disagrees is
// a usage error), else --memory. A PostgreSQL store is long-term; --memory
// short, --backend and --index are usage errors for it.
func (a *app) kind(cmd *cobra.Command) (store.Kind, error) {
	flag, err := store.ParseKind(a.memory)
	if err != nil {
		return "", usageError{fmt.Errorf(`unknown --memory %q (known: short, long)`, a.memory)}
	}
	if store.IsURL(a.store) {
		switch {
		case flagChanged(cmd, "memory") && flag != store.Long:
			return "", usageError{fmt.Errorf("--memory %s, but a PostgreSQL store is long-term (drop --memory, or pass a store directory)", flag)}
		case flagChanged(cmd, "backend") || flagChanged(cmd, "index"):
			return "", usageError{errors.New("--backend and --index apply to store directories: a PostgreSQL store keeps its vectors in its own tables")}
		}
		return store.Long, nil
	}
	if !store.Exists(a.store) {
		return flag, nil
	}
	kind, _, _, err := store.Info(a.store)
	switch {
	case err != nil:
		return "", err
	case flagChanged(cmd, "memory") && kind != flag:
		return "", usageError{fmt.Errorf("--memory %s, but %s holds a %s-term memory store (drop --memory, or pass another --store)",
			flag, a.store, kind)}
	}
	return kind, nil
}

// backendSpec returns the vdb.Open spec of --backend and --index, or "" for
// the store's own when neither was given for an existing store.
func (a *app) backendSpec(cmd *cobra.Command, exists bool) (string, error) {
	name := a.backend
	if exists && !flagChanged(cmd, "backend") {
		if !flagChanged(cmd, "index") {
			return "", nil
		}
		_, _, spec, err := store.Info(a.store)
		if err != nil {
			return "", err
		}
		name, _ = vdb.ParseSpec(spec)
	}
	if a.index == "" {
		return name, nil
	}
	if name != "faiss" {
		return "", usageError{fmt.Errorf("--index %q needs --backend faiss", a.index)}
	}
	return name + ":" + a.index, nil
}

// flagChanged reports whether the user set the named (local or inherited)
// flag on the command line.
func flagChanged(cmd *cobra.Command, name string) bool {
	f := cmd.Flags().Lookup(name)
	if f == nil {
		f = cmd.InheritedFlags().Lookup(name)
	}
	return f != nil && f.Changed
}

// longOnly returns a usage error if one of the named flags, which only a
// long-term store understands, was given for a short-term one (the store
// in --store, else a new one of --memory). It runs before the store is
// opened, so that a refused command creates nothing.
func (a *app) longOnly(cmd *cobra.Command, names ...string) error {
	kind, err := a.kind(cmd)
	if err != nil {
		return err
	}
	if kind == store.Long {
		return nil
	}
	for _, n := range names {
		if flagChanged(cmd, n) {
			return usageError{fmt.Errorf("--%s needs a long-term memory store (--memory long)", n)}
		}
	}
	return nil
}

// recordError makes a record the store refuses (no letter or digit,
// invalid UTF-8) a usage error, and says which flag raises the size limit.
func recordError(err error) error {
	switch {
	case errors.Is(err, memory.ErrEmptyText) || errors.Is(err, memory.ErrInvalidArgument):
		return usageError{err}
	case errors.Is(err, memory.ErrTooLarge):
		return fmt.Errorf("%w (--max-record-bytes raises the limit)", err)
	}
	return err
}

// maxRecordFlag adds --max-record-bytes to a command that writes; its value
// goes to store.Config.MaxRecordBytes (maxRecordBytes).
func (a *app) maxRecordFlag(cmd *cobra.Command) {
	cmd.Flags().IntVar(&a.maxBytes, "max-record-bytes", longterm.DefaultMaxRecordBytes,
		"the largest memory a write takes, in bytes (its text, id, namespace, speaker and tags)")
}

// maxRecordBytes is --max-record-bytes, checked.
func (a *app) maxRecordBytes() (int, error) {
	if a.maxBytes <= 0 {
		return 0, usageError{fmt.Errorf("--max-record-bytes must be positive, got %d", a.maxBytes)}
	}
	return a.maxBytes, nil
}

// closeStore closes mem and joins its error into *err, so that a failed
// snapshot is not lost.
func closeStore(mem io.Closer, err *error) {
	if cerr := mem.Close(); cerr != nil {
		*err = errors.Join(*err, cerr)
	}
}

// usageArgs wraps a cobra argument validator so that its errors exit with
// the usage code 2.
func usageArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := v(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

// noun is what the store's kind calls one memory: a segment (short) or a
// memory (long).
func noun(st store.Memory) string {
	if st.Kind() == store.Long {
		return "memory"
	}
	return "segment"
}

// withStore opens the store (a.open) for a command that exits once do
// returns (store.Config.OneShot), runs do with it and closes it; a failed
// close (a snapshot not written) joins do's error.
func (a *app) withStore(cmd *cobra.Command, create bool, cfg store.Config, do func(store.Memory) error) (err error) {
	cfg.OneShot = true // the command exits once do returns
	st, err := a.open(cmd, create, cfg)
	if err != nil {
		return err
	}
	defer closeStore(st, &err)
	return do(st)
}
