package main

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/server"
	"github.com/agentmem/agentmem/store"
)

// newServeCmd is `agentmem serve`: flags in, package server does the rest.
func newServeCmd(a *app) *cobra.Command {
	var (
		addr            string
		stdio, readOnly bool
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the store over MCP (stdio or HTTP) and a JSON HTTP API",
		Long: `Serve owns the store in --store and serves it to many clients:
MCP over streamable HTTP at /mcp and a JSON API under /v1 on --addr
(loopback by default), or MCP over stdio with --stdio. A new store is a
long-term one unless --memory says otherwise. A non-loopback --addr needs a
bearer token: AGENTMEM_TOKEN (any namespace) or
AGENTMEM_TOKENS="tok1=user:42,tok2=*" (tokens pinned to a namespace).

--store may be a PostgreSQL URL (postgres://user@host/db?schema=NAME): several
servers then share one memory.

MCP client config: {"command": "agentmem", "args": ["serve", "--stdio", "--store", "/path/mem"]}`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			toks, err := server.EnvTokens(os.Getenv)
			if err != nil {
				return usageError{err}
			}
			if !store.IsURL(a.store) && !store.Exists(a.store) && !flagChanged(cmd, "memory") {
				a.memory = string(store.Long)
			}
			note := "agentmem serve --stdio"
			if !stdio {
				note = fmt.Sprintf("agentmem serve: write through its API at http://%s/v1/memories or MCP at http://%s/mcp", addr, addr)
			}
			st, err := a.open(cmd, !readOnly, store.Config{LockNote: note})
			if err != nil {
				return err
			}
			defer closeStore(st, &err) // after the server stopped: every acknowledged write is in it
			opts := []server.Option{server.WithTokens(toks), server.WithVersion(shortVersion()),
				server.WithLogger(slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil)))}
			if readOnly {
				opts = append(opts, server.WithReadOnly())
			}
			srv, err := server.New(st, opts...)
			if err != nil {
				return err
			}
			if stdio {
				return srv.ServeStdio(cmd.Context(), os.Stdin, os.Stdout) // the MCP transport closes them at the end
			}
			return srv.ListenAndServe(cmd.Context(), addr, 30*time.Second)
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", server.DefaultAddr, "HTTP listen address (non-loopback needs AGENTMEM_TOKEN or AGENTMEM_TOKENS)")
	f.BoolVar(&stdio, "stdio", false, "serve MCP over stdin/stdout instead of HTTP")
	f.BoolVar(&readOnly, "read-only", false, "refuse writes (and do not create a missing store)")
	return cmd
}
