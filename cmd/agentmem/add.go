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
)

func init() { rootCmd.AddCommand(newAddCmd()) }

func newAddCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "add [TEXT...]",
		Short: "Remember text segments",
		Long: `Add stores each argument as one segment in the store. With no argument, or
the argument "-", it stores all of standard input as one segment (e.g. one
round of conversation spanning several lines). Each segment is durable when
the command returns.`,
		Example: `  agentmem add "user: my flight is LH 401 on Friday
  assistant: noted"
  printf 'user: 我对花生过敏\nassistant: 好的\n' | agentmem add`,
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			segs, err := addSegments(cmd, args)
			if err != nil {
				return err
			}
			mem, err := openStore(cmd.Context(), cmd, true)
			if err != nil {
				return err
			}
			defer closeStore(mem, &err)
			ids, err := mem.UpdateBatch(cmd.Context(), segs)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if global.json {
				return json.NewEncoder(out).Encode(struct {
					IDs   []string `json:"ids"`
					Store string   `json:"store"`
				}{ids, global.store})
			}
			_, err = fmt.Fprintf(out, "added %d %s (id %s) to %s\n", len(ids), plural(len(ids), "segment"), strings.Join(ids, ", "), global.store)
			return err
		},
	}
}

// addSegments returns the segments to add: the arguments, or standard input
// for none or "-". A blank segment is a usage error.
func addSegments(cmd *cobra.Command, args []string) ([]string, error) {
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
			data, err := io.ReadAll(cmd.InOrStdin())
			if err != nil {
				return nil, fmt.Errorf("read standard input: %w", err)
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
	if n == 1 {
		return word
	}
	return word + "s"
}
