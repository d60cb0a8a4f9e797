package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/memory/longterm"
)

// evalTurn is one line of turns.jsonl. Other fields are ignored.
type evalTurn struct {
	Conv    string `json:"conv"`
	Session int    `json:"session"`
	Date    string `json:"date"`
	ID      string `json:"id"`
	Speaker string `json:"speaker"`
	Text    string `json:"text"`
}

// evalQuestion is one line of questions.jsonl.
type evalQuestion struct {
	QID      string   `json:"qid"`
	Conv     string   `json:"conv"`
	Question string   `json:"question"`
	Answer   any      `json:"answer"` // a string or a number in converted benchmarks; not used
	Evidence []string `json:"evidence"`
	// Category is a number in the format; strings are accepted
	// too, so that other benchmarks' labels pass through.
	Category json.RawMessage `json:"category"`
}

// evalConfig is what one evaluation run does.
type evalConfig struct {
	ks          []int
	modes       []longterm.Mode
	withSpeaker bool
	withDate    bool
	opts        []longterm.Option
}

// evalScores are averages over a group of questions.
type evalScores struct {
	Category  string          `json:"category"` // "all" or the category number
	Questions int             `json:"questions"`
	Recall    map[int]float64 `json:"recall"` // k → mean evidence recall@k
	Hit       map[int]float64 `json:"hit"`    // k → share of questions with an evidence id in the top k
}

// evalModeReport holds one mode's results.
type evalModeReport struct {
	Mode       string       `json:"mode"`
	Overall    evalScores   `json:"overall"`
	Categories []evalScores `json:"categories"`
	P50Millis  float64      `json:"search_p50_ms"`
	P95Millis  float64      `json:"search_p95_ms"`
}

// evalReport is the whole result, as printed with --json.
type evalReport struct {
	Embedder      string           `json:"embedder"`
	Turns         int              `json:"turns"`
	Conversations int              `json:"conversations"`
	Questions     int              `json:"questions"`
	Skipped       int              `json:"skipped"` // questions without evidence
	Chunks        int              `json:"chunks"`
	IngestSeconds float64          `json:"ingest_seconds"`
	TurnsPerSec   float64          `json:"ingest_turns_per_second"`
	WithSpeaker   bool             `json:"with_speaker"`
	WithDate      bool             `json:"with_date"`
	Ks            []int            `json:"k"`
	Modes         []evalModeReport `json:"modes"`
}

func newEvalCmd(a *app) *cobra.Command {
	var (
		ks          []int
		mode        string
		withSpeaker bool
		withDate    bool
		turnsPath   string
		qPath       string
		minScore    float32
		fusion      string
	)
	cmd := &cobra.Command{
		Use:   "eval [DIR]",
		Short: "Measure retrieval recall on conversation data (turns.jsonl + questions.jsonl)",
		Long: `eval loads conversation turns into a fresh in-memory long-term memory (each
conversation its own namespace, each turn a memory with its id), asks every
question against its own conversation, and reports evidence recall@k (the
share of a question's evidence turns in the top k, averaged) and hit@k (the
share of questions with at least one evidence turn in the top k), overall and
per category, for each retrieval mode; plus ingest speed and search latency.

DIR holds turns.jsonl and questions.jsonl; --turns and --questions name the
files directly. Lines:

  turns.jsonl:     {"conv": "c1", "session": 1, "date": "1:56 pm on 8 May, 2023",
                    "id": "D1:3", "speaker": "Caroline", "text": "..."}
  questions.jsonl: {"qid": "c1/q0", "conv": "c1", "question": "...", "answer": "...",
                    "evidence": ["D1:3"], "category": 2}

Questions without evidence are skipped (and counted).`,
		Example: `  agentmem eval testdata/eval
  agentmem eval --mode hybrid --k 1,3,10 --with-speaker testdata/eval
  agentmem eval --json --turns t.jsonl --questions q.jsonl`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if turnsPath == "" {
					turnsPath = filepath.Join(args[0], "turns.jsonl")
				}
				if qPath == "" {
					qPath = filepath.Join(args[0], "questions.jsonl")
				}
			}
			if turnsPath == "" || qPath == "" {
				return usageError{errors.New("eval: give a directory or both --turns and --questions")}
			}
			cfg := evalConfig{withSpeaker: withSpeaker, withDate: withDate}
			cfg.opts = append(cfg.opts, longterm.WithMinScore(minScore))
			switch fusion {
			case "rrf":
				cfg.opts = append(cfg.opts, longterm.WithRRF(longterm.DefaultRRFK))
			case "weighted":
				cfg.opts = append(cfg.opts, longterm.WithWeightedFusion(0.5, 0.5))
			default:
				return usageError{fmt.Errorf("eval: --fusion %q: want rrf or weighted", fusion)}
			}
			for _, k := range ks {
				if k <= 0 {
					return usageError{fmt.Errorf("eval: --k values must be positive, got %d", k)}
				}
			}
			cfg.ks = slices.Compact(slices.Sorted(slices.Values(ks)))
			switch mode {
			case "all":
				cfg.modes = []longterm.Mode{longterm.Hybrid, longterm.VectorOnly, longterm.KeywordOnly}
			default:
				m, err := longterm.ParseMode(mode)
				if err != nil {
					return usageError{fmt.Errorf("eval: --mode %q: want all, hybrid, vector or keyword", mode)}
				}
				cfg.modes = []longterm.Mode{m}
			}
			turns, err := readJSONL[evalTurn](turnsPath)
			if err != nil {
				return err
			}
			questions, err := readJSONL[evalQuestion](qPath)
			if err != nil {
				return err
			}
			emb, err := embed.Open(a.embedder)
			if err != nil {
				return usageError{err}
			}
			rep, err := runEval(cmd.Context(), emb, turns, questions, cfg)
			if err != nil {
				return err
			}
			if a.json {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			return printEval(cmd.OutOrStdout(), rep)
		},
	}
	f := cmd.Flags()
	f.IntSliceVar(&ks, "k", []int{1, 5, 10}, "cut-offs for recall@k and hit@k")
	f.StringVar(&mode, "mode", "all", "retrieval mode: all, hybrid, vector or keyword")
	f.BoolVar(&withSpeaker, "with-speaker", false, `index every chunk of a turn as "SPEAKER: CHUNK"`)
	f.BoolVar(&withDate, "with-date", false, `index every chunk of a turn as "[DATE] CHUNK"`)
	f.Float32Var(&minScore, "min-score", 0, "minimum cosine similarity of a vector-path match")
	f.StringVar(&fusion, "fusion", "rrf", "how hybrid mode fuses the paths: rrf (reciprocal rank, k=60) or weighted (0.5·cosine + 0.5·BM25/max)")
	f.StringVar(&turnsPath, "turns", "", "turns file (default DIR/turns.jsonl)")
	f.StringVar(&qPath, "questions", "", "questions file (default DIR/questions.jsonl)")
	return cmd
}

// readJSONL decodes one T per non-blank line; errors name the file and line.
func readJSONL[T any](path string) ([]T, error) {
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
			return nil, fmt.Errorf("eval: %s:%d: %w", path, n, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("eval: read %s: %w", path, err)
	}
	return out, nil
}

// evalDateLayout is the date format of the issue's example ("1:56 pm on 8
// May, 2023"); dates in other formats are kept as text only.
const evalDateLayout = "3:04 pm on 2 January, 2006"

// runEval ingests the turns and answers the questions in every mode.
func runEval(ctx context.Context, emb embed.Embedder, turns []evalTurn, questions []evalQuestion, cfg evalConfig) (*evalReport, error) {
	if len(cfg.ks) == 0 {
		cfg.ks = []int{1, 5, 10}
	}
	opts := cfg.opts
	if cfg.withSpeaker || cfg.withDate {
		opts = append(slices.Clip(opts), longterm.WithIndexHeader(func(r longterm.Record) string {
			h := ""
			if cfg.withDate {
				for _, tag := range r.Tags {
					if d, ok := strings.CutPrefix(tag, evalDateTag); ok {
						h = "[" + d + "] "
					}
				}
			}
			if cfg.withSpeaker {
				h += longterm.SpeakerHeader(r)
			}
			return h
		}))
	}
	mem, err := longterm.New(ctx, emb, opts...)
	if err != nil {
		return nil, err
	}
	defer mem.Close()

	convs := map[string]bool{}
	recs := make([]longterm.Record, 0, len(turns))
	skippedTurns := 0
	for i, t := range turns {
		if t.Conv == "" || t.ID == "" {
			return nil, fmt.Errorf("eval: turn %d: missing conv or id", i+1)
		}
		var tags []string
		if t.Date != "" {
			tags = []string{evalDateTag + t.Date}
		}
		tm, _ := time.Parse(evalDateLayout, strings.ToLower(t.Date))
		if tm.IsZero() {
			tm = time.Unix(0, 0).UTC()
		}
		convs[t.Conv] = true
		recs = append(recs, longterm.Record{
			ID: evalKey(t.Conv, strings.TrimSpace(t.ID)), Namespace: t.Conv, Text: t.Text, Time: tm, Speaker: t.Speaker, Tags: tags,
		})
	}
	start := time.Now()
	const batch = 512
	for lo := 0; lo < len(recs); lo += batch {
		hi := min(lo+batch, len(recs))
		if _, err := mem.AddBatch(ctx, recs[lo:hi]); err != nil {
			// A turn without words (e.g. only an emoji or an image
			// caption that is empty) is skipped, not fatal: add the
			// rest one by one.
			if !errors.Is(err, longterm.ErrEmptyText) {
				return nil, fmt.Errorf("eval: ingest: %w", err)
			}
			for _, r := range recs[lo:hi] {
				if _, err := mem.Add(ctx, r); err != nil {
					if errors.Is(err, longterm.ErrEmptyText) {
						skippedTurns++
						continue
					}
					return nil, fmt.Errorf("eval: ingest %s: %w", r.ID, err)
				}
			}
		}
	}
	ingest := time.Since(start)

	rep := &evalReport{
		Embedder: emb.Name(), Turns: len(turns) - skippedTurns, Conversations: len(convs),
		Chunks: mem.Chunks(), IngestSeconds: ingest.Seconds(),
		TurnsPerSec: float64(len(turns)-skippedTurns) / max(ingest.Seconds(), 1e-9),
		WithSpeaker: cfg.withSpeaker, WithDate: cfg.withDate, Ks: cfg.ks,
	}
	var qs []evalQuestion
	for _, q := range questions {
		q.Evidence = normalizeEvidence(q.Evidence)
		if len(q.Evidence) == 0 {
			rep.Skipped++
			continue
		}
		qs = append(qs, q)
	}
	rep.Questions = len(qs)
	maxK := slices.Max(cfg.ks)
	for _, mode := range cfg.modes {
		mr, err := evalMode(ctx, mem, qs, mode, cfg.ks, maxK)
		if err != nil {
			return nil, err
		}
		rep.Modes = append(rep.Modes, mr)
	}
	return rep, nil
}

// normalizeEvidence trims evidence ids and splits ones that hold several
// ("D8:6; D9:17", as some converted benchmark files do); duplicates and
// empty ids are dropped.
func normalizeEvidence(ev []string) []string {
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

// evalDateTag prefixes the tag that keeps a turn's date as written.
const evalDateTag = "date="

func evalKey(conv, id string) string { return conv + "\x1f" + id }

type evalAcc struct {
	n      int
	recall map[int]float64
	hit    map[int]float64
}

func (a *evalAcc) add(ks []int, evidence []string, got []string) {
	if a.recall == nil {
		a.recall, a.hit = map[int]float64{}, map[int]float64{}
	}
	a.n++
	want := map[string]bool{}
	for _, e := range evidence {
		want[e] = true
	}
	for _, k := range ks {
		found := 0
		for _, id := range got[:min(k, len(got))] {
			if want[id] {
				found++
			}
		}
		a.recall[k] += float64(found) / float64(len(want))
		if found > 0 {
			a.hit[k]++
		}
	}
}

func (a *evalAcc) scores(cat string) evalScores {
	s := evalScores{Category: cat, Questions: a.n, Recall: map[int]float64{}, Hit: map[int]float64{}}
	for k, v := range a.recall {
		s.Recall[k] = v / float64(max(a.n, 1))
	}
	for k, v := range a.hit {
		s.Hit[k] = v / float64(max(a.n, 1))
	}
	return s
}

func evalMode(ctx context.Context, mem *longterm.Memory, qs []evalQuestion, mode longterm.Mode, ks []int, maxK int) (evalModeReport, error) {
	var all evalAcc
	byCat := map[string]*evalAcc{}
	lat := make([]time.Duration, 0, len(qs))
	for _, q := range qs {
		t0 := time.Now()
		hits, err := mem.Query(ctx, longterm.Query{Text: q.Question, Namespace: q.Conv, Mode: mode, K: maxK})
		lat = append(lat, time.Since(t0))
		if err != nil {
			return evalModeReport{}, fmt.Errorf("eval: question %s: %w", q.QID, err)
		}
		got := make([]string, len(hits))
		prefix := evalKey(q.Conv, "")
		for i, h := range hits {
			got[i] = strings.TrimPrefix(h.ID, prefix)
		}
		all.add(ks, q.Evidence, got)
		cat := categoryLabel(q.Category)
		acc := byCat[cat]
		if acc == nil {
			acc = &evalAcc{}
			byCat[cat] = acc
		}
		acc.add(ks, q.Evidence, got)
	}
	mr := evalModeReport{Mode: mode.String(), Overall: all.scores("all")}
	cats := make([]string, 0, len(byCat))
	for c := range byCat {
		cats = append(cats, c)
	}
	// Numbers in numeric order, then other labels.
	slices.SortFunc(cats, func(a, b string) int {
		na, ea := strconv.ParseFloat(a, 64)
		nb, eb := strconv.ParseFloat(b, 64)
		switch {
		case ea == nil && eb == nil:
			return cmp.Compare(na, nb)
		case ea == nil:
			return -1
		case eb == nil:
			return 1
		}
		return strings.Compare(a, b)
	})
	for _, c := range cats {
		mr.Categories = append(mr.Categories, byCat[c].scores(c))
	}
	slices.Sort(lat)
	mr.P50Millis = percentile(lat, 0.50)
	mr.P95Millis = percentile(lat, 0.95)
	return mr, nil
}

// categoryLabel returns a question's category as text: 2 → "2", "temporal"
// → "temporal", none → "-".
func categoryLabel(raw json.RawMessage) string {
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

// percentile returns the p-quantile of sorted durations in milliseconds
// (nearest rank).
func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.999999) - 1
	i = min(max(i, 0), len(sorted)-1)
	return float64(sorted[i].Microseconds()) / 1000
}

func printEval(w io.Writer, rep *evalReport) error {
	fmt.Fprintf(w, "embedder %s; %d turns in %d conversations (%d chunks); %d questions",
		rep.Embedder, rep.Turns, rep.Conversations, rep.Chunks, rep.Questions)
	if rep.Skipped > 0 {
		fmt.Fprintf(w, " (%d without evidence skipped)", rep.Skipped)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "ingest %.3fs (%.0f turns/s); indexed text: turn",
		rep.IngestSeconds, rep.TurnsPerSec)
	if rep.WithSpeaker {
		fmt.Fprint(w, " + speaker")
	}
	if rep.WithDate {
		fmt.Fprint(w, " + date")
	}
	fmt.Fprint(w, "\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	hdr := "mode\tcategory\tn\t"
	for _, k := range rep.Ks {
		hdr += fmt.Sprintf("R@%d\t", k)
	}
	for _, k := range rep.Ks {
		hdr += fmt.Sprintf("H@%d\t", k)
	}
	hdr += "p50 ms\tp95 ms\t"
	fmt.Fprintln(tw, hdr)
	row := func(mode string, s evalScores, lat string) {
		line := fmt.Sprintf("%s\t%s\t%d\t", mode, s.Category, s.Questions)
		for _, k := range rep.Ks {
			line += fmt.Sprintf("%.3f\t", s.Recall[k])
		}
		for _, k := range rep.Ks {
			line += fmt.Sprintf("%.3f\t", s.Hit[k])
		}
		fmt.Fprintln(tw, line+lat)
	}
	for _, m := range rep.Modes {
		row(m.Mode, m.Overall, fmt.Sprintf("%.2f\t%.2f\t", m.P50Millis, m.P95Millis))
	}
	fmt.Fprintln(tw, "\t\t\t")
	for _, m := range rep.Modes {
		for _, c := range m.Categories {
			row(m.Mode, c, "\t\t")
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rep.Modes) > 1 {
		fmt.Fprintln(w)
		best := rep.Modes[0]
		kmax := rep.Ks[len(rep.Ks)-1]
		for _, m := range rep.Modes[1:] {
			if m.Overall.Recall[kmax] > best.Overall.Recall[kmax] {
				best = m
			}
		}
		fmt.Fprintf(w, "best recall@%d: %s (%.3f)", kmax, best.Mode, best.Overall.Recall[kmax])
		for _, m := range rep.Modes {
			if m.Mode != best.Mode {
				fmt.Fprintf(w, "; %+.3f over %s", best.Overall.Recall[kmax]-m.Overall.Recall[kmax], m.Mode)
			}
		}
		fmt.Fprintln(w)
	}
	return nil
}
