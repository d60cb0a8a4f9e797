package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/short"
	"github.com/agentmem/agentmem/server"
	"github.com/agentmem/agentmem/store"
)

// searchHit is one hit as printed with --json.
type searchHit struct {
	ID    string    `json:"id"`
	Score float32   `json:"score"`
	Time  time.Time `json:"time"`
	Text  string    `json:"text"`
}

func newSearchCmd(a *app) *cobra.Command {
	var k, neighbours, maxTokens int
	var minScore, minRelevance float32
	var namespace, mode, asOf string
	var explain, history bool
	cmd := &cobra.Command{
		Use:   "search QUERY...",
		Short: "Find remembered segments similar to a query",
		Long: `Search embeds the query (the arguments joined by spaces) and prints the most
similar segments in the store, best first, with their cosine similarity.

In a long-term store (--memory long) search runs the vector path, the
keyword path (exact words, names, codes; Chinese too) or both (--mode
hybrid, the default, fuses their rankings), optionally in one --namespace,
and prints each memory found with the sentences that matched; --json gives
the whole memory too. Each hit has a relevance in [0, 1] that means the
same in every mode and namespace (how likely it is what the query looks
for); hits below --min-relevance are left out, so a search may print
fewer than -k memories, or say that no memory is relevant (as for a
question that names something the namespace never mentions: "When do I fly
to Oslo?" asked of a memory of a Berlin trip). Scores are the
ranking's own (fused, in hybrid mode), and --min-score applies to the
vector path's cosine only (default 0: none). --explain prints why each
memory surfaced. --neighbours N prints with each memory up to N memories
said just before and after it in its conversation (the question an
answer replies to).`,
		Example: `  agentmem search "when is my flight?"
  agentmem search -k 3 --min-score 0 花生
  agentmem search --json "deploy error" | jq -r '.hits[0].text'
  agentmem search --memory long --mode keyword "LH 2043"
  agentmem search --memory long --neighbours 1 "Luigi's"
  agentmem search --min-relevance -1 --explain "anything at all"`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
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
			if neighbours < 0 || neighbours > memory.MaxNeighbours {
				return usageError{fmt.Errorf("--neighbours must be in [0, %d], got %d", memory.MaxNeighbours, neighbours)}
			}
			if !(minRelevance >= -1 && minRelevance <= 1) {
				return usageError{fmt.Errorf("--min-relevance must be in [-1, 1], got %v", minRelevance)}
			}
			if maxTokens < 0 {
				return usageError{fmt.Errorf("--max-tokens must be ≥ 0, got %d", maxTokens)}
			}
			if err := a.longOnly(cmd, "namespace", "mode", "neighbours", "min-relevance", "explain", "max-tokens", "as-of", "history"); err != nil {
				return err
			}
			at, err := parseTime("--as-of", asOf)
			if err != nil {
				return err
			}
			m, err := memory.ParseMode(mode)
			if err != nil {
				return usageError{fmt.Errorf("--mode: %w", err)}
			}
			return a.withStore(cmd, false, store.Config{ReadOnly: true}, func(st store.Memory) error {
				sm, ok := st.(*store.Store)
				if !ok || sm.Short() == nil {
					q := memory.Query{Text: query, Namespace: namespace, Mode: m, K: k, Neighbours: neighbours, MinRelevance: minRelevance, Explain: explain, MaxTokens: maxTokens,
						AsOf: at, History: history}
					if flagChanged(cmd, "min-score") {
						q.MinScore = minScore
					}
					return a.searchLong(cmd, st, q)
				}
				hits, err := sm.Short().SearchN(cmd.Context(), query, k, minScore)
				if err != nil {
					return err
				}
				return a.printHits(cmd, query, hits, minScore)
			})
		},
	}
	f := cmd.Flags()
	f.IntVarP(&k, "k", "k", short.DefaultTopK, "return at most `N` segments")
	f.Float32Var(&minScore, "min-score", short.DefaultMinScore, "lowest cosine similarity `S` to return, in [-1, 1]")
	f.StringVar(&namespace, "namespace", "", "search only this namespace (long-term store only; default: all)")
	f.StringVar(&mode, "mode", memory.Hybrid.String(), `retrieval paths: "hybrid", "vector" or "keyword" (long-term store only)`)
	f.IntVar(&neighbours, "neighbours", 0, "also print up to `N` memories said just before and after each hit in its conversation (long-term store only)")
	f.Float32Var(&minRelevance, "min-relevance", 0, "lowest relevance `R` of a hit, in [0, 1]; 0: the store's default, negative: every hit that matched at all (long-term store only)")
	f.IntVar(&maxTokens, "max-tokens", 0, "a budget of `T` tokens for the memories printed, with their neighbours: the most relevant that fit (long-term store only; 0: none)")
	f.StringVar(&asOf, "as-of", "", "search what held at this time, RFC 3339 or a date: a superseded memory before its successor's time, and the moment the query's \"yesterday\" or \"last week\" counts back from (long-term store only; default now)")
	f.BoolVar(&history, "history", false, "search every version, superseded ones too, each marked (long-term store only)")
	f.BoolVar(&explain, "explain", false, "print why each memory surfaced: what each path found (on the keyword path, what its own words score and the question it answers), the search's best, the share of the query its namespace holds (long-term store only)")
	return cmd
}

// longHit is one long-term hit as printed with --json.
type longHit struct {
	ID          string    `json:"id"`
	Score       float32   `json:"score"`
	Relevance   float32   `json:"relevance"`
	Tokens      int       `json:"tokens,omitempty"`
	Time        time.Time `json:"time"`
	Namespace   string    `json:"namespace"`
	Speaker     string    `json:"speaker,omitempty"`
	Text        string    `json:"text"`
	Snippets    []string  `json:"snippets"`
	VectorRank  int       `json:"vector_rank,omitempty"`
	KeywordRank int       `json:"keyword_rank,omitempty"`
	// The hit's validity and versions, when set.
	ValidFrom    time.Time `json:"valid_from,omitzero"`
	ValidUntil   time.Time `json:"valid_until,omitzero"`
	Supersedes   string    `json:"supersedes,omitempty"`
	SupersededBy string    `json:"superseded_by,omitempty"`
	// Before and After are the hit's neighbours (--neighbours).
	Before []recordJSON `json:"before,omitempty"`
	After  []recordJSON `json:"after,omitempty"`
	// Explain is why it surfaced (--explain), as the HTTP API says it.
	Explain *server.Explanation `json:"explain,omitempty"`
}

// searchLong runs q on the long-term store st and prints the hits.
func (a *app) searchLong(cmd *cobra.Command, st memory.Querier, q memory.Query) error {
	hits, err := st.Query(cmd.Context(), q)
	if err != nil {
		return err
	}
	reason := ""
	if len(hits) == 0 {
		if reason, err = server.EmptyReason(cmd.Context(), st, q); err != nil {
			return err
		}
	}
	out := cmd.OutOrStdout()
	if a.json {
		res := struct {
			Query     string    `json:"query"`
			Mode      string    `json:"mode"`
			Namespace string    `json:"namespace,omitempty"`
			Hits      []longHit `json:"hits"`
			// Reason says why there are no hits.
			Reason string `json:"reason,omitempty"`
			// Tokens is what the hits cost of --max-tokens.
			Tokens int `json:"tokens,omitempty"`
		}{Tokens: memory.Tokens(hits), Query: q.Text, Mode: q.Mode.String(), Namespace: q.Namespace, Hits: make([]longHit, len(hits))}
		res.Reason = reason
		for i, h := range hits {
			res.Hits[i] = longHit{
				ID: h.ID, Score: h.Score, Relevance: h.Relevance, Tokens: h.Tokens, Time: h.Time, Namespace: h.Namespace, Speaker: h.Speaker,
				Text: h.Text, Snippets: h.Snippets, VectorRank: h.VectorRank, KeywordRank: h.KeywordRank,
				Explain: server.Explain(h.Explain), ValidFrom: h.ValidFrom, ValidUntil: h.ValidUntil, Supersedes: h.Supersedes, SupersededBy: h.SupersededBy,
			}
			for _, r := range h.Before {
				res.Hits[i].Before = append(res.Hits[i].Before, toJSON(r))
			}
			for _, r := range h.After {
				res.Hits[i].After = append(res.Hits[i].After, toJSON(r))
			}
		}
		return json.NewEncoder(out).Encode(res)
	}
	if len(hits) == 0 {
		where := ""
		if q.Namespace != "" {
			where = " in namespace " + q.Namespace
		}
		switch {
		case strings.HasPrefix(reason, server.EmptyNamespace):
			fmt.Fprintf(cmd.ErrOrStderr(), "namespace %q holds no memories (agentmem stats and list show what the store holds)\n", q.Namespace)
			return nil
		case reason != server.NoRelevantMemory:
			fmt.Fprintf(cmd.ErrOrStderr(), "%s (query %q%s, %s search; a larger --max-tokens makes room)\n", reason, q.Text, where, q.Mode)
			return nil
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "no memory is relevant to %q%s (%s search; --min-relevance -1 shows every memory that matched at all)\n", q.Text, where, q.Mode)
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
		fmt.Fprintf(out, "%d. relevance %.2f  score %.4f  id %s  %s  %s%s\n", i+1, h.Relevance, h.Score, h.ID, h.Time.Local().Format("2006-01-02 15:04"), who, ranks(h))
		if h.SupersededBy != "" || !h.ValidUntil.IsZero() {
			fmt.Fprintf(out, "   (%s; superseded by %s)\n", held(memory.Record{Time: h.Time, ValidFrom: h.ValidFrom, ValidUntil: h.ValidUntil}), cmp.Or(h.SupersededBy, "none"))
		}
		if x := h.Explain; x != nil {
			answers := ""
			if x.Answers != "" {
				answers = fmt.Sprintf("; it answers %q", firstLine(x.Answers, 80))
			}
			if len(x.UnknownNames) > 0 {
				answers += "; the namespace never mentions " + strings.Join(x.UnknownNames, ", ")
			}
			if len(x.Speakers) > 0 {
				answers += "; the query asks about what " + strings.Join(x.Speakers, " and ") + " said"
			}
			for _, sp := range slices.Sorted(maps.Keys(x.Aliases)) {
				answers += fmt.Sprintf("; it calls %s %s, the name they gave", sp, strings.Join(x.Aliases[sp], " and "))
			}
			if len(x.LaterThan) > 0 {
				answers += "; a later version of " + strings.Join(x.LaterThan, " and ") + " (said earlier, the same words of the query), placed before it"
			}
			ns := "the namespace"
			if x.Records > 0 {
				ns = fmt.Sprintf("the namespace (%d records)", x.Records)
			}
			if x.Documents {
				ns += ", passages the relevance of a Chinese query reads as documents,"
			}
			fmt.Fprintf(out, "   why: found by %s; keyword %.3f (its own words %.3f, best %.3f), cosine %.3f (best %.3f), fused %.4f; %s holds %.0f%% of the query, the best hit %.0f%% of its words; matched terms: %s%s\n",
				strings.Join(x.Paths, " and "), x.Keyword, x.OwnKeyword, x.BestKeyword, x.Vector, x.BestVector, x.Fused, ns, 100*x.Coverage, 100*x.BestShare, cmp.Or(strings.Join(x.Terms, ", "), "none"), answers)
		}
		snips := h.Snippets
		if len(snips) == 0 {
			snips = []string{h.Text}
		}
		printNeighbours(out, "before", h.Before)
		for _, s := range snips {
			for line := range strings.SplitSeq(s, "\n") {
				if _, err := fmt.Fprintf(out, "   %s\n", line); err != nil {
					return err
				}
			}
		}
		printNeighbours(out, "after", h.After)
	}
	if q.MaxTokens > 0 {
		fmt.Fprintf(out, "\n(%d of %d tokens)\n", memory.Tokens(hits), q.MaxTokens)
	}
	return nil
}

// printNeighbours prints a hit's neighbours, one line each: where they
// are, who spoke and the first line of what was said.
func printNeighbours(out io.Writer, where string, rs []memory.Record) {
	for _, r := range rs {
		text, _, _ := strings.Cut(r.Text, "\n")
		who := ""
		if r.Speaker != "" {
			who = r.Speaker + ": "
		}
		fmt.Fprintf(out, "   (%s) %s%s\n", where, who, text)
	}
}

// ranks explains a hybrid hit: its rank on each path that found it.
func ranks(h memory.Hit) string {
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

func (a *app) printHits(cmd *cobra.Command, query string, hits []memory.Hit, minScore float32) error {
	out := cmd.OutOrStdout()
	if a.json {
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
