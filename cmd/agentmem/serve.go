package main

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/server"
)

func init() { rootCmd.AddCommand(newServeCmd()) }

// newServeCmd is `agentmem serve`: flags in, package server does the rest.
func newServeCmd() *cobra.Command {
	var (
		addr            string
		stdio, readOnly bool
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the long-term store over MCP (stdio or HTTP) and a JSON HTTP API",
		Long: `Serve owns the long-term store in --store and serves it to many clients:
MCP over streamable HTTP at /mcp and a JSON API under /v1 on --addr
(loopback by default), or MCP over stdio with --stdio. A non-loopback
--addr needs a bearer token: AGENTMEM_TOKEN (any namespace) or
AGENTMEM_TOKENS="tok1=user:42,tok2=*" (tokens pinned to a namespace).

MCP client config: {"command": "agentmem", "args": ["serve", "--stdio", "--store", "/path/mem"]}`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if kind, err := detectKind(global.store); err != nil {
				return err
			} else if kind == kindShort {
				return usageError{fmt.Errorf("%s holds a short-term store; serve needs a long-term one (--memory long)", global.store)}
			}
			ls, err := openLongStore(cmd.Context(), cmd, true)
			if err != nil {
				return err
			}
			defer closeStore(ls, &err) // after the server stopped: every acknowledged write is in it
			toks, err := server.EnvTokens(os.Getenv)
			if err != nil {
				return usageError{err}
			}
			opts := []server.Option{server.WithTokens(toks),
				server.WithLogger(slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil)))}
			if readOnly {
				opts = append(opts, server.WithReadOnly())
			}
			srv, err := server.New(server.FromLongterm(ls.Memory), opts...)
			if err != nil {
				return err
			}
			if stdio {
				return srv.ServeStdio(cmd.Context(), os.Stdin, os.Stdout)
			}
			return srv.ListenAndServe(cmd.Context(), addr, 30*time.Second)
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", server.DefaultAddr, "HTTP listen address (non-loopback needs AGENTMEM_TOKEN or AGENTMEM_TOKENS)")
	f.BoolVar(&stdio, "stdio", false, "serve MCP over stdin/stdout instead of HTTP")
	f.BoolVar(&readOnly, "read-only", false, "refuse writes")
	return cmd
}
