package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/longterm"
	"github.com/agentmem/agentmem/store"
)

// importLine is one line of an import file. Other fields are ignored; a
// short-term store reads only Text.
type importLine struct {
	Text      *string `json:"text"`
	ID        string  `json:"id"`
	Namespace string  `json:"namespace"`
	Speaker   string  `json:"speaker"`
	Time      string  `json:"time"` // RFC 3339
	line      int     // the line's number in its file
}

func newImportCmd(a *app) *cobra.Command {
	var batch int
	var namespace string
	var skipEmpty bool
	cmd := &cobra.Command{
		Use:   "import FILE.jsonl",
		Short: `Remember every {"text": ...} line of a JSONL file`,
		Long: `Import reads a JSON Lines file (or standard input for "-") holding one object
with a "text" field per line, e.g. one round of conversation each, and stores
the texts as segments, embedded in batches. Blank lines are skipped; other
fields are ignored. A line that is not such an object stops the import before
anything is stored, with an error naming the line, and so does a line whose
"text" is empty or white space, unless --skip-empty skips and counts it (an
export of a chat often holds messages without text: attachments, tool
calls). Texts the store already holds are skipped, so importing the same
file twice does not duplicate it.

In a long-term store (--memory long) each line is a memory and may also
carry these optional string fields:
  "id"         the memory's id; a stored memory with that id is replaced
               (unless it is the same). Without one, the id is derived from
               the namespace, speaker, time and text, so that importing the
               same file twice stores nothing twice. An id is the whole
               store's, not a namespace's: a line whose id another line or
               a stored memory has in another namespace stops the import.
  "namespace"  whose memory it is (default --namespace, else "default")
  "speaker"    who said it, e.g. "user"
  "time"       when it was said, RFC 3339 (default: now)
e.g. {"text": "user: my flight is LH 401", "namespace": "mara",
      "speaker": "user", "time": "2026-03-01T09:30:00+01:00"}

A progress bar is shown on standard error when it is a terminal.`,
		Example: `  agentmem import testdata/conversation.jsonl
  jq -c '{text: .content}' chat.json | agentmem import -
  agentmem import --memory long --namespace mara testdata/conversation.jsonl
  agentmem import --skip-empty export.jsonl`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if batch <= 0 {
				return usageError{fmt.Errorf("--batch must be positive, got %d", batch)}
			}
			if err := a.longOnly(cmd, "namespace"); err != nil {
				return err
			}
			kind, err := a.kind(cmd)
			if err != nil {
				return err
			}
			limit, err := a.maxRecordBytes()
			if err != nil {
				return err
			}
			name := args[0]
			lines, empty, err := readImport(cmd, name, kind == store.Long, limit, skipEmpty)
			if err != nil {
				return err
			}
			var (
				imported, skipped int
				nouns             string
				took              time.Duration
				stored            time.Time // when the records were stored, before the store's Close
			)
			err = a.withStore(cmd, true, store.Config{MaxRecordBytes: limit}, func(st store.Memory) error {
				todo, skip, err := newRecords(cmd.Context(), st, name, lines, namespace)
				if err != nil {
					return err
				}
				l, loads := st.(loader)
				if loads {
					took, err = load(cmd, a, name, l, todo, batch)
				} else {
					took, err = importBatches(cmd, a, name, len(todo), batch, func(lo, hi int) error {
						_, err := st.AddBatch(cmd.Context(), todo[lo:hi])
						return recordError(err)
					})
				}
				if err != nil {
					return err
				}
				imported, skipped, nouns = len(todo), skip, noun(st)
				if f := terminal(cmd, a); f != nil && imported > 0 && !loads {
					// Closing a store directory may write its snapshot
					// (seconds for a large import): say so on the terminal.
					fmt.Fprintln(f, "saving the store…")
				}
				stored = time.Now()
				return nil
			})
			if err != nil {
				return err
			}
			closing := time.Since(stored)
			out := cmd.OutOrStdout()
			if a.json {
				return json.NewEncoder(out).Encode(struct {
					File     string  `json:"file"`
					Store    string  `json:"store"`
					Imported int     `json:"imported"`
					Skipped  int     `json:"skipped"`
					Empty    int     `json:"empty"`
					Seconds  float64 `json:"seconds"`
					Closing  float64 `json:"close_seconds"`
				}{name, a.where(), imported, skipped, empty, took.Seconds(), closing.Seconds()})
			}
			fmt.Fprintf(out, "imported %d %s from %s into %s", imported, plural(imported, nouns), name, a.where())
			var notes []string
			if skipped > 0 {
				notes = append(notes, fmt.Sprintf("%d already stored", skipped))
			}
			if empty > 0 {
				notes = append(notes, fmt.Sprintf("%d empty %s skipped", empty, plural(empty, "text")))
			}
			if len(notes) > 0 {
				fmt.Fprintf(out, " (%s)", strings.Join(notes, ", "))
			}
			if secs := took.Seconds(); imported > 0 && secs > 0 {
				fmt.Fprintf(out, " in %.2fs, %.0f %s/s", secs, float64(imported)/secs, plural(2, nouns))
				if closing >= time.Second {
					fmt.Fprintf(out, ", then %.1fs saving the store", closing.Seconds())
				}
			}
			_, err = fmt.Fprintln(out)
			return err
		},
	}
	cmd.Flags().IntVar(&batch, "batch", 1000, "texts per embedding call and per fsync")
	cmd.Flags().BoolVar(&skipEmpty, "skip-empty", false, `skip (and count) lines whose "text" is empty or white space instead of stopping`)
	cmd.Flags().StringVar(&namespace, "namespace", "", `namespace of lines without one (long-term store only; default "default")`)
	a.maxRecordFlag(cmd)
	return cmd
}

// importBatches calls store for the ranges [lo, hi) of n items, batch at a
// time, with a progress bar, and returns how long that took.
func importBatches(cmd *cobra.Command, a *app, name string, n, batch int, store func(lo, hi int) error) (time.Duration, error) {
	start := time.Now()
	bar := newBar(cmd, a, n)
	for lo := 0; lo < n; lo += batch {
		hi := min(lo+batch, n)
		if err := store(lo, hi); err != nil {
			return 0, fmt.Errorf("import %s: stored %d of %d texts, then: %w", name, lo, n, err)
		}
		if bar != nil {
			bar.Add(hi - lo)
		}
	}
	if bar != nil {
		bar.Finish()
		fmt.Fprintln(cmd.ErrOrStderr())
	}
	return time.Since(start), nil
}

// lineSlack is how much longer than --max-record-bytes an import line may
// be: its JSON syntax and the fields other than the text.
const lineSlack = 64 << 10

// loader is a store that loads many records faster than one AddBatch
// call per batch (memory/postgres: Load builds its vector index once at
// the end rather than growing it batch by batch).
type loader interface {
	Load(ctx context.Context, recs []memory.Record, batch int, progress func(stored int)) ([]string, error)
}

// load stores recs into l, batch at a time, with the progress bar of
// importBatches, and returns how long that took.
func load(cmd *cobra.Command, a *app, name string, l loader, recs []memory.Record, batch int) (time.Duration, error) {
	start := time.Now()
	bar := newBar(cmd, a, len(recs))
	done := 0
	_, err := l.Load(cmd.Context(), recs, batch, func(stored int) {
		if bar == nil {
			return
		}
		bar.Add(stored - done)
		done = stored
		if stored == len(recs) {
			// The last batch is in (a bar has at least one record):
			// the load ends by building its indexes (minutes for
			// PostgreSQL's HNSW index at a million chunks), so say so
			// on the terminal.
			bar.Finish()
			fmt.Fprintln(cmd.ErrOrStderr())
			fmt.Fprintln(cmd.ErrOrStderr(), "building the indexes…")
		}
	})
	if err != nil {
		return 0, fmt.Errorf("import %s: %w", name, recordError(err))
	}
	return time.Since(start), nil
}

// readImport reads and checks every line of the import file before anything
// is stored. With long false only the text is read. A line longer than
// limit+lineSlack bytes is refused as soon as that much of it is read, so
// that a huge line costs neither the memory nor the time of reading it; a
// line that is not valid UTF-8 is refused too (add and the HTTP API refuse
// such text; JSON decoding would silently replace it).
func readImport(cmd *cobra.Command, name string, long bool, limit int, skipEmpty bool) (lines []importLine, empty int, err error) {
	var r io.Reader
	if name == "-" {
		r = cmd.InOrStdin()
		name = "standard input"
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, 0, err
		}
		defer f.Close()
		r = f
	}
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := readLine(br, limit+lineSlack)
		if errors.Is(err, errLongLine) {
			return nil, 0, fmt.Errorf("%s:%d: %w: the line is longer than %d bytes; a memory may be at most %d (--max-record-bytes)",
				name, n, memory.ErrTooLarge, limit+lineSlack, limit)
		}
		if i := invalidUTF8(line); i >= 0 {
			return nil, 0, fmt.Errorf("%s:%d: %w at byte %d of the line (convert the file to UTF-8 first, e.g. with iconv)", name, n, longterm.ErrInvalidUTF8, i+1)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			l, perr := parseImportLine(line, long)
			switch {
			case errors.Is(perr, errEmptyText) && skipEmpty:
				empty++
			case errors.Is(perr, errEmptyText):
				return nil, 0, fmt.Errorf("%s:%d: %w (--skip-empty skips such lines)", name, n, perr)
			case perr != nil:
				return nil, 0, fmt.Errorf("%s:%d: %w", name, n, perr)
			default:
				l.line = n
				lines = append(lines, l)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("read %s: %w", name, err)
		}
	}
	if len(lines) == 0 && empty > 0 {
		return nil, 0, fmt.Errorf("%s holds no text to import (%d empty %s skipped)", name, empty, plural(empty, "text"))
	}
	if len(lines) == 0 {
		return nil, 0, fmt.Errorf("%s holds no lines to import", name)
	}
	return lines, empty, nil
}

// errEmptyText: an import line's "text" is empty or white space.
var errEmptyText = errors.New(`"text" is empty`)

// errLongLine: readLine met a line longer than its limit.
var errLongLine = errors.New("line too long")

// readLine reads one line of br, its newline included, like ReadBytes, but
// stops with errLongLine once it has read more than limit bytes of it.
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		if len(line)+len(part) > limit {
			return nil, errLongLine
		}
		line = append(line, part...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// invalidUTF8 returns the offset of the first byte of b that is not valid
// UTF-8, or -1.
func invalidUTF8(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

func parseImportLine(line []byte, long bool) (importLine, error) {
	var l importLine
	var err error
	if long {
		err = json.Unmarshal(line, &l)
	} else {
		err = json.Unmarshal(line, &struct {
			Text **string `json:"text"`
		}{&l.Text})
	}
	if err != nil {
		return importLine{}, fmt.Errorf(`want one JSON object like {"text": "..."} per line: %w`, err)
	}
	if l.Text == nil {
		return importLine{}, errors.New(`the object has no "text" field`)
	}
	if strings.TrimSpace(*l.Text) == "" {
		return importLine{}, errEmptyText
	}
	if l.Time != "" {
		if _, err := time.Parse(time.RFC3339, l.Time); err != nil {
			return importLine{}, fmt.Errorf(`"time" %q is not an RFC 3339 time like "2026-03-01T09:30:00+01:00"`, l.Time)
		}
	}
	return l, nil
}

// newRecords turns lines into records and drops the ones the memory already
// holds, and repeats within lines. A line without an id gets one derived
// from its namespace, speaker, time and text (see contentID); a line whose
// id is stored with the same namespace, speaker, text (and time, if the line
// has one) is skipped. An id is the store's, not a namespace's: a line
// whose id an earlier line or a stored memory has in another namespace
// would replace that memory (the same turn ids in each conversation of an
// export: all but the last conversation's lost), so it is an error naming
// the file (name) and line, before anything is stored.
func newRecords(ctx context.Context, mem memory.Records, name string, lines []importLine, namespace string) (todo []memory.Record, skipped int, err error) {
	if name == "-" {
		name = "standard input"
	}
	clash := func(l importLine, rec memory.Record, holder, other, hint string) error {
		return fmt.Errorf("%s:%d: %w: id %q is %s in namespace %q, but this line's namespace is %q: an id names one memory in the whole store, "+
			"so this line would replace it (make the ids unique, e.g. %q, or leave \"id\" out to derive one from the text%s)",
			name, l.line, memory.ErrInvalidArgument, rec.ID, holder, other, rec.Namespace, rec.Namespace+"/"+rec.ID, hint)
	}
	seen := map[string]memory.Record{}
	firstLine := map[string]int{}
	same := func(a, b memory.Record, hasTime bool) bool {
		return a.Text == b.Text && a.Namespace == b.Namespace && a.Speaker == b.Speaker && (!hasTime || a.Time.Equal(b.Time))
	}
	recs := make([]memory.Record, len(lines))
	ids := make([]string, len(lines))
	for i, l := range lines {
		rec := memory.Record{ID: l.ID, Text: *l.Text, Namespace: cmp.Or(l.Namespace, namespace, "default"), Speaker: l.Speaker}
		if l.Time != "" {
			rec.Time, _ = time.Parse(time.RFC3339, l.Time) // checked by parseImportLine
		}
		if rec.ID == "" {
			rec.ID = contentID(rec)
		}
		recs[i], ids[i] = rec, rec.ID
	}
	// A store that reads many ids at once (PostgreSQL: a round trip per
	// id otherwise) is asked for them all first.
	var stored map[string]memory.Record
	if g, ok := mem.(interface {
		GetMany(ctx context.Context, ids []string) (map[string]memory.Record, error)
	}); ok {
		if stored, err = g.GetMany(ctx, ids); err != nil {
			return nil, 0, err
		}
	}
	for i, rec := range recs {
		old, ok := seen[rec.ID]
		switch {
		case ok:
			if old.Namespace != rec.Namespace {
				return nil, 0, clash(lines[i], rec, fmt.Sprintf("line %d's", firstLine[rec.ID]), old.Namespace, "")
			}
		case stored != nil:
			old, ok = stored[rec.ID]
		default:
			if old, ok, err = lookup(ctx, mem, rec.ID); err != nil {
				return nil, 0, err
			}
		}
		if ok && old.Namespace != rec.Namespace {
			return nil, 0, clash(lines[i], rec, "a stored memory's", old.Namespace, "; to move that memory, agentmem forget "+rec.ID+" first")
		}
		if _, ok := firstLine[rec.ID]; !ok {
			firstLine[rec.ID] = lines[i].line
		}
		if ok && same(old, rec, lines[i].Time != "") {
			skipped++
			continue
		}
		seen[rec.ID] = rec
		todo = append(todo, rec)
	}
	return todo, skipped, nil
}

// contentID derives a record id from its namespace, speaker, time (if set)
// and text: 24 hex digits, like the ids longterm generates.
func contentID(r memory.Record) string {
	h := sha256.New()
	for _, s := range []string{r.Namespace, r.Speaker, timeKey(r.Time), r.Text} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// timeKey is t in UTC (one key for one instant), or "" for the zero time.
func timeKey(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// newBar returns a progress bar on standard error if it is a terminal and
// there is something to import; otherwise nil.
func newBar(cmd *cobra.Command, a *app, n int) *progressbar.ProgressBar {
	f := terminal(cmd, a)
	if f == nil || n == 0 {
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

// terminal returns standard error when it is a terminal and the output is
// not JSON (where progress is shown), nil otherwise.
func terminal(cmd *cobra.Command, a *app) *os.File {
	f, ok := cmd.ErrOrStderr().(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) || a.json {
		return nil
	}
	return f
}
