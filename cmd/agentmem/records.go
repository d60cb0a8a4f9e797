package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/store"
)

// recordJSON is one memory as list, get and forget print it with --json.
type recordJSON struct {
	ID        string    `json:"id"`
	Namespace string    `json:"namespace"`
	Speaker   string    `json:"speaker,omitempty"`
	Time      time.Time `json:"time"`
	Tags      []string  `json:"tags,omitempty"`
	Text      string    `json:"text"`
	// The record's validity, versions and count (memory.Record), when
	// set.
	ValidFrom    time.Time `json:"valid_from,omitzero"`
	ValidUntil   time.Time `json:"valid_until,omitzero"`
	Supersedes   string    `json:"supersedes,omitempty"`
	SupersededBy string    `json:"superseded_by,omitempty"`
	Seen         int       `json:"seen,omitempty"`
	LastSeen     time.Time `json:"last_seen,omitzero"`
}

func toJSON(r memory.Record) recordJSON {
	return recordJSON{ID: r.ID, Namespace: r.Namespace, Speaker: r.Speaker, Time: r.Time, Tags: r.Tags, Text: r.Text,
		ValidFrom: r.ValidFrom, ValidUntil: r.ValidUntil, Supersedes: r.Supersedes, SupersededBy: r.SupersededBy, Seen: r.Seen, LastSeen: r.LastSeen}
}

// timeRange holds the --namespace, --from and --to flags of list and forget.
type timeRange struct {
	namespace, from, to string
}

func (tr *timeRange) flags(cmd *cobra.Command, verb string) {
	f := cmd.Flags()
	f.StringVar(&tr.namespace, "namespace", "", verb+" only this namespace")
	f.StringVar(&tr.from, "from", "", verb+" only memories at or after this time (RFC 3339, or a date 2006-01-02)")
	f.StringVar(&tr.to, "to", "", verb+" only memories before this time (RFC 3339, or a date 2006-01-02)")
}

func (tr *timeRange) options() (memory.ListOptions, error) {
	var o memory.ListOptions
	o.Namespace = tr.namespace
	var err error
	if o.From, err = parseTime("--from", tr.from); err != nil {
		return o, err
	}
	if o.To, err = parseTime("--to", tr.to); err != nil {
		return o, err
	}
	if !o.From.IsZero() && !o.To.IsZero() && o.To.Before(o.From) {
		return o, usageError{fmt.Errorf("--to %s is before --from %s", tr.to, tr.from)}
	}
	return o, nil
}

func (tr *timeRange) set() bool { return tr.namespace != "" || tr.from != "" || tr.to != "" }

func parseTime(flag, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, usageError{fmt.Errorf(`%s %q is not an RFC 3339 time ("2026-03-01T09:30:00+01:00") or a date ("2026-03-01")`, flag, s)}
}

func newListCmd(a *app) *cobra.Command {
	var tr timeRange
	var limit, offset int
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List remembered memories, oldest first",
		Long: `List prints the memories in the store, oldest first, a page at a time
(--limit, --offset), optionally only those of one --namespace and in a time
range (--from inclusive, --to exclusive). It reads the store without locking
it, so it works while another process writes.`,
		Example: `  agentmem list --namespace mara --from 2026-03-01 --limit 50
  agentmem list --json | jq -r '.memories[].id'`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 0 || offset < 0 {
				return usageError{fmt.Errorf("--limit and --offset must be ≥ 0")}
			}
			opts, err := tr.options()
			if err != nil {
				return err
			}
			opts.Limit, opts.Offset = limit, offset
			return a.withStore(cmd, false, store.Config{ReadOnly: true}, func(st store.Memory) error {
				recs, total, err := st.List(cmd.Context(), opts)
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				if a.json {
					res := struct {
						Total    int          `json:"total"`
						Offset   int          `json:"offset"`
						Memories []recordJSON `json:"memories"`
					}{total, offset, make([]recordJSON, len(recs))}
					for i, r := range recs {
						res.Memories[i] = toJSON(r)
					}
					return json.NewEncoder(out).Encode(res)
				}
				for _, r := range recs {
					who := r.Namespace
					if r.Speaker != "" {
						who += "/" + r.Speaker
					}
					fmt.Fprintf(out, "%s  %s  %s  %s\n", r.ID, r.Time.Local().Format("2006-01-02 15:04"), who, firstLine(r.Text, 80))
				}
				_, err = fmt.Fprintf(cmd.ErrOrStderr(), "%d-%d of %d %s\n", min(offset+1, total), offset+len(recs), total, plural(total, noun(st)))
				return err
			})
		},
	}
	tr.flags(cmd, "list")
	cmd.Flags().IntVar(&limit, "limit", 20, "print at most `N` memories (0: all)")
	cmd.Flags().IntVar(&offset, "offset", 0, "skip the first `N` matching memories")
	return cmd
}

// firstLine is the first line of s, cut to n runes.
func firstLine(s string, n int) string {
	line, _, more := strings.Cut(s, "\n")
	r := []rune(line)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	if more {
		return line + " …"
	}
	return line
}

// lookup returns the record with the given id and whether mem holds it,
// through GetContext when mem has it (a PostgreSQL store), so that a
// database that cannot be reached is an error, not a missing id.
func lookup(ctx context.Context, mem memory.Records, id string) (memory.Record, bool, error) {
	if g, ok := mem.(interface {
		GetContext(ctx context.Context, id string) (memory.Record, bool, error)
	}); ok {
		return g.GetContext(ctx, id)
	}
	r, ok := mem.Get(id)
	return r, ok, nil
}

func newGetCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "get ID...",
		Short: "Print remembered memories by id",
		Long: `Get prints each memory whose id is given, whole, with its namespace, speaker
and time. An id the store does not hold is an error (exit 1) after the
others are printed. It reads the store without locking it.`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(cmd, false, store.Config{ReadOnly: true}, func(st store.Memory) error {
				out := cmd.OutOrStdout()
				var missing []string
				for i, id := range args {
					r, ok, err := lookup(cmd.Context(), st, id)
					if err != nil {
						return err
					}
					if !ok {
						missing = append(missing, id)
						continue
					}
					if a.json {
						if err := json.NewEncoder(out).Encode(toJSON(r)); err != nil {
							return err
						}
						continue
					}
					if i > 0 {
						fmt.Fprintln(out)
					}
					fmt.Fprintf(out, "id         %s\nnamespace  %s\n", r.ID, r.Namespace)
					if r.Speaker != "" {
						fmt.Fprintf(out, "speaker    %s\n", r.Speaker)
					}
					fmt.Fprintf(out, "time       %s\n", r.Time.Local().Format(time.RFC3339))
					if len(r.Tags) > 0 {
						fmt.Fprintf(out, "tags       %s\n", strings.Join(r.Tags, ", "))
					}
					printFacts(out, r)
					fmt.Fprintf(out, "\n%s\n", r.Text)
				}
				if len(missing) > 0 {
					return fmt.Errorf("%w: %s holds no memory with id %s", memory.ErrNotFound, a.where(), strings.Join(missing, ", "))
				}
				return nil
			})
		},
	}
}

func newForgetCmd(a *app) *cobra.Command {
	var tr timeRange
	var yes bool
	cmd := &cobra.Command{
		Use:   "forget [ID...]",
		Short: "Forget memories by id, or by namespace and time range",
		Long: `Forget removes the memories with the given ids, or — with no id — every
memory of --namespace and/or the time range --from/--to, which needs --yes
(without it forget only says how many it would remove and exits 2). An id
the store does not hold is an error and nothing is forgotten. Forgotten
memories stay in the log file until the store is compacted.`,
		Example: `  agentmem forget 3f2a9c0d1e2b4a5c6d7e8f90
  agentmem forget --namespace mara --to 2026-01-01 --yes`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && tr.set() {
				return usageError{errors.New("give ids or --namespace/--from/--to, not both")}
			}
			if len(args) == 0 && !tr.set() {
				return usageError{errors.New("nothing to forget: give ids, or --namespace/--from/--to with --yes")}
			}
			opts, err := tr.options()
			if err != nil {
				return err
			}
			return a.withStore(cmd, false, store.Config{}, func(st store.Memory) error {
				ids := args
				if len(ids) == 0 {
					recs, _, err := st.List(cmd.Context(), opts)
					if err != nil {
						return err
					}
					for _, r := range recs {
						ids = append(ids, r.ID)
					}
					if !yes {
						return usageError{fmt.Errorf("would forget %d %s; pass --yes to do it", len(ids), plural(len(ids), noun(st)))}
					}
				} else {
					var missing []string
					for _, id := range ids {
						_, ok, err := lookup(cmd.Context(), st, id)
						if err != nil {
							return err
						}
						if !ok {
							missing = append(missing, id)
						}
					}
					if len(missing) > 0 {
						return fmt.Errorf("%w: %s holds no memory with id %s; nothing forgotten", memory.ErrNotFound, a.where(), strings.Join(missing, ", "))
					}
				}
				for i, id := range ids {
					if err := st.Forget(cmd.Context(), id); err != nil {
						return fmt.Errorf("forgot %d of %d, then: %w", i, len(ids), err)
					}
				}
				if a.json {
					return json.NewEncoder(cmd.OutOrStdout()).Encode(struct {
						Forgotten []string `json:"forgotten"`
						Store     string   `json:"store"`
					}{ids, a.where()})
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "forgot %d %s in %s\n", len(ids), plural(len(ids), noun(st)), a.where())
				return err
			})
		},
	}
	tr.flags(cmd, "forget")
	cmd.Flags().BoolVar(&yes, "yes", false, "confirm forgetting by namespace or time range")
	return cmd
}
