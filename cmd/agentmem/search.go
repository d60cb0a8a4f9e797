package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/longterm"
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
	var namespace, mode string
	cmd := &cobra.Command{
		Use:   "search QUERY...",
		Short: "Find remembered segments similar to a query",
		Long: `Search embeds the query (the arguments joined by spaces) and prints the most
similar segments in the store, best first, with their cosine similarity.

In a long-term store (--memory long) search runs the vector path, the
keyword path (exact words, names, codes; Chinese too) or both (--mode
hybrid, the default, fuses their rankings), optionally in one --namespace,
and prints each memory found with the sentences that matched; --json gives
the whole memory too. Scores are then fusion scores (about 0.03 at best),
and --min-score applies to the vector path only (default 0: none).`,
		Example: `  agentmem search "when is my flight?"
  agentmem search -k 3 --min-score 0 花生
  agentmem search --json "deploy error" | jq -r '.hits[0].text'
  agentmem search --memory long --mode keyword "LH 2043"`,
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
			kind, err := storeKind(cmd)
			if err != nil {
				return err
			}
			if err := longOnly(cmd, kind, "namespace", "mode"); err != nil {
				return err
			}
			if kind == kindLong {
				m, err := longterm.ParseMode(mode)
				if err != nil {
					return usageError{fmt.Errorf("--mode: %w", err)}
				}
				q := longterm.Query{Text: query, Namespace: namespace, Mode: m, K: k}
				if flagChanged(cmd, "min-score") {
					q.MinScore = minScore
				}
				return searchLong(cmd, q)
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
	f.StringVar(&namespace, "namespace", "", "search only this namespace (long-term store only; default: all)")
	f.StringVar(&mode, "mode", longterm.Hybrid.String(), `retrieval paths: "hybrid", "vector" or "keyword" (long-term store only)`)
	return cmd
}

// longHit is one long-term hit as printed with --json.
type longHit struct {
	ID          string    `json:"id"`
	Score       float32   `json:"score"`
	Time        time.Time `json:"time"`
	Namespace   string    `json:"namespace"`
	Speaker     string    `json:"speaker,omitempty"`
	Text        string    `json:"text"`
	Snippets    []string  `json:"snippets"`
	VectorRank  int       `json:"vector_rank,omitempty"`
	KeywordRank int       `json:"keyword_rank,omitempty"`
}

// searchLong runs q on the long-term store and prints the hits.
func searchLong(cmd *cobra.Command, q longterm.Query) (err error) {
	mem, err := openLongStore(cmd.Context(), cmd, false)
	if err != nil {
		return err
	}
	defer closeStore(mem, &err)
	hits, err := mem.Query(cmd.Context(), q)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if global.json {
		res := struct {
			Query     string    `json:"query"`
			Mode      string    `json:"mode"`
			Namespace string    `json:"namespace,omitempty"`
			Hits      []longHit `json:"hits"`
		}{q.Text, q.Mode.String(), q.Namespace, make([]longHit, len(hits))}
		for i, h := range hits {
			res.Hits[i] = longHit{
				ID: h.ID, Score: h.Score, Time: h.Time, Namespace: h.Namespace, Speaker: h.Speaker,
				Text: h.Text, Snippets: h.Snippets, VectorRank: h.VectorRank, KeywordRank: h.KeywordRank,
			}
		}
		return json.NewEncoder(out).Encode(res)
	}
	if len(hits) == 0 {
		where := ""
		if q.Namespace != "" {
			where = " in namespace " + q.Namespace
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "no remembered memory matches %q%s (%s search)\n", q.Text, where, q.Mode)
		return nil
	}
	for i, h := range hits {
		if i > 0 {
			fmt.Fprintln(out)
		}
		who := h.Namespace
		if h.Speaker != "" {
			who += "/" + h.Speaker
		}
		fmt.Fprintf(out, "%d. score %.4f  id %s  %s  %s%s\n", i+1, h.Score, h.ID, h.Time.Local().Format("2006-01-02 15:04"), who, ranks(h))
		snips := h.Snippets
		if len(snips) == 0 {
			snips = []string{h.Text}
		}
		for _, s := range snips {
			for line := range strings.SplitSeq(s, "\n") {
				if _, err := fmt.Fprintf(out, "   %s\n", line); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// ranks explains a hybrid hit: its rank on each path that found it.
func ranks(h longterm.Hit) string {
	var parts []string
	if h.VectorRank > 0 {
		parts = append(parts, fmt.Sprintf("vector #%d", h.VectorRank))
	}
	if h.KeywordRank > 0 {
		parts = append(parts, fmt.Sprintf("keyword #%d", h.KeywordRank))
	}
	if len(parts) == 0 {
		return ""
	}
	return "  (" + strings.Join(parts, ", ") + ")"
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
