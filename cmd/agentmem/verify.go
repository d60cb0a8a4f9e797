package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/store"
)

func newVerifyCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "verify",
		Short: "Check a store for damage (exit 1 if any)",
		Long: `Verify checks every file of the store without writing to it or locking it:
the manifest, every log record's checksums and contents, the snapshot's files
and that the snapshot and the log agree. It prints what it found sound and
every problem (a store that does not open is checked file by file) and exits
1 on any damage (a torn log tail included), 0 otherwise. Files left by
interrupted writes are listed but are no damage (the next write removes them),
nor is a keyword index file that cannot be used (a warning: searches build
the index from the records, and the next write's close rewrites it).
Run "agentmem repair" to repair a damaged store.

For a PostgreSQL store (--store postgres://…) verify checks the schema
version and the manifest (the embedder and its dimension), opens the store
as a reader does (an older schema is migrated), counts its memories and
chunks, and checks its rows in one consistent snapshot (concurrent writers
go on): the tables and migrations, each namespace's statistics against its
records, each record's keyword postings against its length, the episodes,
speakers and packed posting blocks, and orphans (chunks, postings and other
rows of no record or namespace, records without chunks, links to records
that are gone). Each kind of damage is one DAMAGE line; exit 1 on any.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.config(cmd)
			if err != nil {
				return err
			}
			rep, verr := store.Verify(cmd.Context(), a.store, cfg)
			out := cmd.OutOrStdout()
			if a.json {
				if err := json.NewEncoder(out).Encode(rep); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(out, "store      %s\n", a.where())
				if store.IsURL(a.store) {
					if rep.Schema != "" { // the manifest was read
						fmt.Fprintf(out, "schema     %s (version %d)\nembedder   %s (dim %d)\n", rep.Schema, rep.SchemaVersion, rep.Embedder, rep.Dim)
						if rep.Tokenizer != "" {
							fmt.Fprintf(out, "tokenizer  %s\n", rep.Tokenizer)
						}
					}
					if verr == nil { // it opened: the counts are its
						fmt.Fprintf(out, "memories   %d\nchunks     %d\n", rep.Records, rep.Chunks)
					}
				} else {
					// What opened or was found sound, then every problem.
					if rep.Opened {
						fmt.Fprintf(out, "memories   %d\n", rep.Records)
					}
					for _, s := range rep.Intact {
						part, what, _ := strings.Cut(s, ": ")
						fmt.Fprintf(out, "%-10s %s\n", part, what)
					}
				}
				for _, f := range rep.Leftovers {
					fmt.Fprintf(out, "leftover   %s (removed by the next write)\n", f)
				}
				for _, w := range rep.Warnings {
					fmt.Fprintf(out, "warning    %s\n", w)
				}
				for _, p := range rep.Problems {
					fmt.Fprintf(out, "DAMAGE     %s\n", p)
				}
				if len(rep.Problems) == 0 && verr == nil {
					fmt.Fprintln(out, "ok")
				}
			}
			if verr != nil && errors.Is(verr, memory.ErrCorrupt) && len(rep.Problems) > 0 && !store.IsURL(a.store) {
				// The problems are listed above (or in the JSON).
				n := fmt.Sprintf("%d problems", len(rep.Problems))
				if len(rep.Problems) == 1 {
					n = "1 problem"
				}
				return fmt.Errorf("%w: %s: %s found (agentmem repair --store %s repairs the store, keeping a backup)",
					memory.ErrCorrupt, a.where(), n, a.store)
			}
			if verr != nil {
				return a.storeError(verr, cfg)
			}
			return nil
		},
	}
}

func newRepairCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "repair",
		Short: "Repair a damaged store, keeping a backup of every file",
		Long: `Repair makes a damaged store usable again. It first copies every file of
the store into a new directory inside it, repair-TIMESTAMP; then it keeps
every intact record of the log (skipping damaged bytes), puts back the
memories the snapshot holds that the log lost (re-embedding their text),
rewrites a damaged, missing or wrong manifest, and rebuilds the snapshot
from the log, without re-embedding. It reports the byte ranges of the log
it dropped and the ids of memories the old snapshot held that the repaired
store does not. It waits for --wait for a writer to finish.

Without a readable manifest the store is repaired as the kind its files
show (long-term: records split into chunks; short-term: records indexed
whole); when they do not show it, pass --memory short or --memory long.
The embedder is the manifest's unless --embedder names the one that built
the store: that is how a manifest naming the wrong embedder is repaired (an
embedder whose vectors have another dimension than the log's is refused,
and nothing changes). A refused repair makes no backup.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.dirOnly(cmd); err != nil {
				return err
			}
			cfg, err := a.config(cmd)
			if err != nil {
				return err
			}
			rep, err := store.Repair(cmd.Context(), a.store, cfg)
			switch {
			case errors.Is(err, memory.ErrEmbedderMismatch) && cfg.Embedder == "":
				// The manifest names an embedder the records contradict.
				return fmt.Errorf("%w\n(nothing was changed; repair with the embedder that built the store: agentmem repair --store %s --embedder NAME, e.g. hash:DIM for the offline embedder of that dimension)", err, a.store)
			case errors.Is(err, memory.ErrInvalidArgument) && strings.Contains(err.Error(), "--memory"):
				return usageError{err}
			case err != nil:
				return a.storeError(err, cfg)
			}
			out := cmd.OutOrStdout()
			if a.json {
				return json.NewEncoder(out).Encode(rep)
			}
			before := "unknown"
			if rep.RecordsBefore >= 0 {
				before = fmt.Sprint(rep.RecordsBefore)
			}
			fmt.Fprintf(out, "repaired %s: %d memories (the snapshot held %s)\nbackup   %s\n", a.where(), rep.RecordsAfter, before, rep.Backup)
			for _, r := range rep.Dropped {
				fmt.Fprintf(out, "dropped  log bytes %d-%d (%d bytes): no intact record\n", r.Offset, r.Offset+r.Length, r.Length)
			}
			if len(rep.Restored) > 0 {
				fmt.Fprintf(out, "restored %d memories from the snapshot that the log had lost (their text re-embedded)\n", len(rep.Restored))
			}
			if len(rep.Lost) > 0 {
				fmt.Fprintf(out, "lost     %d memories the snapshot held: %v (their text is in the backup)\n", len(rep.Lost), rep.Lost)
			}
			fmt.Fprintf(out, "rebuilt  %v\n", rep.Rebuilt)
			return nil
		},
	}
}

// config is the store.Config of the global flags for verify and repair:
// the store's own kind, embedder and backend unless given.
func (a *app) config(cmd *cobra.Command) (store.Config, error) {
	var cfg store.Config
	if store.IsURL(a.store) {
		if _, err := a.kind(cmd); err != nil {
			return cfg, err
		}
	} else if flagChanged(cmd, "memory") {
		k, err := store.ParseKind(a.memory)
		if err != nil {
			return cfg, usageError{err}
		}
		cfg.Kind = k
	}
	if flagChanged(cmd, "embedder") {
		cfg.Embedder = a.embedder
	}
	if !store.IsURL(a.store) {
		exists := store.Exists(a.store)
		spec, err := a.backendSpec(cmd, exists && !errors.Is(infoErr(a.store), memory.ErrCorrupt))
		if err != nil {
			return cfg, err
		}
		if flagChanged(cmd, "backend") || flagChanged(cmd, "index") {
			cfg.Backend = spec
		}
	}
	cfg.LockWait = a.lockWait()
	cfg.Logger = a.logger(cmd)
	return cfg, nil
}

func infoErr(dir string) error {
	_, _, _, err := store.Info(dir)
	return err
}
