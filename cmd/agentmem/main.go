// Command agentmem is the command-line face of the agentmem library: it adds
// to, searches, imports into and evaluates a memory store on disk, and chats
// with an Ollama model that remembers.
//
// Each subcommand lives in its own file with its constructor; newRootCmd
// puts them together. Stores are opened through package store.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/store"
	"github.com/agentmem/agentmem/vdb/faiss"

	// The embedders and vector backends this binary offers register
	// themselves.
	_ "github.com/agentmem/agentmem/embed/glove"
	_ "github.com/agentmem/agentmem/embed/hash"
	_ "github.com/agentmem/agentmem/embed/ollama"
	_ "github.com/agentmem/agentmem/vdb/inmem"
	_ "github.com/agentmem/agentmem/vdb/pgvector"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and failed
	exitUsage   = 2 // bad flags or arguments
)

// app is one CLI instance: where it writes and the flags every subcommand
// understands. newRootCmd makes one per run, so nothing is left over
// between runs in one process (tests).
type app struct {
	stdout, stderr io.Writer

	store    string        // store directory or PostgreSQL URL (print it as where())
	embedder string        // embedder spec, e.g. "hash:512"
	json     bool          // machine-readable output
	backend  string        // vector backend spec (vdb.Open): "inmem", "faiss[:FACTORY]", "pgvector:DSN"
	index    string        // Faiss index-factory string
	memory   string        // memory kind of a new store: "short" or "long"
	wait     time.Duration // how long a writer waits for the store's lock
	maxBytes int           // --max-record-bytes of the commands that write
}

// newRootCmd returns the agentmem command with its subcommands, writing to
// stdout and stderr.
func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	a := &app{stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:   "agentmem",
		Short: "Memory for LLM agents: store, search and evaluate what an agent remembers",
		Long: `agentmem keeps what an LLM agent was told in a store directory (or in
PostgreSQL: --store postgres://…) and finds it again by meaning (vector
search) and by exact words (keyword search).

The default embedder, hash:512, runs offline and needs no model server.
Use --embedder ollama:MODEL to embed with an Ollama server (OLLAMA_HOST).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version(),
		PersistentPreRunE: func(*cobra.Command, []string) error {
			if strings.TrimSpace(a.store) == "" {
				return usageError{errors.New("--store is empty: give " + store.TargetForms)}
			}
			if err := store.CheckTarget(a.store); err != nil {
				return usageError{err}
			}
			if a.wait < 0 {
				return usageError{fmt.Errorf("--wait must be ≥ 0, got %s", a.wait)}
			}
			return nil
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	pf := root.PersistentFlags()
	pf.StringVar(&a.store, "store", ".agentmem", `store directory, or a PostgreSQL store's URL ("postgres://user@host/db?schema=NAME")`)
	pf.StringVar(&a.embedder, "embedder", store.DefaultEmbedder, `embedder spec: "hash:DIM" (offline) or "ollama:MODEL"; default: the store's, else hash:512`)
	pf.BoolVar(&a.json, "json", false, "print JSON instead of text")
	pf.StringVar(&a.backend, "backend", store.DefaultBackend,
		`vector backend spec: "inmem" (pure Go, exact; "inmem:int8" scans int8 codes, same results), "faiss[:FACTORY]" (a build with -tags faiss) or "pgvector:DSN" (PostgreSQL with pgvector); default: the store's, else inmem`)
	pf.StringVar(&a.index, "index", "",
		`Faiss index-factory string for --backend faiss, e.g. "HNSW32,Flat" (default: the store's, else `+faiss.DefaultFactory+`)`)
	pf.StringVar(&a.memory, "memory", string(store.DefaultKind),
		`memory kind: "short" (segments, vector search) or "long" (records with namespaces, hybrid vector+keyword search, small-to-big); default: the store's, else short`)
	pf.DurationVar(&a.wait, "wait", 5*time.Second,
		"how long a command that writes waits for another process to release the store (0: fail at once); readers never wait")
	root.AddCommand(newAddCmd(a), newSupersedeCmd(a), newHistoryCmd(a), newSearchCmd(a), newImportCmd(a), newStatsCmd(a), newChatCmd(a), newEvalCmd(a), newMigrateCmd(a), newServeCmd(a),
		newListCmd(a), newGetCmd(a), newForgetCmd(a), newVerifyCmd(a), newRepairCmd(a), newHealthCmd(a))
	return root
}

// usageError marks an error as a usage problem (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the CLI with args and returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	root.SetIn(stdin)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ue usageError
	usage := errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command")
	if jsonOut(root, args) {
		writeJSONError(stderr, err, usage)
	} else {
		fmt.Fprintln(stderr, errorLine(err))
	}
	if usage {
		return exitUsage
	}
	return exitFailure
}

// errorLine is err as the CLI prints it: the program's name, once, then
// the error (the library's sentinels carry no prefix of their own; the
// packages that wrap them name themselves: "store: migrate: invalid
// argument: …").
func errorLine(err error) string { return "agentmem: " + err.Error() }

// buildVersion is the release the binary was built as, set by the linker
// (make build and the Dockerfile: -ldflags "-X main.buildVersion=…", from
// git describe); empty in a plain go build.
var buildVersion string

// shortVersion is what the binary calls its version, in --version and as
// the MCP server's: buildVersion, else the module version `go install
// …@version` stamps, else "devel-" and the VCS revision go build stamps in
// a git checkout ("+dirty" with uncommitted changes), else "devel".
func shortVersion() string {
	if buildVersion != "" {
		return buildVersion
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return "devel"
	}
	return fmt.Sprintf("devel-%.12s%s", rev, dirty)
}

// version is --version's answer: shortVersion, then the VCS revision and
// time and the Go version the binary was built from
// (runtime/debug.ReadBuildInfo).
func version() string {
	v := shortVersion()
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	var rev, modified, at string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+dirty"
			}
		case "vcs.time":
			at = " " + s.Value
		}
	}
	if rev != "" {
		v += fmt.Sprintf(" (%.12s%s%s)", rev, modified, at)
	}
	return v + " " + bi.GoVersion
}
