package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/store"
)

func newMigrateCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Convert a short-term store written by the previous release",
		Long: `Migrate converts the short-term store in --store written by the previous
release (manifest.json with format "agentmem.short" and segments.jsonl) into
the current store format, in place. Segments keep their ids and times and
are re-embedded with the store's embedder (--embedder must name the same
one, if given); --backend chooses the vector backend (default: the store's).

Nothing is deleted: the old files move into a backup-v1-TIME directory
inside the store. A store in the current format whose log the previous
release wrote (log format 1, without sequence numbers) opens and is
written as it is; migrate rewrites its log in the current format
(compacting it), keeping the old log in backup-v1-TIME.`,
		Example: `  agentmem migrate --store .agentmem`,
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.dirOnly(cmd); err != nil {
				return err
			}
			cfg := store.MigrateConfig{Logger: a.logger(cmd)}
			if flagChanged(cmd, "embedder") {
				cfg.Embedder = a.embedder
			}
			if flagChanged(cmd, "backend") || flagChanged(cmd, "index") {
				spec, err := a.backendSpec(cmd, false)
				if err != nil {
					return err
				}
				cfg.Backend = spec
			}
			res, err := store.Migrate(cmd.Context(), a.store, cfg)
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("no memory store in %s (pass --store DIR)", a.store)
			}
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if a.json {
				return json.NewEncoder(out).Encode(struct {
					Store        string `json:"store"`
					Segments     int    `json:"segments"`
					Backup       string `json:"backup"`
					LogRewritten bool   `json:"log_rewritten,omitempty"`
					Records      int    `json:"records,omitempty"`
				}{a.store, res.Segments, res.Backup, res.LogRewritten, res.Records})
			}
			if res.LogRewritten {
				_, err = fmt.Fprintf(out, "rewrote the log of %s (%d %s) in the current format; the previous log is in %s\n",
					a.store, res.Records, plural(res.Records, "record"), res.Backup)
				return err
			}
			_, err = fmt.Fprintf(out, "migrated %d %s in %s; the previous release's files are in %s\n",
				res.Segments, plural(res.Segments, "segment"), a.store, res.Backup)
			return err
		},
	}
}
