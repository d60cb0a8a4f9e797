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
things, prefers what that speaker said.`,
		Example: `  agentmem add "user: my flight is LH 401 on Friday
  assistant: noted"
  printf 'user: 我对花生过敏\nassistant: 好的\n' | agentmem add
  agentmem add --memory long --namespace mara "user: my badge number is NW-20417"
  agentmem add --memory long --namespace mara --speaker user --time 2026-03-01T09:30:00+01:00 \
    --id mara-42 --tag travel "my flight is LH 401 on Friday"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.longOnly(cmd, "namespace", "id", "speaker", "time", "tag"); err != nil {
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
				}
				ids, err := st.AddBatch(cmd.Context(), recs)
				if err != nil {
					return recordError(err)
				}
				out := cmd.OutOrStdout()
				if a.json {
					return json.NewEncoder(out).Encode(struct {
						IDs   []string `json:"ids"`
						Store string   `json:"store"`
					}{ids, a.where()})
				}
				_, err = fmt.Fprintf(out, "added %d %s (id %s) to %s\n", len(ids), plural(len(ids), noun(st)), strings.Join(ids, ", "), a.where())
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
	a.maxRecordFlag(cmd)
	return cmd
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
