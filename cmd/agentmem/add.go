package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/longterm"
	"github.com/agentmem/agentmem/store"
)

func newAddCmd(a *app) *cobra.Command {
	var namespace, id, speaker, at string
	var tags []string
	var v validity
	cmd := &cobra.Command{
		Use:   "add [TEXT...]",
		Short: "Remember text segments",
		Long: `Add stores each argument as one segment in the store. With no argument, or
the argument "-", it stores all of standard input as one segment (e.g. one
round of conversation spanning several lines). Each segment is durable when
the command returns.

In a long-term store (--memory long) each segment is a memory in
--namespace (default "default"), with the --speaker, --time and --tag given
(the same for every segment of the call). Its id is generated, or --id for
a single segment: a stored memory with that id is replaced. The speaker
matters to search: a question that names a speaker, or asks about "my"
things, prefers what that speaker said.

A segment without --id is a fact, stored once: if a current memory of the
namespace holds the same text (case, spaces and end punctuation aside),
add stores nothing new, prints that memory's id and counts it as said
again ("duplicate": true with --json). A segment with --id is an event and
is stored as given. --valid-from and --valid-until say when what it says
holds (agentmem supersede replaces a memory with a newer version).`,
		Example: `  agentmem add "user: my flight is LH 401 on Friday
  assistant: noted"
  printf 'user: 我对花生过敏\nassistant: 好的\n' | agentmem add
  agentmem add --memory long --namespace mara "user: my badge number is NW-20417"
  agentmem add --memory long --namespace mara --speaker user --time 2026-03-01T09:30:00+01:00 \
    --id mara-42 --tag travel "my flight is LH 401 on Friday"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.longOnly(cmd, "namespace", "id", "speaker", "time", "tag", "valid-from", "valid-until"); err != nil {
				return err
			}
			when, err := parseTime("--time", at)
			if err != nil {
				return err
			}
			limit, err := a.maxRecordBytes()
			if err != nil {
				return err
			}
			segs, err := addSegmentsMax(cmd, args, limit)
			if err != nil {
				return err
			}
			if id != "" && len(segs) > 1 {
				return usageError{fmt.Errorf("--id names one memory, but %d segments were given", len(segs))}
			}
			return a.withStore(cmd, true, store.Config{MaxRecordBytes: limit}, func(st store.Memory) error {
				recs := make([]memory.Record, len(segs))
				for i, s := range segs {
					recs[i] = memory.Record{ID: id, Text: s, Namespace: namespace, Speaker: speaker, Time: when, Tags: tags}
					if err := v.set(&recs[i]); err != nil {
						return err
					}
				}
				outs, err := remember(cmd, st, recs)
				if err != nil {
					return recordError(err)
				}
				ids := make([]string, len(outs))
				var added, dups []string
				var similar []similarMemory
				for i, o := range outs {
					ids[i] = o.ID
					if o.Duplicate {
						dups = append(dups, o.ID)
						continue
					}
					added = append(added, o.ID)
					for _, sim := range o.Similar {
						similar = append(similar, similarMemory{ID: sim.ID, Text: sim.Text, Score: sim.Score, Near: o.ID})
					}
				}
				out := cmd.OutOrStdout()
				if a.json {
					return json.NewEncoder(out).Encode(struct {
						IDs []string `json:"ids"`
						// Duplicate: every segment was stored already (ids
						// are the stored memories'); Duplicates: the ids of
						// those that were.
						Duplicate  bool     `json:"duplicate"`
						Duplicates []string `json:"duplicates,omitempty"`
						// Similar: stored memories that say nearly what a
						// new one says (Near: its id), most similar first.
						Similar []similarMemory `json:"similar,omitempty"`
						Store   string          `json:"store"`
					}{ids, len(added) == 0, dups, similar, a.where()})
				}
				if len(added) > 0 {
					if _, err := fmt.Fprintf(out, "added %d %s (id %s) to %s\n", len(added), plural(len(added), noun(st)), strings.Join(added, ", "), a.where()); err != nil {
						return err
					}
				}
				if len(dups) > 0 {
					if _, err := fmt.Fprintf(out, "already remembered: %s (id %s) in %s, counted as said again\n", plural(len(dups), noun(st)), strings.Join(dups, ", "), a.where()); err != nil {
						return err
					}
				}
				for _, sim := range similar {
					if _, err := fmt.Fprintf(out, "  %s says nearly the same as stored memory %s (cosine %.2f): %s\n", sim.Near, sim.ID, sim.Score, sim.Text); err != nil {
						return err
					}
				}
				if len(similar) > 0 {
					_, err = fmt.Fprintf(out, "  if it is a newer version of one: agentmem forget NEW-ID, then agentmem supersede OLD-ID TEXT keeps the old one as history\n")
				}
				return err
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&namespace, "namespace", "", `namespace of the new memories (long-term store only; default "default")`)
	f.StringVar(&id, "id", "", "id of the new memory, replacing a stored one with that id (long-term store only; one segment)")
	f.StringVar(&speaker, "speaker", "", `who said it, e.g. "user" (long-term store only)`)
	f.StringVar(&at, "time", "", `when it was said, RFC 3339 or a date (long-term store only; default now)`)
	f.StringSliceVar(&tags, "tag", nil, "a label to store with the memories; repeat or separate with commas (long-term store only)")
	v.flags(cmd)
	a.maxRecordFlag(cmd)
	return cmd
}

// similarMemory is a stored memory that says nearly what a new one, Near,
// says (memory.Similar), as add prints it.
type similarMemory struct {
	ID    string  `json:"id"`
	Text  string  `json:"text"`
	Score float32 `json:"score"`
	Near  string  `json:"near"`
}

// remember stores recs in st and says what it did with each: through
// memory.Facts, which reports duplicates, or AddBatch.
func remember(cmd *cobra.Command, st store.Memory, recs []memory.Record) ([]memory.Outcome, error) {
	if f, ok := st.(memory.Facts); ok {
		return f.Remember(cmd.Context(), recs...)
	}
	ids, err := st.AddBatch(cmd.Context(), recs)
	if err != nil {
		return nil, err
	}
	outs := make([]memory.Outcome, len(ids))
	for i, id := range ids {
		outs[i] = memory.Outcome{ID: id}
	}
	return outs, nil
}

// addSegments returns the segments to add: the arguments, or standard input
// for none or "-". A blank segment is a usage error; standard input longer
// than the default largest record is refused (addSegmentsMax).
func addSegments(cmd *cobra.Command, args []string) ([]string, error) {
	return addSegmentsMax(cmd, args, longterm.DefaultMaxRecordBytes)
}

// addSegmentsMax is addSegments with standard input longer than limit
// bytes refused once limit bytes are read (--max-record-bytes).
func addSegmentsMax(cmd *cobra.Command, args []string, limit int) ([]string, error) {
	if len(args) == 0 {
		if f, ok := cmd.InOrStdin().(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			return nil, usageError{errors.New("nothing to add: pass TEXT arguments or pipe text in")}
		}
		args = []string{"-"}
	}
	segs := make([]string, 0, len(args))
	stdinUsed := false
	for i, a := range args {
		if a == "-" {
			if stdinUsed {
				return nil, usageError{errors.New(`"-" (standard input) given twice`)}
			}
			stdinUsed = true
			data, err := io.ReadAll(io.LimitReader(cmd.InOrStdin(), int64(limit)+1))
			if err != nil {
				return nil, fmt.Errorf("read standard input: %w", err)
			}
			if len(data) > limit {
				return nil, fmt.Errorf("%w: standard input is longer than %d bytes, the largest memory --max-record-bytes allows", memory.ErrTooLarge, limit)
			}
			a = strings.TrimRight(string(data), "\r\n")
			if strings.TrimSpace(a) == "" {
				return nil, usageError{errors.New("nothing to add: standard input is empty (pass TEXT arguments or pipe text in)")}
			}
		} else if strings.TrimSpace(a) == "" {
			return nil, usageError{fmt.Errorf("argument %d is empty", i+1)}
		}
		segs = append(segs, a)
	}
	return segs, nil
}

func plural(n int, word string) string {
	switch {
	case n == 1:
		return word
	case word == "memory":
		return "memories"
	}
	return word + "s"
}
