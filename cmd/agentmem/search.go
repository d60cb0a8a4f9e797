package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/memory"
)

func init() { rootCmd.AddCommand(newSearchCmd()) }

// searchHit is one hit as printed with --json.
type searchHit struct {
	ID    string    `json:"id"`
	Score float32   `json:"score"`
	Time  time.Time `json:"time"`
	Text  string    `json:"text"`
}

func newSearchCmd() *cobra.Command {
	var k int
	var minScore float32
	cmd := &cobra.Command{
		Use:   "search QUERY...",
		Short: "Find remembered segments similar to a query",
		Long: `Search embeds the query (the arguments joined by spaces) and prints the most
similar segments in the store, best first, with their cosine similarity.`,
		Example: `  agentmem search "when is my flight?"
  agentmem search -k 3 --min-score 0 花生
  agentmem search --json "deploy error" | jq -r '.hits[0].text'`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if k <= 0 {
				return usageError{fmt.Errorf("-k must be positive, got %d", k)}
			}
			if !(minScore >= -1 && minScore <= 1) {
				return usageError{fmt.Errorf("--min-score must be in [-1, 1], got %v", minScore)}
			}
			query := strings.Join(args, " ")
			if strings.TrimSpace(query) == "" {
				return usageError{errors.New("the query is empty")}
			}
			mem, err := openStore(cmd.Context(), cmd, false, memory.WithTopK(k), memory.WithMinScore(minScore))
			if err != nil {
				return err
			}
			defer closeStore(mem, &err)
			hits, err := mem.Search(cmd.Context(), query)
			if err != nil {
				return err
			}
			return printHits(cmd, query, hits, minScore)
		},
	}
	f := cmd.Flags()
	f.IntVarP(&k, "k", "k", memory.DefaultTopK, "return at most `N` segments")
	f.Float32Var(&minScore, "min-score", memory.DefaultMinScore, "lowest cosine similarity `S` to return, in [-1, 1]")
	return cmd
}

func printHits(cmd *cobra.Command, query string, hits []memory.Hit, minScore float32) error {
	out := cmd.OutOrStdout()
	if global.json {
		res := struct {
			Query string      `json:"query"`
			Hits  []searchHit `json:"hits"`
		}{query, make([]searchHit, len(hits))}
		for i, h := range hits {
			res.Hits[i] = searchHit{ID: h.ID, Score: h.Score, Time: h.Time, Text: h.Text}
		}
		return json.NewEncoder(out).Encode(res)
	}
	if len(hits) == 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "no remembered segment scores %.2f or more for %q (try --min-score 0)\n", minScore, query)
		return nil
	}
	for i, h := range hits {
		if i > 0 {
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "%d. score %.3f  id %s  %s\n", i+1, h.Score, h.ID, h.Time.Local().Format("2006-01-02 15:04"))
		for line := range strings.SplitSeq(h.Text, "\n") {
			if _, err := fmt.Fprintf(out, "   %s\n", line); err != nil {
				return err
			}
		}
	}
	return nil
}
