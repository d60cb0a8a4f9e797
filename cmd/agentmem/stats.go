package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/store"
)

func newStatsCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "stats",
		Short: "Describe the store: memories, embedder, backend",
		Long: `Stats describes the store: its kind, the number of memories (segments in
a short-term store, records in a long-term one) and of the chunks they are
indexed as (a long-term store splits records into sentences), the vectors,
the embedder and the vector backend (and a PostgreSQL store's schema).`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withStore(cmd, false, store.Config{ReadOnly: true}, func(st store.Memory) error {
				var s store.Stats
				if sc, ok := st.(statser); ok {
					// A database that cannot be reached is an error, not 0 memories.
					var err error
					if s, err = sc.StatsContext(cmd.Context()); err != nil {
						return err
					}
				} else {
					s = st.Stats()
				}
				rep := storeStats{
					Store: a.where(), Memory: string(s.Kind), Memories: s.Records, Chunks: s.Chunks, Vectors: s.Vectors,
					Embedder: s.Embedder, Dim: s.Dim, Backend: s.Backend, Schema: s.Schema, SchemaVersion: s.SchemaVersion,
				}
				if s.Kind == store.Short {
					rep.TopK, rep.MinScore = s.TopK, new(s.MinScore)
				}
				out := cmd.OutOrStdout()
				if a.json {
					return json.NewEncoder(out).Encode(rep)
				}
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintf(tw, "store\t%s (%s-term)\n", rep.Store, rep.Memory)
				fmt.Fprintf(tw, "%s\t%d\n", plural(2, noun(st)), rep.Memories)
				if st.Kind() == store.Long {
					fmt.Fprintf(tw, "chunks\t%d\n", rep.Chunks)
				}
				fmt.Fprintf(tw, "vectors\t%d\n", rep.Vectors)
				fmt.Fprintf(tw, "embedder\t%s (dim %d)\n", rep.Embedder, rep.Dim)
				fmt.Fprintf(tw, "backend\t%s\n", rep.Backend)
				if rep.Schema != "" {
					fmt.Fprintf(tw, "schema\t%s (version %d)\n", rep.Schema, rep.SchemaVersion)
				}
				if rep.MinScore != nil {
					fmt.Fprintf(tw, "search\ttop %d, min score %.2f\n", rep.TopK, *rep.MinScore)
				}
				return tw.Flush()
			})
		},
	}
}

// statser is a store whose counts can fail (store.Postgres).
type statser interface {
	StatsContext(ctx context.Context) (store.Stats, error)
}

// storeStats describes a store (stats --json).
type storeStats struct {
	Store    string `json:"store"`
	Memory   string `json:"memory"` // the kind: "short" or "long"
	Memories int    `json:"memories"`
	Chunks   int    `json:"chunks"`
	Vectors  int    `json:"vectors"`
	Embedder string `json:"embedder"`
	Dim      int    `json:"dim"`
	Backend  string `json:"backend"` // "postgres" for a PostgreSQL store
	// Schema and SchemaVersion are a PostgreSQL store's.
	Schema        string `json:"schema,omitempty"`
	SchemaVersion int    `json:"schema_version,omitempty"`
	// TopK and MinScore are a short-term store's search defaults.
	TopK     int      `json:"top_k,omitempty"`
	MinScore *float32 `json:"min_score,omitempty"`
}
