// Command benchvs compares the long-term memory's benchmarks of a git
// revision (old) with the working tree (new) in one run, on the same
// machine and the same synthetic data, and prints new/old ratios: the
// median, over interleaved pairs of runs, of each pair's ratio. On a shared
// machine absolute timings drift from minute to minute; a pair's two runs
// are seconds apart, and their order alternates from pair to pair.
//
//	go run ./scripts/benchvs -rev main -pairs 5 -turns 100000
//
// It adds a temporary git worktree of rev, builds both test binaries of
// memory/longterm (go test -c), and runs per pair BenchmarkQuery (hybrid,
// vector and keyword searches of one namespace of -turns synthetic turns:
// p50-ms, cpu-ms/op, allocs/op) and BenchmarkIngest at -ingest turns
// (turns/s). A ratio below 1 is better for times and allocations, above 1
// for turns/s. -backend sets AGENTMEM_BENCH_BACKEND for both (e.g.
// inmem:int8). -realmem DIR also runs package eval's
// BenchmarkIngestRealMem on the RealMem development set in DIR (the
// ingest of its 14,028 turns in the batches its questions cut; turns/s and
// cpu-ms/op, the old side running the working tree's benchmark code where
// it builds at rev):
//
//	go run ./scripts/benchvs -rev 487b4de -pairs 7 -querytime 0 -ingest 0 -realmem ../shared/data/realmem
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

func main() {
	rev := flag.String("rev", "main", "the old git revision")
	pairs := flag.Int("pairs", 5, "interleaved pairs of runs")
	turns := flag.Int("turns", 100000, "turns of the queried namespace (AGENTMEM_BENCH_TURNS)")
	backend := flag.String("backend", "", "vector backend spec for both (AGENTMEM_BENCH_BACKEND); empty: each build's default")
	queryTime := flag.String("querytime", "40x", "-benchtime of BenchmarkQuery (0 skips it)")
	ingest := flag.Int("ingest", 10000, "turns of BenchmarkIngest (1000 or 10000; 0 skips it)")
	ingestTime := flag.String("ingesttime", "5x", "-benchtime of BenchmarkIngest")
	pkg := flag.String("pkg", "./memory/longterm", "package holding the benchmarks")
	keep := flag.Bool("keep", false, "keep the temporary folder (binaries, raw outputs)")
	realMem := flag.String("realmem", "", "RealMem data folder: also run eval's BenchmarkIngestRealMem (-ingesttime)")
	flag.Parse()
	if err := run(*rev, *pkg, *backend, *queryTime, *ingestTime, *realMem, *pairs, *turns, *ingest, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "benchvs:", err)
		os.Exit(1)
	}
}

func run(rev, pkg, backend, queryTime, ingestTime, realMem string, pairs, turns, ingest int, keep bool) error {
	top, err := output(exec.Command("git", "rev-parse", "--show-toplevel"))
	if err != nil {
		return err
	}
	top = strings.TrimSpace(top)
	tmp, err := os.MkdirTemp("", "benchvs-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Fprintln(os.Stderr, "benchvs: keeping", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	old := filepath.Join(tmp, "old")
	if _, err := output(exec.Command("git", "-C", top, "worktree", "add", "--detach", old, rev)); err != nil {
		return err
	}
	defer exec.Command("git", "-C", top, "worktree", "remove", "--force", old).Run()
	head, _ := output(exec.Command("git", "-C", old, "rev-parse", "--short", "HEAD"))
	env := append(os.Environ(), fmt.Sprintf("AGENTMEM_BENCH_TURNS=%d", turns))
	if backend != "" {
		env = append(env, "AGENTMEM_BENCH_BACKEND="+backend)
	}
	type job struct{ pkg, pattern, benchtime string }
	var jobs []job
	if queryTime != "0" {
		jobs = append(jobs, job{pkg, "^BenchmarkQuery$", queryTime})
	}
	if ingest > 0 {
		jobs = append(jobs, job{pkg, fmt.Sprintf("^BenchmarkIngest$/^turns=%d$", ingest), ingestTime})
	}
	if realMem != "" {
		abs, err := filepath.Abs(realMem)
		if err != nil {
			return err
		}
		env = append(env, "AGENTMEM_REALMEM="+abs)
		jobs = append(jobs, job{"./eval", "^BenchmarkIngestRealMem$", ingestTime})
	}
	// bins[side][pkg] is the side's test binary of pkg.
	bins := map[string]map[string]string{"old": {}, "new": {}}
	for _, j := range jobs {
		for side, dir := range map[string]string{"old": old, "new": top} {
			if bins[side][j.pkg] != "" {
				continue
			}
			bin := filepath.Join(tmp, fmt.Sprintf("%s-%d.test", side, len(bins[side])))
			build := func() error {
				c := exec.Command("go", "test", "-c", "-o", bin, j.pkg)
				c.Dir = dir
				_, err := output(c)
				return err
			}
			// The old side runs the new side's code of a benchmark that
			// only drives the package (sameBench) where that builds at
			// rev: both then report the same metrics, measured alike.
			if f := sameBench[j.pkg]; side == "old" && f != "" {
				if err := copyFile(filepath.Join(top, f), filepath.Join(old, f)); err != nil {
					return err
				}
				if build() == nil {
					bins[side][j.pkg] = bin
					continue
				}
				fmt.Fprintf(os.Stderr, "benchvs: %s of the working tree does not build at %s; the old side runs its own\n", f, rev)
				if _, err := output(exec.Command("git", "-C", old, "checkout", "--", f)); err != nil {
					return err
				}
			}
			if err := build(); err != nil {
				return fmt.Errorf("building %s %s: %w", side, j.pkg, err)
			}
			bins[side][j.pkg] = bin
		}
	}
	// values[side][bench/metric] holds one value per pair.
	values := map[string]map[string][]float64{"old": {}, "new": {}}
	for p := range pairs {
		order := []string{"old", "new"}
		if p%2 == 1 {
			order = []string{"new", "old"}
		}
		for _, j := range jobs {
			for _, side := range order {
				c := exec.Command(bins[side][j.pkg], "-test.run", "^$", "-test.bench", j.pattern,
					"-test.benchtime", j.benchtime, "-test.benchmem")
				c.Dir = filepath.Join(map[string]string{"old": old, "new": top}[side], j.pkg)
				c.Env = env
				out, err := output(c)
				if err != nil {
					return fmt.Errorf("%s %s: %w", side, j.pattern, err)
				}
				for k, v := range parse(out) {
					values[side][k] = append(values[side][k], v)
				}
			}
		}
		fmt.Fprintf(os.Stderr, "benchvs: pair %d/%d done\n", p+1, pairs)
	}
	fmt.Printf("old %s (%s) vs new (working tree of %s); %d interleaved pairs; AGENTMEM_BENCH_TURNS=%d", rev,
		strings.TrimSpace(head), top, pairs, turns)
	if backend != "" {
		fmt.Printf(" AGENTMEM_BENCH_BACKEND=%s", backend)
	}
	fmt.Println()
	fmt.Printf("%-52s %-10s %12s %12s %14s\n", "benchmark", "metric", "old median", "new median", "new/old (pairs)")
	keys := make([]string, 0, len(values["new"]))
	for k := range values["new"] {
		if _, ok := values["old"][k]; ok && wanted(k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		o, n := values["old"][k], values["new"][k]
		var ratios []float64
		for i := range min(len(o), len(n)) {
			if o[i] != 0 {
				ratios = append(ratios, n[i]/o[i])
			}
		}
		name, metric, _ := strings.Cut(k, " ")
		fmt.Printf("%-52s %-10s %12.4g %12.4g %8.3f× [%s]\n", name, metric, median(o), median(n), median(ratios), span(ratios))
	}
	return nil
}

// sameBench names, by package, the file of benchmarks that the old side
// takes from the working tree: eval's BenchmarkIngestRealMem only calls
// the long-term memory's API, and its newer versions report more
// (cpu-ms/op).
var sameBench = map[string]string{"./eval": "eval/bench_test.go"}

// copyFile copies src over dst.
func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

// wanted picks the metrics worth a ratio.
func wanted(key string) bool {
	_, metric, _ := strings.Cut(key, " ")
	switch metric {
	case "p50-ms", "cpu-ms/op", "allocs/op", "turns/s", "B/op":
		return true
	}
	return false
}

// parse reads benchmark result lines ("BenchmarkX/y-2 N v unit v unit...")
// into "name metric" → value, the name without the GOMAXPROCS suffix.
func parse(out string) map[string]float64 {
	m := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := f[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		name = strings.TrimPrefix(name, "Benchmark")
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				m[name+" "+f[i+1]] = v
			}
		}
	}
	return m
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// span is the range of the pairs' ratios.
func span(v []float64) string {
	if len(v) == 0 {
		return ""
	}
	return fmt.Sprintf("%.2f–%.2f", slices.Min(v), slices.Max(v))
}

func output(c *exec.Cmd) (string, error) {
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		return out.String(), fmt.Errorf("%s: %w\n%s%s", strings.Join(c.Args, " "), err, out.String(), errb.String())
	}
	return out.String(), nil
}
