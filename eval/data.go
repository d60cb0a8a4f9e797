// Package eval measures long-term retrieval on conversation data in the
// common format of the project's retrieval data (turns.jsonl and
// questions.jsonl): every conversation is its own namespace, turns are
// ingested in file order and every question is asked at its moment (only
// the turns before its asked_at turn are in memory), and the scores are
// exactly those of the plain BM25 reference (bm25.py): recall@k and hit@k,
// overall and per category, with the ceiling a perfect ranking would reach.
// The same run scores a Go port of that BM25 over the same data, so that a
// retrieval mode is always printed beside its floor.
package eval

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentmem/agentmem/internal/errs"
)

// A Turn is one line of turns.jsonl: one stored item. Other fields are
// ignored.
type Turn struct {
	Conv string `json:"conv"`
	// Session is a number or a label; it is not used for retrieval.
	Session json.RawMessage `json:"session"`
	// Date is when the turn was said: ISO ("2025-12-19"), RFC 3339 or the
	// "1:56 pm on 8 May, 2023" form; other forms are kept as text only.
	Date    string `json:"date"`
	ID      string `json:"id"`
	Speaker string `json:"speaker"`
	Text    string `json:"text"`
	// ImageCaption describes an image shared with the turn (optional). A
	// memory of the turn keeps it, as an agent would keep what a shared
	// picture shows: see [Turn.Content].
	ImageCaption string `json:"image_caption"`
}

// Content is what is remembered of the turn: its text, and the caption of
// an image shared with it, if any, as "TEXT [image: CAPTION]".
func (t Turn) Content() string {
	c := strings.TrimSpace(t.ImageCaption)
	if c == "" {
		return t.Text
	}
	if strings.TrimSpace(t.Text) == "" {
		return "[image: " + c + "]"
	}
	return t.Text + " [image: " + c + "]"
}

// A Question is one line of questions.jsonl.
type Question struct {
	QID      string   `json:"qid"`
	Conv     string   `json:"conv"`
	Question string   `json:"question"`
	Evidence []string `json:"evidence"`
	// Category is a number or a string.
	Category json.RawMessage `json:"category"`
	// AskedAt, when set, is the id of the turn at which the question is
	// asked: only the turns before it (in file order) are in memory.
	AskedAt string `json:"asked_at"`
}

// A Dataset is a set of turns and the questions about them.
type Dataset struct {
	Turns     []Turn
	Questions []Question
}

// Load reads DIR/turns.jsonl and DIR/questions.jsonl and checks them (see
// [Dataset.Check]).
func Load(dir string) (*Dataset, error) {
	return LoadFiles(filepath.Join(dir, "turns.jsonl"), filepath.Join(dir, "questions.jsonl"))
}

// LoadFiles reads a turns file and a questions file and checks them.
func LoadFiles(turnsPath, questionsPath string) (*Dataset, error) {
	turns, err := ReadJSONL[Turn](turnsPath)
	if err != nil {
		return nil, err
	}
	qs, err := ReadJSONL[Question](questionsPath)
	if err != nil {
		return nil, err
	}
	d := &Dataset{Turns: turns, Questions: qs}
	if err := d.Check(); err != nil {
		return nil, err
	}
	return d, nil
}

// Check normalises evidence ids (trimmed; "D8:6; D9:17" split in two) and
// validates the data: every turn has a conv and an id unique in its conv;
// every question's evidence names turns of its conv; asked_at names a turn
// of its conv that comes after all the evidence. Violations are errors
// wrapping errs.InvalidArgument. Questions without evidence are kept and
// counted as skipped by Run.
func (d *Dataset) Check() error {
	ids := map[string]map[string]int{}
	for i, t := range d.Turns {
		if t.Conv == "" || strings.TrimSpace(t.ID) == "" {
			return fmt.Errorf("eval: turn %d: %w: missing conv or id", i+1, errs.InvalidArgument)
		}
		d.Turns[i].ID = strings.TrimSpace(t.ID)
		m := ids[t.Conv]
		if m == nil {
			m = map[string]int{}
			ids[t.Conv] = m
		}
		if _, dup := m[d.Turns[i].ID]; dup {
			return fmt.Errorf("eval: turn %d: %w: id %q repeated in conv %q", i+1, errs.InvalidArgument, t.ID, t.Conv)
		}
		m[d.Turns[i].ID] = len(m)
	}
	for i := range d.Questions {
		q := &d.Questions[i]
		q.Evidence = NormalizeEvidence(q.Evidence)
		name := q.QID
		if name == "" {
			name = fmt.Sprintf("#%d", i+1)
		}
		pos, ok := ids[q.Conv]
		if !ok {
			return fmt.Errorf("eval: question %s: %w: unknown conv %q", name, errs.InvalidArgument, q.Conv)
		}
		var missing []string
		last := -1
		for _, e := range q.Evidence {
			p, ok := pos[e]
			if !ok {
				missing = append(missing, e)
			}
			last = max(last, p)
		}
		if len(missing) > 0 {
			return fmt.Errorf("eval: question %s: %w: evidence names unknown turn ids %v of conv %q", name, errs.InvalidArgument, missing, q.Conv)
		}
		if q.AskedAt != "" {
			p, ok := pos[q.AskedAt]
			if !ok {
				return fmt.Errorf("eval: question %s: %w: asked_at names unknown turn %q", name, errs.InvalidArgument, q.AskedAt)
			}
			if last >= p {
				return fmt.Errorf("eval: question %s: %w: evidence at or after asked_at %q", name, errs.InvalidArgument, q.AskedAt)
			}
		}
	}
	return nil
}

// ReadJSONL decodes one T per non-blank line; errors name the file and line.
func ReadJSONL[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var v T
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			return nil, fmt.Errorf("eval: %s:%d: %w: %w", path, n, errs.InvalidArgument, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("eval: read %s: %w", path, err)
	}
	return out, nil
}

// NormalizeEvidence trims evidence ids and splits ones that hold several
// ("D8:6; D9:17", as some converted benchmark files do); duplicates and
// empty ids are dropped.
func NormalizeEvidence(ev []string) []string {
	var out []string
	for _, e := range ev {
		for _, part := range strings.FieldsFunc(e, func(r rune) bool { return r == ';' || r == ',' }) {
			if part = strings.TrimSpace(part); part != "" && !slices.Contains(out, part) {
				out = append(out, part)
			}
		}
	}
	return out
}

// CategoryLabel returns a question's category as text: 2 → "2",
// "temporal" → "temporal", none → "-".
func CategoryLabel(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return "-"
		}
		return s
	}
	if t := strings.TrimSpace(string(raw)); t != "" && t != "null" {
		return t
	}
	return "-"
}

// dateLayouts are the date forms ParseDate understands.
var dateLayouts = []string{
	time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02",
	"3:04 pm on 2 January, 2006", "3:04 pm on 2 Jan, 2006", "2 January 2006", "January 2, 2006",
}

// ParseDate parses a turn's date in one of the forms the data sets use.
// Anything else is an error wrapping errs.InvalidArgument (callers keep
// the date as text then).
func ParseDate(s string) (time.Time, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	if i := strings.Index(v, " ("); i > 0 { // "2025-12-15 (monday)"
		v = v[:i]
	}
	// Month names parse in any case; "PM" is written "pm" in the layouts.
	for _, l := range dateLayouts {
		for _, in := range []string{strings.TrimSpace(s), v} {
			if t, err := time.Parse(l, in); err == nil {
				return t.UTC(), nil
			}
		}
	}
	return time.Time{}, fmt.Errorf("eval: %w: unparsable date %q", errs.InvalidArgument, s)
}
