package main

import (
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/spf13/cobra"
)

// newHealthCmd is `agentmem health`: the container image's HEALTHCHECK (the
// runtime image has no curl). It asks a running server's /healthz and exits
// 0 on 200 OK, 1 otherwise.
func newHealthCmd(_ *app) *cobra.Command {
	var (
		url     string
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Check that a running agentmem server answers /healthz (exit 0 if it does)",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				return usageError{fmt.Errorf("--url %q: %w", url, err)}
			}
			resp, err := (&http.Client{Timeout: timeout}).Do(req)
			if err != nil {
				return fmt.Errorf("health: %w", err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("health: %s answered %s: %s", url, resp.Status, body)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s", body)
			return nil
		},
	}
	cmd.Flags().StringVar(&url, "url", "http://127.0.0.1:7437/healthz", "the server's health URL")
	cmd.Flags().DurationVar(&timeout, "timeout", 3*time.Second, "how long to wait for the answer")
	return cmd
}
