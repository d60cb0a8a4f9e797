package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/store"
)

// validity holds the --valid-from and --valid-until flags of add and
// supersede.
type validity struct{ from, until string }

func (v *validity) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&v.from, "valid-from", "", "when what it says starts to hold, RFC 3339 or a date (long-term store only; default: its --time)")
	f.StringVar(&v.until, "valid-until", "", "when what it says stops holding, RFC 3339 or a date (long-term store only; default: until superseded)")
}

// set sets rec's validity from the flags.
func (v *validity) set(rec *memory.Record) error {
	var err error
	if rec.ValidFrom, err = parseTime("--valid-from", v.from); err != nil {
		return err
	}
	rec.ValidUntil, err = parseTime("--valid-until", v.until)
	return err
}

// factsOf returns st's memory.Facts, or a usage error naming the command
// for a store that keeps no versions.
func factsOf(st store.Memory, what string) (memory.Facts, error) {
	f, ok := st.(memory.Facts)
	if !ok {
		return nil, usageError{fmt.Errorf("%s needs a long-term memory store (--memory long)", what)}
	}
	return f, nil
}

func newSupersedeCmd(a *app) *cobra.Command {
	var id, speaker, at string
	var tags []string
	var v validity
	cmd := &cobra.Command{
		Use:   "supersede ID TEXT...",
		Short: "Replace a memory with a newer version, keeping the old one as history",
		Long: `Supersede stores TEXT (the arguments joined by spaces, or standard input for
"-") as the new version of the memory ID: the new one holds from its
--valid-from (default its --time, default now), the old one until then, and
they are linked. A search then finds the new version (the old one with
--as-of a time before the change, or --history); history ID prints the
chain.

It fails, changing nothing, when ID is not stored or was superseded
already (by another writer, say): read its history and decide again.`,
		Example: `  agentmem supersede 3f2a9c0d "Dana lives in Berlin now"
  agentmem supersede --valid-from 2026-01-01 dana-home "Dana moved to Lisbon in January"`,
		Args: usageArgs(cobra.MinimumNArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			when, err := parseTime("--time", at)
			if err != nil {
				return err
			}
			segs, err := addSegments(cmd, args[1:])
			if err != nil {
				return err
			}
			rec := memory.Record{ID: id, Text: strings.Join(segs, " "), Speaker: speaker, Time: when, Tags: tags}
			if err := v.set(&rec); err != nil {
				return err
			}
			return a.withStore(cmd, false, store.Config{}, func(st store.Memory) error {
				f, err := factsOf(st, "supersede")
				if err != nil {
					return err
				}
				out, err := f.Supersede(cmd.Context(), args[0], rec)
				if err != nil {
					return recordError(err)
				}
				if a.json {
					return json.NewEncoder(cmd.OutOrStdout()).Encode(struct {
						ID         string `json:"id"`
						Superseded string `json:"superseded"`
						Store      string `json:"store"`
					}{out.ID, out.Superseded, a.where()})
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "superseded %s with %s in %s\n", out.Superseded, out.ID, a.where())
				return err
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&id, "id", "", "id of the new version (default: generated)")
	f.StringVar(&speaker, "speaker", "", `who said it, e.g. "user"`)
	f.StringVar(&at, "time", "", "when it was said, RFC 3339 or a date (default now)")
	f.StringSliceVar(&tags, "tag", nil, "a label to store with the new version; repeat or separate with commas")
	v.flags(cmd)
	return cmd
}

func newHistoryCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "history ID",
		Short: "Print the versions of a memory, oldest first",
		Long: `History prints every version of the chain that the memory ID belongs to
(each superseded by the next: agentmem supersede), oldest first, with when
each held. It reads the store without locking it.`,
		Example: `  agentmem history dana-home
  agentmem history --json dana-home | jq -r '.versions[-1].text'`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(cmd, false, store.Config{ReadOnly: true}, func(st store.Memory) error {
				f, err := factsOf(st, "history")
				if err != nil {
					return err
				}
				h, err := f.History(cmd.Context(), args[0])
				if err != nil {
					if errors.Is(err, memory.ErrNotFound) {
						return fmt.Errorf("%w: %s holds no memory with id %s", memory.ErrNotFound, a.where(), args[0])
					}
					return err
				}
				out := cmd.OutOrStdout()
				if a.json {
					res := struct {
						Versions []recordJSON `json:"versions"`
					}{make([]recordJSON, len(h))}
					for i, r := range h {
						res.Versions[i] = toJSON(r)
					}
					return json.NewEncoder(out).Encode(res)
				}
				for i, r := range h {
					state := "current"
					if !r.Current(time.Now()) {
						state = "no longer holds"
						if r.Since().After(time.Now()) {
							state = "not yet"
						}
					}
					fmt.Fprintf(out, "%d. %s  %s  %s (%s)\n   %s\n", i+1, r.ID, r.Time.Local().Format("2006-01-02 15:04"), held(r), state, firstLine(r.Text, 100))
				}
				return nil
			})
		},
	}
}

// held says when a record holds: "from T" or "from T until U".
func held(r memory.Record) string {
	s := "from " + r.Since().Local().Format("2006-01-02 15:04")
	if !r.ValidUntil.IsZero() {
		s += " until " + r.ValidUntil.Local().Format("2006-01-02 15:04")
	}
	return s
}

// printFacts prints a record's validity, versions and count, those set.
func printFacts(out io.Writer, r memory.Record) {
	if !r.ValidFrom.IsZero() || !r.ValidUntil.IsZero() {
		fmt.Fprintf(out, "holds      %s\n", held(r))
	}
	if r.Supersedes != "" {
		fmt.Fprintf(out, "supersedes %s\n", r.Supersedes)
	}
	if r.SupersededBy != "" {
		fmt.Fprintf(out, "superseded by %s\n", r.SupersededBy)
	}
	if r.Seen > 0 {
		fmt.Fprintf(out, "said again %d %s, last %s\n", r.Seen, plural(r.Seen, "time"), r.LastSeen.Local().Format(time.RFC3339))
	}
}
