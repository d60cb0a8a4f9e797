package eval

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/longterm"
)

// sweepDepth is how many hits a sweep asks for without a threshold: a
// threshold then keeps the best of them above it, as a search with that
// threshold would return the best K above it (exact while at least K of
// the sweepDepth pass).
const sweepDepth = 50

// runner asks a run's questions and probes and keeps their scores.
type runner struct {
	cfg   Config
	mem   Memory
	rep   *Report
	ks    []int
	names []string // modes, then BM25Mode unless NoBM25
	modes []longterm.Mode
	accs  []*modeAcc
	// per mode: probes that surfaced a hit; sweep[mode] the questions'
	// and probes' ranked scores without a threshold
	surfaced []int
	sweep    [][]sweepItem
}

// sweepItem is one question's (or probe's) hits without a threshold: their
// scores (relevance, or BM25's score) and whether each is evidence.
type sweepItem struct {
	probe    bool
	evidence int
	scores   []float64
	hits     []bool
}

// ask asks question q of conversation c (ref is the reference BM25 over
// the same turns; in turns are in memory) in every mode.
func (r *runner) ask(ctx context.Context, q Question, c *convData, ref *refBM25, in int) error {
	if r.surfaced == nil {
		r.surfaced = make([]int, len(r.names))
		r.sweep = make([][]sweepItem, len(r.names))
	}
	probe := len(q.Evidence) == 0
	if q.AskedAt != "" {
		r.rep.AskedAt++
	}
	if probe {
		r.rep.Probes++
	} else {
		r.rep.Questions++
		for _, k := range r.ks {
			r.rep.Ceiling[k] += float64(min(k, len(q.Evidence), in)) / float64(len(q.Evidence))
		}
	}
	cat := CategoryLabel(q.Category)
	var qr *QuestionResult
	if r.cfg.PerQuestion {
		r.rep.PerQuestion = append(r.rep.PerQuestion, QuestionResult{
			QID: q.QID, Conv: q.Conv, Category: cat, Evidence: q.Evidence, Top: map[string][]string{},
		})
		qr = &r.rep.PerQuestion[len(r.rep.PerQuestion)-1]
	}
	maxK := r.ks[len(r.ks)-1]
	prefix := Key(q.Conv, "")
	for i, mode := range r.names {
		t0 := time.Now()
		var got []string
		if mode == BM25Mode {
			idx, sc := ref.rankScored(q.Question, max(maxK, sweepDepth))
			for _, j := range idx {
				got = append(got, c.turns[j].ID)
			}
			if r.cfg.Sweep {
				r.sweep[i] = append(r.sweep[i], newSweepItem(probe, q.Evidence, got, sc))
			}
			got = got[:min(maxK, len(got))]
		} else {
			hits, err := r.mem.Query(ctx, memory.Query{Text: q.Question, Namespace: q.Conv, Mode: r.modes[i], K: maxK, MinRelevance: r.cfg.MinRelevance})
			if err != nil {
				return fmt.Errorf("eval: question %s: %w", q.QID, err)
			}
			for _, h := range hits {
				got = append(got, strings.TrimPrefix(h.ID, prefix))
			}
			if r.cfg.Sweep || r.cfg.Samples {
				if err := r.unthresholded(ctx, i, q, probe, prefix); err != nil {
					return err
				}
			}
		}
		r.accs[i].lat = append(r.accs[i].lat, time.Since(t0))
		if probe {
			if len(got) > 0 {
				r.surfaced[i]++
			}
		} else {
			r.accs[i].add(r.ks, cat, q.Evidence, got)
		}
		if qr != nil {
			qr.Top[mode] = got
		}
	}
	return nil
}

// unthresholded asks q in mode i without a minimum relevance, for the
// sweep and the samples.
func (r *runner) unthresholded(ctx context.Context, i int, q Question, probe bool, prefix string) error {
	hits, err := r.mem.Query(ctx, memory.Query{Text: q.Question, Namespace: q.Conv, Mode: r.modes[i], K: sweepDepth, MinRelevance: -1, Explain: r.cfg.Samples})
	if err != nil {
		return fmt.Errorf("eval: question %s: %w", q.QID, err)
	}
	ids := make([]string, len(hits))
	rel := make([]float64, len(hits))
	for j, h := range hits {
		ids[j] = strings.TrimPrefix(h.ID, prefix)
		rel[j] = float64(h.Relevance)
	}
	if r.cfg.Sweep {
		r.sweep[i] = append(r.sweep[i], newSweepItem(probe, q.Evidence, ids, rel))
	}
	if r.cfg.Samples {
		for j, h := range hits[:min(len(hits), 10)] {
			s := Sample{QID: q.QID, ID: ids[j], Mode: r.names[i], Rank: j + 1, Evidence: slices.Contains(q.Evidence, ids[j]), Probe: probe}
			if x := h.Explain; x != nil {
				s.Keyword, s.Vector, s.BestKeyword, s.BestVector, s.Coverage, s.BestShare, s.UnknownName = x.Keyword, x.Vector, x.BestKeyword, x.BestVector, x.Coverage, x.BestShare, len(x.UnknownNames) > 0
				s.OwnKeyword, s.Records, s.Documents = x.OwnKeyword, x.Records, x.Documents
			}
			r.rep.Samples = append(r.rep.Samples, s)
		}
	}
	return nil
}

func newSweepItem(probe bool, evidence, ids []string, scores []float64) sweepItem {
	it := sweepItem{probe: probe, evidence: len(evidence), scores: scores, hits: make([]bool, len(ids))}
	for j, id := range ids {
		it.hits[j] = slices.Contains(evidence, id)
	}
	return it
}

// finish computes the false-surface rates and the sweeps.
func (r *runner) finish() {
	for i := range r.names {
		if r.rep.Probes > 0 && r.surfaced != nil {
			r.accs[i].falseSurface = float64(r.surfaced[i]) / float64(r.rep.Probes)
		}
		if r.cfg.Sweep && r.sweep != nil {
			r.accs[i].sweep = sweepCurve(r.sweep[i], r.ks, r.names[i] == BM25Mode)
		}
	}
}

// sweepCurve returns recall@k and the false-surface rate at each threshold
// of a grid: relevance from 0 to 1 in steps of 0.01, or for BM25's scores
// every 2.5th percentile of the best hit's score over questions and probes.
func sweepCurve(items []sweepItem, ks []int, raw bool) []SweepPoint {
	var grid []float64
	if raw {
		var tops []float64
		for _, it := range items {
			if len(it.scores) > 0 {
				tops = append(tops, it.scores[0])
			}
		}
		slices.Sort(tops)
		grid = append(grid, 0)
		for p := 1; p <= 40 && len(tops) > 0; p++ {
			grid = append(grid, tops[min(len(tops)-1, p*len(tops)/40)])
		}
		grid = slices.Compact(grid)
	} else {
		for t := 0; t <= 100; t++ {
			grid = append(grid, float64(t)/100)
		}
	}
	out := make([]SweepPoint, 0, len(grid))
	var kept []bool
	for _, th := range grid {
		pt := SweepPoint{Threshold: th, Recall: map[int]float64{}}
		questions, probes, surfaced := 0, 0, 0
		for _, it := range items {
			// The hits at or above th, in order, as a search with th
			// as its minimum returns them: a hit's relevance need not
			// fall with its rank (it weighs the hit's stronger path).
			kept = kept[:0]
			for j, sc := range it.scores {
				if sc >= th {
					kept = append(kept, it.hits[j])
				}
			}
			if it.probe {
				probes++
				if len(kept) > 0 {
					surfaced++
				}
				continue
			}
			questions++
			for _, k := range ks {
				found := 0
				for _, ev := range kept[:min(k, len(kept))] {
					if ev {
						found++
					}
				}
				pt.Recall[k] += float64(found) / float64(it.evidence)
			}
		}
		for k := range pt.Recall {
			pt.Recall[k] /= float64(max(questions, 1))
		}
		if probes > 0 {
			pt.FalseSurface = float64(surfaced) / float64(probes)
		}
		out = append(out, pt)
	}
	return out
}
