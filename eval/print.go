package eval

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// Print writes the report as text: the set-up, one row per mode (the
// reference BM25 last), then per category, then the ceiling and how the
// best mode compares with BM25 at the largest k.
func Print(w io.Writer, rep *Report) error {
	fmt.Fprintf(w, "embedder %s (%s); %d turns in %d conversations (%d chunks); %d questions",
		rep.Embedder, rep.EmbedderKind, rep.Turns, rep.Conversations, rep.Chunks, rep.Questions)
	if rep.AskedAt > 0 {
		fmt.Fprintf(w, " (%d asked at their asked_at turn)", rep.AskedAt)
	}
	if rep.Probes > 0 {
		fmt.Fprintf(w, "; %d probes (no evidence: the right answer is nothing)", rep.Probes)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "ingest %.3fs (%.0f turns/s); indexed text: turn", rep.IngestSeconds, rep.TurnsPerSec)
	if rep.WithSpeaker {
		fmt.Fprint(w, " + speaker")
	}
	if rep.WithDate {
		fmt.Fprint(w, " + date")
	}
	turns := "whole turns"
	if rep.Captions > 0 {
		fmt.Fprintf(w, " + image caption (%d turns)", rep.Captions)
		turns += " + image captions"
	}
	fmt.Fprintf(w, "; bm25 = Okapi BM25 k1=%.1f b=%.2f over %s, %s tokenizer\n\n", bm25K1, bm25B, turns, rep.BM25Tokenizer)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	hdr := "mode\tcategory\tn\t"
	for _, k := range rep.Ks {
		hdr += fmt.Sprintf("R@%d\t", k)
	}
	for _, k := range rep.Ks {
		hdr += fmt.Sprintf("H@%d\t", k)
	}
	hdr += "hits\tprec\t"
	probes := ""
	if rep.Probes > 0 {
		probes = "false-surface\t"
	}
	fmt.Fprintln(tw, hdr+probes+"p50 ms\tp95 ms\t")
	row := func(mode string, s Scores, lat string) {
		line := fmt.Sprintf("%s\t%s\t%d\t", mode, s.Category, s.Questions)
		for _, k := range rep.Ks {
			line += fmt.Sprintf("%.3f\t", s.Recall[k])
		}
		for _, k := range rep.Ks {
			line += fmt.Sprintf("%.3f\t", s.Hit[k])
		}
		line += fmt.Sprintf("%.1f\t%.3f\t", s.Returned, s.Precision)
		fmt.Fprintln(tw, line+lat)
	}
	for _, m := range rep.Modes {
		fs := ""
		if rep.Probes > 0 {
			fs = fmt.Sprintf("%.3f\t", m.FalseSurface)
		}
		row(m.Mode, m.Overall, fs+fmt.Sprintf("%.2f\t%.2f\t", m.P50Millis, m.P95Millis))
	}
	fmt.Fprintln(tw, "\t\t\t")
	for _, m := range rep.Modes {
		for _, c := range m.Categories {
			row(m.Mode, c, strings.Repeat("\t", len(probes)/len("false-surface\t"))+"\t\t")
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprint(w, "\nrecall ceiling:")
	for _, k := range rep.Ks {
		fmt.Fprintf(w, " R@%d %.3f", k, rep.Ceiling[k])
	}
	fmt.Fprintln(w)
	if len(rep.Modes) > 1 {
		kmax := rep.Ks[len(rep.Ks)-1]
		best := rep.Modes[0]
		var ref *ModeReport
		for i, m := range rep.Modes {
			if m.Mode == BM25Mode {
				ref = &rep.Modes[i]
				continue
			}
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
		if ref != nil && ref.Overall.Recall[kmax] > 0 {
			fmt.Fprintf(w, " (%.2f× bm25)", best.Overall.Recall[kmax]/ref.Overall.Recall[kmax])
		}
		fmt.Fprintln(w)
	}
	printSweeps(w, rep)
	return nil
}

// printSweeps writes each mode's sweep (Config.Sweep): recall at the
// largest k and the false-surface rate, at the thresholds where either
// changes by at least 0.01.
func printSweeps(w io.Writer, rep *Report) {
	kmax := rep.Ks[len(rep.Ks)-1]
	for _, m := range rep.Modes {
		if len(m.Sweep) == 0 {
			continue
		}
		what := "relevance"
		if m.Mode == BM25Mode {
			what = "score"
		}
		fmt.Fprintf(w, "\nsweep %s (%s ≥ threshold): threshold R@%d false-surface\n", m.Mode, what, kmax)
		var last SweepPoint
		for i, p := range m.Sweep {
			if i > 0 && i < len(m.Sweep)-1 && math.Abs(p.Recall[kmax]-last.Recall[kmax]) < 0.01 && math.Abs(p.FalseSurface-last.FalseSurface) < 0.01 {
				continue
			}
			fmt.Fprintf(w, "  %8.3f %.3f %.3f\n", p.Threshold, p.Recall[kmax], p.FalseSurface)
			last = p
		}
	}
}
