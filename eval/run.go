package eval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/internal/errs"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/longterm"
)

// BM25Mode is the name of the reference BM25 in a Report's modes.
const BM25Mode = "bm25"

// Config is what one evaluation run does.
type Config struct {
	// Embedder embeds the memories (required).
	Embedder embed.Embedder
	// Options configure the long-term memory under test.
	Options []longterm.Option
	// Modes are the retrieval modes to score (default: hybrid, vector,
	// keyword).
	Modes []longterm.Mode
	// Ks are the cut-offs (default 1, 5, 10).
	Ks []int
	// WithSpeaker and WithDate index every turn with a "SPEAKER: " or
	// "[DATE] " header (longterm.WithIndexHeader).
	WithSpeaker, WithDate bool
	// NoCaptions leaves turns' image captions out of what is remembered
	// (and out of the reference BM25's documents). By default a turn with
	// an image_caption is remembered as [Turn.Content], by the memory and
	// the reference alike, as bm25.py --with-captions indexes it.
	NoCaptions bool
	// BM25Tokenizer is the reference BM25's tokenizer: "word" (default)
	// or "bigram" (for Chinese), as bm25.py's --tokenizer.
	BM25Tokenizer string
	// NoBM25 leaves the reference out.
	NoBM25 bool
	// PerQuestion keeps every question's top-k ids per mode in the report.
	PerQuestion bool
	// MinRelevance is every search's minimum relevance
	// (memory.Query.MinRelevance: 0 the memory's default, negative none).
	// The reference BM25 has none.
	MinRelevance float32
	// Sweep also asks every question (and probe) without a minimum
	// relevance and reports, per mode, recall and the false-surface rate
	// at each threshold of a grid (ModeReport.Sweep): the memory's modes
	// over relevance, the reference BM25 over its score.
	Sweep bool
	// Samples keeps, for every question and probe and every memory mode,
	// what the paths found of each of the top hits asked without a
	// minimum relevance, and whether it is evidence (Report.Samples): the
	// data engine's relevance is fitted on.
	Samples bool
	// Open, if set, opens the (empty) memory under test instead of a fresh
	// in-process longterm.Memory, e.g. a memory/postgres store; Options are
	// then not used. header is the index header WithSpeaker and WithDate
	// ask for (nil for none), for the memory to index as
	// longterm.WithIndexHeader does. Run closes the memory.
	Open func(ctx context.Context, header func(memory.Record) string) (Memory, error)
}

// Memory is what Run needs of the memory under test. *longterm.Memory
// implements it.
type Memory interface {
	memory.Records
	memory.Querier
	Close() error
}

// Scores are averages over a group of questions.
type Scores struct {
	Category  string          `json:"category"` // "all" or the category
	Questions int             `json:"questions"`
	Recall    map[int]float64 `json:"recall"` // k → mean evidence recall@k
	Hit       map[int]float64 `json:"hit"`    // k → share of questions with an evidence turn in the top k
	// Returned is how many hits a question got on average (at most the
	// largest k: fewer when the minimum relevance left some out), and
	// Precision the share of them that are evidence: what an agent that
	// pastes every hit into its prompt reads, and how much of it is to
	// the point.
	Returned  float64 `json:"returned"`
	Precision float64 `json:"precision"`
}

// ModeReport is one mode's results.
type ModeReport struct {
	Mode       string   `json:"mode"`
	Overall    Scores   `json:"overall"`
	Categories []Scores `json:"categories"`
	P50Millis  float64  `json:"search_p50_ms"`
	P95Millis  float64  `json:"search_p95_ms"`
	// FalseSurface is the share of probes (questions whose right answer
	// is nothing) for which the mode returned at least one hit.
	FalseSurface float64 `json:"false_surface"`
	// Sweep is recall and the false-surface rate at each threshold
	// (Config.Sweep).
	Sweep []SweepPoint `json:"sweep,omitempty"`
}

// SweepPoint is one threshold of a sweep: the recall@k of the answerable
// questions and the false-surface rate of the probes when hits below the
// threshold are left out.
type SweepPoint struct {
	Threshold    float64         `json:"threshold"`
	Recall       map[int]float64 `json:"recall"`
	FalseSurface float64         `json:"false_surface"`
}

// Sample is one hit of a question asked without a minimum relevance: what
// each path found of it (memory.Explanation's Keyword and Vector) and
// whether it is evidence of the question (never, for a probe's).
type Sample struct {
	QID     string  `json:"qid"` // the question's (a probe's own qid)
	ID      string  `json:"id"`  // the hit's turn id
	Mode    string  `json:"mode"`
	Rank    int     `json:"rank"`
	Keyword float64 `json:"keyword"`
	// OwnKeyword is what the hit's own words score of Keyword (the
	// rest is lent by its neighbours and conversation;
	// memory.Explanation.OwnKeyword).
	OwnKeyword float64 `json:"own_keyword"`
	Vector     float64 `json:"vector"`
	// BestKeyword, BestVector and Coverage are the search's (see
	// memory.Explanation).
	BestKeyword float64 `json:"best_keyword"`
	BestVector  float64 `json:"best_vector"`
	Coverage    float64 `json:"coverage"`
	BestShare   float64 `json:"best_share"`
	// Records is how many records the hit's namespace holds
	// (memory.Explanation.Records).
	Records int `json:"records"`
	// UnknownName: the query names something the namespace never
	// mentions (memory.Explanation.UnknownNames).
	UnknownName bool `json:"unknown_name"`
	// Documents: the relevance model read the hit's namespace as Chinese
	// documents (memory.Explanation.Documents), whose model is fitted
	// apart.
	Documents bool `json:"documents,omitempty"`
	Evidence  bool `json:"evidence"`
	Probe     bool `json:"probe"`
}

// QuestionResult is one question's top ids per mode.
type QuestionResult struct {
	QID      string              `json:"qid"`
	Conv     string              `json:"conv"`
	Category string              `json:"category"`
	Evidence []string            `json:"evidence"`
	Top      map[string][]string `json:"top"` // mode → ids, best first
}

// Report is a run's result.
type Report struct {
	Embedder string `json:"embedder"`
	// EmbedderKind is what its vectors capture (embed.Kind: "lexical",
	// "word-vectors", "model"), which sets hybrid's default fusion weights.
	EmbedderKind  string  `json:"embedder_kind"`
	Turns         int     `json:"turns"`
	Conversations int     `json:"conversations"`
	Questions     int     `json:"questions"`
	Probes        int     `json:"probes"`        // questions without evidence: the right answer is nothing
	SkippedTurns  int     `json:"skipped_turns"` // turns without a word, not stored
	AskedAt       int     `json:"asked_at"`      // questions asked at their asked_at turn
	Chunks        int     `json:"chunks"`
	IngestSeconds float64 `json:"ingest_seconds"`
	TurnsPerSec   float64 `json:"ingest_turns_per_second"`
	WithSpeaker   bool    `json:"with_speaker"`
	WithDate      bool    `json:"with_date"`
	// Captions is how many turns were remembered with their image caption.
	Captions      int    `json:"captions"`
	BM25Tokenizer string `json:"bm25_tokenizer"`
	Ks            []int  `json:"k"`
	// Ceiling is the recall a perfect ranking would reach: the mean of
	// min(k, |evidence|, turns in memory) / |evidence|.
	Ceiling     map[int]float64  `json:"recall_ceiling"`
	Modes       []ModeReport     `json:"modes"`
	PerQuestion []QuestionResult `json:"per_question,omitempty"`
	Samples     []Sample         `json:"samples,omitempty"`
}

// DateTag prefixes the tag that keeps a turn's date as written.
const DateTag = "date="

// Key is the record id of turn id in conversation conv.
func Key(conv, id string) string { return conv + "\x1f" + id }

type convData struct {
	turns []Turn
	pos   map[string]int
	qs    []Question
}

// Run ingests the data set into a fresh in-memory long-term memory, each
// conversation its own namespace, asking every question at its moment, and
// scores every mode and the reference BM25.
func Run(ctx context.Context, d *Dataset, cfg Config) (*Report, error) {
	if cfg.Embedder == nil {
		return nil, fmt.Errorf("eval: %w: no embedder", errs.InvalidArgument)
	}
	ks := slices.Compact(slices.Sorted(slices.Values(cfg.Ks)))
	if len(ks) == 0 {
		ks = []int{1, 5, 10}
	}
	if ks[0] <= 0 {
		return nil, fmt.Errorf("eval: %w: k must be positive, got %d", errs.InvalidArgument, ks[0])
	}
	modes := cfg.Modes
	if len(modes) == 0 {
		modes = []longterm.Mode{longterm.Hybrid, longterm.VectorOnly, longterm.KeywordOnly}
	}
	tok := wordTokens
	switch cfg.BM25Tokenizer {
	case "", "word":
		cfg.BM25Tokenizer = "word"
	case "bigram":
		tok = bigramTokens
	default:
		return nil, fmt.Errorf("eval: %w: BM25 tokenizer %q (want word or bigram)", errs.InvalidArgument, cfg.BM25Tokenizer)
	}
	if err := d.Check(); err != nil {
		return nil, err
	}
	opts := slices.Clip(cfg.Options)
	if cfg.WithSpeaker || cfg.WithDate {
		opts = append(opts, longterm.WithIndexHeader(header(cfg.WithSpeaker, cfg.WithDate)))
	}
	var mem Memory
	var err error
	if cfg.Open != nil {
		var h func(memory.Record) string
		if cfg.WithSpeaker || cfg.WithDate {
			h = header(cfg.WithSpeaker, cfg.WithDate)
		}
		mem, err = cfg.Open(ctx, h)
	} else {
		mem, err = longterm.New(ctx, cfg.Embedder, opts...)
	}
	if err != nil {
		return nil, err
	}
	defer mem.Close()

	var order []string
	captions := 0
	convs := map[string]*convData{}
	for _, t := range d.Turns {
		c := convs[t.Conv]
		if c == nil {
			c = &convData{pos: map[string]int{}}
			convs[t.Conv] = c
			order = append(order, t.Conv)
		}
		c.pos[t.ID] = len(c.turns)
		if c := t.Content(); !cfg.NoCaptions && c != t.Text {
			t.Text = c
			captions++
		}
		c.turns = append(c.turns, t)
	}
	rep := &Report{
		Embedder: cfg.Embedder.Name(), EmbedderKind: embed.KindOf(cfg.Embedder).String(), Turns: len(d.Turns), Conversations: len(convs),
		WithSpeaker: cfg.WithSpeaker, WithDate: cfg.WithDate, Captions: captions, BM25Tokenizer: cfg.BM25Tokenizer,
		Ks: ks, Ceiling: map[int]float64{},
	}
	for _, q := range d.Questions {
		convs[q.Conv].qs = append(convs[q.Conv].qs, q)
	}
	names := make([]string, 0, len(modes)+1)
	for _, m := range modes {
		names = append(names, m.String())
	}
	if !cfg.NoBM25 {
		names = append(names, BM25Mode)
	}
	accs := make([]*modeAcc, len(names))
	for i := range accs {
		accs[i] = &modeAcc{byCat: map[string]*acc{}}
	}
	var ingest time.Duration
	r := &runner{cfg: cfg, mem: mem, rep: rep, ks: ks, names: names, modes: modes, accs: accs}
	for _, name := range order {
		c := convs[name]
		cut := func(q Question) int {
			if q.AskedAt == "" {
				return len(c.turns)
			}
			return c.pos[q.AskedAt]
		}
		slices.SortStableFunc(c.qs, func(a, b Question) int { return cmp.Compare(cut(a), cut(b)) })
		ref := newRefBM25(tok)
		stored := 0
		in := 0
		ingestTo := func(n int) error {
			if n <= in {
				return nil
			}
			t0 := time.Now()
			k, skipped, err := addTurns(ctx, mem, c.turns[in:n])
			ingest += time.Since(t0)
			if err != nil {
				return err
			}
			for _, t := range c.turns[in:n] {
				ref.add(t.Text)
			}
			stored += k
			rep.SkippedTurns += skipped
			in = n
			return nil
		}
		for _, q := range c.qs {
			if err := ingestTo(cut(q)); err != nil {
				return nil, err
			}
			if err := r.ask(ctx, q, c, ref, in); err != nil {
				return nil, err
			}
		}
		if err := ingestTo(len(c.turns)); err != nil {
			return nil, err
		}
	}
	if rep.Questions > 0 {
		for k := range rep.Ceiling {
			rep.Ceiling[k] /= float64(rep.Questions)
		}
	}
	r.finish()
	rep.Turns = len(d.Turns) - rep.SkippedTurns
	if c, ok := mem.(interface{ Chunks() int }); ok {
		rep.Chunks = c.Chunks()
	}
	rep.IngestSeconds = ingest.Seconds()
	rep.TurnsPerSec = float64(rep.Turns) / max(ingest.Seconds(), 1e-9)
	for i, name := range names {
		rep.Modes = append(rep.Modes, accs[i].report(name))
	}
	return rep, nil
}

// header returns the index header for the speaker and date flags.
func header(speaker, date bool) func(longterm.Record) string {
	return func(r longterm.Record) string {
		h := ""
		if date {
			for _, tag := range r.Tags {
				if d, ok := strings.CutPrefix(tag, DateTag); ok {
					h = "[" + d + "] "
				}
			}
		}
		if speaker {
			h += longterm.SpeakerHeader(r)
		}
		return h
	}
}

// addTurns stores turns as records; a turn without a letter or digit is
// skipped and counted, not fatal.
func addTurns(ctx context.Context, mem Memory, turns []Turn) (stored, skipped int, err error) {
	recs := make([]longterm.Record, len(turns))
	for i, t := range turns {
		var tags []string
		if t.Date != "" {
			tags = []string{DateTag + t.Date}
		}
		tm, err := ParseDate(t.Date)
		if err != nil {
			tm = time.Unix(0, 0).UTC()
		}
		recs[i] = longterm.Record{ID: Key(t.Conv, t.ID), Namespace: t.Conv, Text: t.Text, Time: tm, Speaker: t.Speaker, Tags: tags}
	}
	if _, err := mem.AddBatch(ctx, recs); err == nil {
		return len(recs), 0, nil
	} else if !errors.Is(err, longterm.ErrEmptyText) {
		return 0, 0, fmt.Errorf("eval: ingest: %w", err)
	}
	for _, r := range recs {
		if _, err := mem.Add(ctx, r); err != nil {
			if errors.Is(err, longterm.ErrEmptyText) {
				skipped++
				continue
			}
			return stored, skipped, fmt.Errorf("eval: ingest %s: %w", r.ID, err)
		}
		stored++
	}
	return stored, skipped, nil
}

type acc struct {
	n           int
	recall, hit map[int]float64
	// returned and relevant count the hits of the largest k, and those
	// that are evidence.
	returned, relevant int
}

func (a *acc) add(ks []int, evidence, got []string) {
	if a.recall == nil {
		a.recall, a.hit = map[int]float64{}, map[int]float64{}
	}
	a.n++
	top := got[:min(slices.Max(ks), len(got))]
	a.returned += len(top)
	for _, id := range top {
		if slices.Contains(evidence, id) {
			a.relevant++
		}
	}
	for _, k := range ks {
		found := 0
		for _, id := range got[:min(k, len(got))] {
			if slices.Contains(evidence, id) {
				found++
			}
		}
		a.recall[k] += float64(found) / float64(len(evidence))
		if found > 0 {
			a.hit[k]++
		}
	}
}

func (a *acc) scores(cat string) Scores {
	s := Scores{Category: cat, Questions: a.n, Recall: map[int]float64{}, Hit: map[int]float64{}}
	for k, v := range a.recall {
		s.Recall[k] = v / float64(max(a.n, 1))
	}
	for k, v := range a.hit {
		s.Hit[k] = v / float64(max(a.n, 1))
	}
	s.Returned = float64(a.returned) / float64(max(a.n, 1))
	s.Precision = float64(a.relevant) / float64(max(a.returned, 1))
	return s
}

type modeAcc struct {
	all          acc
	byCat        map[string]*acc
	lat          []time.Duration
	falseSurface float64
	sweep        []SweepPoint
}

func (m *modeAcc) add(ks []int, cat string, evidence, got []string) {
	m.all.add(ks, evidence, got)
	a := m.byCat[cat]
	if a == nil {
		a = &acc{}
		m.byCat[cat] = a
	}
	a.add(ks, evidence, got)
}

func (m *modeAcc) report(name string) ModeReport {
	mr := ModeReport{Mode: name, Overall: m.all.scores("all")}
	cats := make([]string, 0, len(m.byCat))
	for c := range m.byCat {
		cats = append(cats, c)
	}
	slices.SortFunc(cats, compareCategories)
	for _, c := range cats {
		mr.Categories = append(mr.Categories, m.byCat[c].scores(c))
	}
	slices.Sort(m.lat)
	mr.P50Millis = Percentile(m.lat, 0.50)
	mr.P95Millis = Percentile(m.lat, 0.95)
	mr.FalseSurface, mr.Sweep = m.falseSurface, m.sweep
	return mr
}

// compareCategories orders numbers numerically, then other labels.
func compareCategories(a, b string) int {
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
}

// Percentile returns the p-quantile of sorted durations in milliseconds
// (nearest rank).
func Percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.999999) - 1
	i = min(max(i, 0), len(sorted)-1)
	return float64(sorted[i].Microseconds()) / 1000
}
