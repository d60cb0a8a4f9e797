package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/embed/glove"
	"github.com/agentmem/agentmem/eval"
	"github.com/agentmem/agentmem/memory/engine"
	"github.com/agentmem/agentmem/memory/longterm"
)

func newEvalCmd(a *app) *cobra.Command {
	var (
		ks            []int
		mode          string
		withSpeaker   bool
		withDate      bool
		noCaptions    bool
		queryIDF      bool
		turnsPath     string
		qPath         string
		minScore      float32
		minRelevance  float32
		sweep         bool
		crossProbes   bool
		smallStores   int
		calibrate     bool
		fusion        string
		bm25Tok       string
		neighbour     float64
		speaker       float64
		vecWeight     float64
		relatedPath   string
		relatedN      int
		relatedSim    float64
		relatedW      float64
		fbDocs        int
		fbTerms       int
		fbWeight      float64
		queryK3       float64
		timeBoost     float64
		recency       float64
		recencyHalf   time.Duration
		nextWeight    float64
		handOff       float64
		episodeWeight float64
	)
	cmd := &cobra.Command{
		Use:   "eval [DIR]",
		Short: "Measure retrieval recall on conversation data (turns.jsonl + questions.jsonl)",
		Long: `eval loads conversation turns into a fresh in-memory long-term memory (each
conversation its own namespace, each turn a memory with its id), asks every
question against its own conversation at its moment (a question with
asked_at sees only the turns before that turn), and reports evidence
recall@k and hit@k, overall and per category, for each retrieval mode and
for a plain Okapi BM25 over whole turns on the same data (the floor, as
bm25.py computes it), with the recall ceiling, ingest speed and search
latency. "hits" is how many hits a question got on average (at most the
largest k: fewer when the minimum relevance left some out) and "prec"
the share of them that are evidence: what an agent that pastes every hit
into its prompt reads.

DIR holds turns.jsonl and questions.jsonl; --turns and --questions name the
files directly. Lines:

  turns.jsonl:     {"conv": "c1", "session": 1, "date": "2024-03-03",
                    "id": "D1:3", "speaker": "Caroline", "text": "...",
                    "image_caption": "a photo of a dog"}   (optional)
  questions.jsonl: {"qid": "c1/q0", "conv": "c1", "question": "...", "answer": "...",
                    "evidence": ["D1:3"], "category": 2, "asked_at": "D1:9"}

Evidence naming a turn that does not exist is an error; questions without
evidence are skipped (and counted). A turn with an image_caption is
remembered as "TEXT [image: CAPTION]" (--no-captions: TEXT alone), and the
BM25 reference indexes the same text. --json prints every question's top k
ids per mode too.`,
		Example: `  agentmem eval testdata/eval
  agentmem eval --cross-probes --sweep-relevance testdata/memorybank
  agentmem eval --small-stores 7 testdata/memorybank
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
			cfg := eval.Config{WithSpeaker: withSpeaker, WithDate: withDate, NoCaptions: noCaptions, BM25Tokenizer: bm25Tok, PerQuestion: a.json}
			cfg.Options = append(cfg.Options, longterm.WithMinScore(minScore),
				longterm.WithNeighbourWeight(neighbour), longterm.WithSpeakerBoost(speaker))
			if queryK3 > 0 {
				cfg.Options = append(cfg.Options, longterm.WithQueryTF(queryK3))
			}
			cfg.Options = append(cfg.Options, longterm.WithNextWeight(nextWeight), longterm.WithEngine(engine.WithAnswerHandOff(handOff)))
			cfg.Options = append(cfg.Options, longterm.WithEpisodeWeight(episodeWeight), longterm.WithQueryIDF(queryIDF))
			if cmd.Flags().Changed("time-boost") {
				cfg.Options = append(cfg.Options, longterm.WithTimePrior(timeBoost))
			}
			if cmd.Flags().Changed("recency") || cmd.Flags().Changed("recency-half-life") {
				cfg.Options = append(cfg.Options, longterm.WithRecency(recency, recencyHalf))
			}
			if fbDocs > 0 {
				cfg.Options = append(cfg.Options, longterm.WithFeedback(fbDocs, fbTerms, fbWeight))
			}
			if relatedPath != "" {
				vecs, err := glove.Load(relatedPath)
				if err != nil {
					return err
				}
				cfg.Options = append(cfg.Options, longterm.WithQueryExpansion(vecs.Related(relatedN, float32(relatedSim)), relatedW))
			}
			switch fusion {
			case "default":
			case "rrf":
				cfg.Options = append(cfg.Options, longterm.WithRRF(longterm.DefaultRRFK))
			case "weighted":
				cfg.Options = append(cfg.Options, longterm.WithWeightedFusion(0.5, 0.5))
			case "score":
				cfg.Options = append(cfg.Options, longterm.WithScoreFusion(vecWeight, 1-vecWeight))
			case "margin":
				cfg.Options = append(cfg.Options, longterm.WithMarginFusion(vecWeight, 1-vecWeight))
			default:
				return usageError{fmt.Errorf("eval: --fusion %q: want default, margin, score, rrf or weighted", fusion)}
			}
			if bm25Tok != "word" && bm25Tok != "bigram" {
				return usageError{fmt.Errorf("eval: --bm25-tokenizer %q: want word or bigram", bm25Tok)}
			}
			for _, k := range ks {
				if k <= 0 {
					return usageError{fmt.Errorf("eval: --k values must be positive, got %d", k)}
				}
			}
			cfg.Ks = ks
			switch mode {
			case "all":
				cfg.Modes = []longterm.Mode{longterm.Hybrid, longterm.VectorOnly, longterm.KeywordOnly}
			default:
				m, err := longterm.ParseMode(mode)
				if err != nil {
					return usageError{fmt.Errorf("eval: --mode %q: want all, hybrid, vector or keyword", mode)}
				}
				cfg.Modes = []longterm.Mode{m}
			}
			data, err := eval.LoadFiles(turnsPath, qPath)
			if err != nil {
				return err
			}
			switch {
			case smallStores < 0:
				return usageError{fmt.Errorf("eval: --small-stores %d: want a number of notes ≥ 0", smallStores)}
			case smallStores > 0 && crossProbes:
				return usageError{errors.New("eval: --small-stores makes its own probes: leave out --cross-probes")}
			case smallStores > 0:
				data = eval.SmallStores(data, smallStores, 1)
			case crossProbes:
				data = eval.CrossProbes(data)
			}
			emb, err := embed.Open(a.embedder)
			if err != nil {
				return usageError{err}
			}
			cfg.Embedder = emb
			cfg.MinRelevance, cfg.Sweep, cfg.Samples = minRelevance, sweep, calibrate
			rep, err := eval.Run(cmd.Context(), data, cfg)
			if err != nil {
				return err
			}
			if calibrate && !a.json {
				return printCalibration(cmd.OutOrStdout(), rep)
			}
			if a.json {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			return eval.Print(cmd.OutOrStdout(), rep)
		},
	}
	f := cmd.Flags()
	f.IntSliceVar(&ks, "k", []int{1, 5, 10}, "cut-offs for recall@k and hit@k")
	f.StringVar(&mode, "mode", "all", "retrieval mode: all, hybrid, vector or keyword")
	f.BoolVar(&withSpeaker, "with-speaker", false, `index every chunk of a turn as "SPEAKER: CHUNK"`)
	f.BoolVar(&withDate, "with-date", false, `index every chunk of a turn as "[DATE] CHUNK"`)
	f.BoolVar(&noCaptions, "no-captions", false, `leave turns' image_caption out (by default a turn is remembered as "TEXT [image: CAPTION]", and the BM25 reference indexes the same, as bm25.py --with-captions)`)
	f.Float32Var(&minScore, "min-score", 0, "minimum cosine similarity of a vector-path match")
	f.Float32Var(&minRelevance, "min-relevance", 0, "minimum relevance of a hit (0: the memory's default; negative: none); questions without evidence are probes, whose right answer is nothing, and the false-surface rate is the share of them that surfaced a hit")
	f.BoolVar(&sweep, "sweep-relevance", false, "also print, per mode, recall and the false-surface rate at each relevance threshold (BM25: at each score threshold)")
	f.BoolVar(&crossProbes, "cross-probes", false, "add a probe for every question: the same question asked in the next conversation, where the right answer is nothing (as scripts/cross-probes.py writes them); the false-surface rate is the share of probes that surfaced a hit")
	f.IntVar(&smallStores, "small-stores", 0, "instead of the data's conversations, ask each question in a small store of its evidence and N notes of other conversations, and again as a probe in a store of N+1 other notes (eval.SmallStores): an agent's first days")
	f.BoolVar(&calibrate, "calibrate", false, "fit the relevance model (package engine's calibrations; its documentCalibrations from the searches of a Chinese query among passages) on this data's top hits and print it (with --json: the report with the samples it is fitted on)")
	f.StringVar(&fusion, "fusion", "default", "how hybrid mode fuses the paths: default (the memory's: margin, or score over an Ollama model), margin (the vector path by its margin over the median cosine, --vector-weight), score (min–max calibrated scores, --vector-weight), rrf (reciprocal rank, k=60) or weighted (0.5·cosine + 0.5·BM25/max)")
	f.Float64Var(&neighbour, "neighbour-weight", longterm.DefaultNeighbourWeight, "keyword path: weight of the previous turn's words")
	f.Float64Var(&speaker, "speaker-boost", longterm.DefaultSpeakerBoost, "keyword path: boost of turns spoken by a speaker the question names")
	f.Float64Var(&vecWeight, "vector-weight", longterm.DefaultVectorWeight, "--fusion margin or score: weight of the vector path (the keyword path has 1 minus it)")
	f.StringVar(&relatedPath, "expand", "", "keyword path: expand queries with the nearest words of each query word in this GloVe text file")
	f.IntVar(&relatedN, "expand-n", 3, "--expand: neighbours per query word")
	f.Float64Var(&relatedSim, "expand-min-sim", 0.6, "--expand: least cosine similarity of a neighbour")
	f.Float64Var(&relatedW, "expand-weight", longterm.DefaultRelatedWeight, "--expand: weight of a neighbour relative to the query's words")
	f.BoolVar(&queryIDF, "query-idf", true, "keyword path: weight the question's words by their idf too (idf² per word; false: plain BM25 weights)")
	f.Float64Var(&queryK3, "query-tf", 0, "keyword path: count a word the question repeats more, with this k3 (0: once)")
	f.Float64Var(&nextWeight, "next-weight", longterm.DefaultNextWeight, "keyword path: weight of the next turn's words")
	f.Float64Var(&handOff, "answer-handoff", engine.DefaultHandOff, "keyword path: share of its score a question among the best matches gives up to the next turn (its answer, another speaker's), which takes the rest; 0: off")
	f.Float64Var(&episodeWeight, "episode-weight", longterm.DefaultEpisodeWeight, "keyword path: weight of the conversation (episode) a turn belongs to")
	f.Float64Var(&timeBoost, "time-boost", engine.DefaultTimeBoost, "keyword path: boost of records in a period the question names (\"last week\", \"in May 2023\"); 0: off")
	f.Float64Var(&recency, "recency", longterm.DefaultRecencyBoost, "keyword path: boost of recent records for a question that refers back to an earlier conversation (\"last time\", \"already\", \"what's next\"), halved per --recency-half-life of age; 0: off")
	f.DurationVar(&recencyHalf, "recency-half-life", longterm.DefaultRecencyHalfLife, "--recency: the age at which a record's boost is halved")
	f.IntVar(&fbDocs, "feedback", 0, "keyword path: pseudo-relevance feedback (RM3) from this many top records (0: off)")
	f.IntVar(&fbTerms, "feedback-terms", longterm.DefaultFeedbackTerms, "--feedback: terms added")
	f.Float64Var(&fbWeight, "feedback-weight", longterm.DefaultFeedbackWeight, "--feedback: weight of the strongest feedback term")
	f.StringVar(&bm25Tok, "bm25-tokenizer", "word", "the reference BM25's tokenizer: word or bigram (Chinese), as bm25.py's --tokenizer")
	f.StringVar(&turnsPath, "turns", "", "turns file (default DIR/turns.jsonl)")
	f.StringVar(&qPath, "questions", "", "questions file (default DIR/questions.jsonl)")
	return cmd
}

// printCalibration fits the relevance model on rep's samples and prints
// it, as memory/engine's calibrations table is written
// (eval.Calibration.String).
func printCalibration(w io.Writer, rep *eval.Report) error {
	cals, err := eval.Fit(rep.Samples)
	if err != nil {
		return err
	}
	for _, c := range cals {
		fmt.Fprintln(w, c)
	}
	return nil
}
