package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agentmem/agentmem/memory"
)

func init() { rootCmd.AddCommand(newImportCmd()) }

// importLine is one line of an import file. Other fields are ignored.
type importLine struct {
	Text *string `json:"text"`
}

func newImportCmd() *cobra.Command {
	var batch int
	cmd := &cobra.Command{
		Use:   "import FILE.jsonl",
		Short: `Remember every {"text": ...} line of a JSONL file`,
		Long: `Import reads a JSON Lines file (or standard input for "-") holding one object
with a "text" field per line, e.g. one round of conversation each, and stores
the texts as segments, embedded in batches. Blank lines are skipped; other
fields are ignored. A line that is not such an object stops the import before
anything is stored, with an error naming the line. Texts the store already
holds are skipped, so importing the same file twice does not duplicate it.

A progress bar is shown on standard error when it is a terminal.`,
		Example: `  agentmem import testdata/conversation.jsonl
  jq -c '{text: .content}' chat.json | agentmem import -`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if batch <= 0 {
				return usageError{fmt.Errorf("--batch must be positive, got %d", batch)}
			}
			name := args[0]
			texts, err := readImport(cmd, name)
			if err != nil {
				return err
			}
			mem, err := openStore(cmd.Context(), cmd, true)
			if err != nil {
				return err
			}
			defer closeStore(mem, &err)

			todo, skipped := newTexts(mem, texts)
			start := time.Now()
			bar := newBar(cmd, len(todo))
			imported := 0
			for lo := 0; lo < len(todo); lo += batch {
				chunk := todo[lo:min(lo+batch, len(todo))]
				if _, err := mem.UpdateBatch(cmd.Context(), chunk); err != nil {
					return fmt.Errorf("import %s: stored %d of %d texts, then: %w", name, imported, len(todo), err)
				}
				imported += len(chunk)
				if bar != nil {
					bar.Add(len(chunk))
				}
			}
			if bar != nil {
				bar.Finish()
				fmt.Fprintln(cmd.ErrOrStderr())
			}
			secs := time.Since(start).Seconds()
			out := cmd.OutOrStdout()
			if global.json {
				return json.NewEncoder(out).Encode(struct {
					File     string  `json:"file"`
					Store    string  `json:"store"`
					Imported int     `json:"imported"`
					Skipped  int     `json:"skipped"`
					Seconds  float64 `json:"seconds"`
				}{name, global.store, imported, skipped, secs})
			}
			fmt.Fprintf(out, "imported %d %s from %s into %s", imported, plural(imported, "segment"), name, global.store)
			if skipped > 0 {
				fmt.Fprintf(out, " (%d already stored)", skipped)
			}
			if imported > 0 && secs > 0 {
				fmt.Fprintf(out, " in %.2fs, %.0f segments/s", secs, float64(imported)/secs)
			}
			_, err = fmt.Fprintln(out)
			return err
		},
	}
	cmd.Flags().IntVar(&batch, "batch", 1000, "texts per embedding call and per fsync")
	return cmd
}

// readImport reads and checks every line of the import file before anything
// is stored.
func readImport(cmd *cobra.Command, name string) ([]string, error) {
	var r io.Reader
	if name == "-" {
		r = cmd.InOrStdin()
		name = "standard input"
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	var texts []string
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			text, perr := parseImportLine(line)
			if perr != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, n, perr)
			}
			texts = append(texts, text)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
	}
	if len(texts) == 0 {
		return nil, fmt.Errorf("%s holds no lines to import", name)
	}
	return texts, nil
}

func parseImportLine(line []byte) (string, error) {
	var l importLine
	if err := json.Unmarshal(line, &l); err != nil {
		return "", fmt.Errorf(`want one JSON object like {"text": "..."} per line: %w`, err)
	}
	if l.Text == nil {
		return "", errors.New(`the object has no "text" field`)
	}
	if strings.TrimSpace(*l.Text) == "" {
		return "", errors.New(`"text" is empty`)
	}
	return *l.Text, nil
}

// newTexts drops texts the memory already holds, and repeats within texts.
func newTexts(mem *memory.ShortMemory, texts []string) (todo []string, skipped int) {
	seen := map[string]bool{}
	for _, h := range mem.Segments() {
		seen[h.Text] = true
	}
	for _, t := range texts {
		if seen[t] {
			skipped++
			continue
		}
		seen[t] = true
		todo = append(todo, t)
	}
	return todo, skipped
}

// newBar returns a progress bar on standard error if it is a terminal and
// there is something to import; otherwise nil.
func newBar(cmd *cobra.Command, n int) *progressbar.ProgressBar {
	f, ok := cmd.ErrOrStderr().(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) || n == 0 || global.json {
		return nil
	}
	return progressbar.NewOptions(n,
		progressbar.OptionSetWriter(f),
		progressbar.OptionSetDescription("importing"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("segments"),
		progressbar.OptionThrottle(100*time.Millisecond),
	)
}
