// Command measure compares tokens.Estimate with the real cl100k_base
// tokenizer (github.com/pkoukk/tiktoken-go, offline loader) on text files and
// prints the relative error per language. It is a separate module so that
// the tokenizer and its 2 MB vocabulary never enter the library's build.
//
//	cd memory/window/tokens/measure
//	go run . -lang en ../../../../../shared/DESIGN.md …
//	go run . -lang zh -write ../testdata/cl100k.json FILE…   # add golden samples
//	go run . -golden ../testdata/cl100k.json                 # recount and report
//
// Each file is split into samples at blank lines, merged until a sample has
// at least -min tokens, so the error is measured on round-sized text.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/agentmem/agentmem/memory/window/tokens"
	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

type sample struct {
	Lang   string `json:"lang"`
	Source string `json:"source"`
	Text   string `json:"text"`
	Tokens int    `json:"cl100k"`
}

func main() {
	lang := flag.String("lang", "en", "language label for the files")
	minTok := flag.Int("min", 60, "minimum tokens per sample")
	maxTok := flag.Int("max", 600, "maximum tokens per sample")
	golden := flag.String("golden", "", "read samples from this JSON file, recount and rewrite it")
	verbose := flag.Bool("v", false, "print each sample's error")
	write := flag.String("write", "", "append the samples with their counts to this JSON file (golden test data)")
	flag.Parse()

	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding("cl100k_base")
	if err != nil {
		log.Fatal(err)
	}
	count := func(s string) int { return len(enc.Encode(s, nil, nil)) }

	var samples []sample
	if *golden != "" {
		b, err := os.ReadFile(*golden)
		if err != nil {
			log.Fatal(err)
		}
		if err := json.Unmarshal(b, &samples); err != nil {
			log.Fatal(err)
		}
		for i := range samples {
			samples[i].Tokens = count(samples[i].Text)
		}
		out, _ := json.MarshalIndent(samples, "", "  ")
		if err := os.WriteFile(*golden, append(out, '\n'), 0o644); err != nil {
			log.Fatal(err)
		}
	} else {
		for _, path := range flag.Args() {
			b, err := os.ReadFile(path)
			if err != nil {
				log.Fatal(err)
			}
			var cur strings.Builder
			emit := func() {
				if t := strings.TrimSpace(cur.String()); t != "" {
					samples = append(samples, sample{Lang: *lang, Source: path, Text: t, Tokens: count(t)})
				}
				cur.Reset()
			}
			for _, para := range strings.Split(string(b), "\n\n") {
				if cur.Len() > 0 {
					cur.WriteString("\n\n")
				}
				cur.WriteString(para)
				n := count(cur.String())
				if n >= *minTok {
					if n > *maxTok {
						// cut long paragraphs by runes into max-sized pieces
						r := []rune(cur.String())
						step := len(r) * *maxTok / n
						for len(r) > 0 {
							k := min(step, len(r))
							t := strings.TrimSpace(string(r[:k]))
							if t != "" {
								samples = append(samples, sample{Lang: *lang, Source: path, Text: t, Tokens: count(t)})
							}
							r = r[k:]
						}
						cur.Reset()
						continue
					}
					emit()
				}
			}
			emit()
		}
	}
	if *write != "" {
		var old []sample
		if b, err := os.ReadFile(*write); err == nil {
			if err := json.Unmarshal(b, &old); err != nil {
				log.Fatal(err)
			}
		}
		out, _ := json.MarshalIndent(append(old, samples...), "", "  ")
		if err := os.WriteFile(*write, append(out, '\n'), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	report(samples, *verbose)
}

func report(samples []sample, verbose bool) {
	byLang := map[string][]sample{}
	for _, s := range samples {
		byLang[s.Lang] = append(byLang[s.Lang], s)
	}
	langs := make([]string, 0, len(byLang))
	for l := range byLang {
		langs = append(langs, l)
	}
	slices.Sort(langs)
	for _, l := range langs {
		var real, est int
		var errs []float64
		for _, s := range byLang[l] {
			e := tokens.Estimate(s.Text)
			real += s.Tokens
			est += e
			rel := float64(e-s.Tokens) / float64(s.Tokens)
			errs = append(errs, rel)
			if verbose {
				fmt.Printf("%s %+6.1f%% real=%4d est=%4d %s: %.50q\n", l, 100*rel, s.Tokens, e, s.Source, s.Text)
			}
		}
		abs := make([]float64, len(errs))
		var sumAbs float64
		for i, e := range errs {
			abs[i] = math.Abs(e)
			sumAbs += abs[i]
		}
		slices.Sort(abs)
		slices.Sort(errs)
		within := 0
		for _, a := range abs {
			if a <= 0.15 {
				within++
			}
		}
		fmt.Printf("%s: %d samples, %d real tokens, %d estimated: total error %+.1f%%; per sample mean |err| %.1f%%, p90 %.1f%%, max %.1f%% (min %+.1f%%, max %+.1f%%); within ±15%%: %d/%d\n",
			l, len(errs), real, est, 100*float64(est-real)/float64(real),
			100*sumAbs/float64(len(abs)), 100*abs[len(abs)*9/10], 100*abs[len(abs)-1],
			100*errs[0], 100*errs[len(errs)-1], within, len(errs))
	}
}
