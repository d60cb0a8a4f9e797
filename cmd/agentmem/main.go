// Command agentmem is the command-line face of the agentmem library: it adds
// to, searches, imports into and evaluates a memory store on disk, and chats
// with an Ollama model that remembers.
//
// Each subcommand lives in its own file and adds itself to the root command
// in an init function.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	// The embedders and vector backends this binary offers register
	// themselves.
	_ "github.com/agentmem/agentmem/embed/glove"
	_ "github.com/agentmem/agentmem/embed/hash"
	_ "github.com/agentmem/agentmem/embed/ollama"
	_ "github.com/agentmem/agentmem/vdb/faiss"
	_ "github.com/agentmem/agentmem/vdb/inmem"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and failed
	exitUsage   = 2 // bad flags or arguments
)

// globalFlags are the flags every subcommand understands.
type globalFlags struct {
	store    string // store directory
	embedder string // embedder spec, e.g. "hash:512"
	json     bool   // machine-readable output
}

var global globalFlags

var rootCmd = &cobra.Command{
	Use:   "agentmem",
	Short: "Memory for LLM agents: store, search and evaluate what an agent remembers",
	Long: `agentmem keeps what an LLM agent was told in a store directory and finds it
again by meaning (vector search) and by exact words (keyword search).

The default embedder, hash:512, runs offline and needs no model server.
Use --embedder ollama:MODEL to embed with an Ollama server (OLLAMA_HOST).`,
	SilenceUsage:  true,
	SilenceErrors: true,
}

func init() {
	pf := rootCmd.PersistentFlags()
	pf.StringVar(&global.store, "store", ".agentmem", "store directory")
	pf.StringVar(&global.embedder, "embedder", "hash:512", `embedder spec: "hash:DIM" (offline) or "ollama:MODEL"`)
	pf.BoolVar(&global.json, "json", false, "print JSON instead of text")
}

// usageError marks an error as a usage problem (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

// run executes the CLI with args and returns the process exit code.
func run(ctx context.Context, args []string) int {
	rootCmd.SetArgs(args)
	rootCmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	err := rootCmd.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(os.Stderr, "agentmem:", err)
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitFailure
}
