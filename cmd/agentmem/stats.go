package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

func init() { rootCmd.AddCommand(newStatsCmd()) }

func newStatsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "stats",
		Short: "Describe the store: segments, embedder, backend, sizes",
		Long: `Stats describes the store. For a long-term store (--memory long) it prints
the number of memories (records) and of the chunks (sentences) they are
split into and indexed as, the embedder and the vector backend.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			kind, err := storeKind(cmd)
			if err != nil {
				return err
			}
			if kind == kindLong {
				return statsLong(cmd)
			}
			mem, err := openStore(cmd.Context(), cmd, false)
			if err != nil {
				return err
			}
			defer closeStore(mem, &err)
			st := mem.Stats()
			out := cmd.OutOrStdout()
			if global.json {
				return json.NewEncoder(out).Encode(st)
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "store\t%s\n", st.Store)
			fmt.Fprintf(tw, "segments\t%d\n", st.Segments)
			fmt.Fprintf(tw, "vectors\t%d\n", st.Vectors)
			fmt.Fprintf(tw, "embedder\t%s (dim %d)\n", st.Embedder, st.Dim)
			fmt.Fprintf(tw, "backend\t%s\n", st.Backend)
			fmt.Fprintf(tw, "log\t%s (%s not in the vector snapshot)\n", byteSize(st.LogBytes), byteSize(st.Unsnapshotted))
			fmt.Fprintf(tw, "search\ttop %d, min score %.2f\n", st.TopK, st.MinScore)
			return tw.Flush()
		},
	}
}

// longStats describes a long-term store (stats --json).
type longStats struct {
	Store    string `json:"store"`
	Memory   string `json:"memory"` // "long"
	Memories int    `json:"memories"`
	Chunks   int    `json:"chunks"`
	Embedder string `json:"embedder"`
	Dim      int    `json:"dim"`
	Backend  string `json:"backend"`
}

func statsLong(cmd *cobra.Command) (err error) {
	mem, err := openLongStore(cmd.Context(), cmd, false)
	if err != nil {
		return err
	}
	defer closeStore(mem, &err)
	st := longStats{
		Store: global.store, Memory: kindLong, Memories: mem.Len(), Chunks: mem.Chunks(),
		Embedder: mem.embedder, Dim: mem.dim, Backend: mem.backend,
	}
	out := cmd.OutOrStdout()
	if global.json {
		return json.NewEncoder(out).Encode(st)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "store\t%s (long-term)\n", st.Store)
	fmt.Fprintf(tw, "memories\t%d\n", st.Memories)
	fmt.Fprintf(tw, "chunks\t%d\n", st.Chunks)
	fmt.Fprintf(tw, "embedder\t%s (dim %d)\n", st.Embedder, st.Dim)
	fmt.Fprintf(tw, "backend\t%s\n", st.Backend)
	return tw.Flush()
}

// byteSize formats n bytes with a binary unit.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
