package eval

import (
	"fmt"
	"math"
	"strings"

	"github.com/agentmem/agentmem/internal/relevance"
	"github.com/agentmem/agentmem/memory"
)

// Calibration is a fitted relevance model (internal/relevance's Model,
// the form memory/engine computes every hit's relevance with) for one
// mode, with how well it fits: a logistic model of whether the memory
// holds what a question asks about, from a search's memory.Explanation
// (BestKeyword, BestVector, Coverage, BestShare, Records: Sample's), times
// its UnknownName factor when the query names something the namespace
// never mentions (Sample.UnknownName; 1 in vector mode, which does not
// read the namespace's words). memory/engine's relevance is this
// probability times the hit's strength relative to the search's best.
type Calibration struct {
	Mode string
	// Documents: the model of a Chinese query in a namespace of passages
	// (memory.Explanation.Documents; memory/engine's
	// documentCalibrations), fitted on those samples only.
	Documents bool
	relevance.Model
	Questions, Answerable int
	LogLoss, BaseLogLoss  float64 // per question: the model's, and a constant's (the base rate)
}

// String formats c as memory/engine's calibrations table is written:
// the mode's weights (relevance.Names), then its unknown-name factor and
// how well it fits.
func (c Calibration) String() string {
	mode, err := memory.ParseMode(c.Mode)
	if err != nil {
		return fmt.Sprintf("%s: %v", c.Mode, err)
	}
	w := c.Weights(mode)
	terms := make([]string, len(w))
	for i, n := range relevance.Names(mode) {
		terms[i] = fmt.Sprintf("%s: %.4f", n, w[i])
	}
	name := c.Mode
	if c.Documents {
		name += " (documents)"
	}
	return fmt.Sprintf("%-8s {%s},\n\tunknown-name factor %.2f  (%d searches, %d answerable; log loss %.4f, base rate's %.4f)",
		name, strings.Join(terms, ", "), c.UnknownName, c.Questions, c.Answerable, c.LogLoss, c.BaseLogLoss)
}

// features returns what the relevance model reads of a sample.
func features(s Sample) relevance.Features {
	return relevance.Features{KWBest: s.BestKeyword, CosBest: s.BestVector, Cover: s.Coverage, Share: s.BestShare, Docs: s.Records, Unknown: s.UnknownName}
}

// Fit fits each mode's calibration on the samples' searches (one per
// question or probe and mode: its best hit's sample; a search without
// hits has nothing to calibrate), whether the question is answerable
// (has evidence) or a probe, by Newton's method on the log-likelihood with
// a small ridge (1e-3) that keeps it finite. The probability it fits
// assumes the samples' share of probes: with scripts/cross-probes.py, as
// many as questions, a memory asked on every turn about things it may
// never have been told. The searches the engine read as Chinese
// documents (Sample.Documents) make their own calibration of each mode.
func Fit(samples []Sample) ([]Calibration, error) {
	type kind struct {
		mode      string
		documents bool
	}
	byKind := map[kind][]Sample{}
	var kinds []kind
	for _, s := range samples {
		if s.Rank != 1 {
			continue
		}
		k := kind{s.Mode, s.Documents}
		if _, ok := byKind[k]; !ok {
			kinds = append(kinds, k)
		}
		byKind[k] = append(byKind[k], s)
	}
	var out []Calibration
	for _, k := range kinds {
		name := k.mode
		mode, err := memory.ParseMode(name)
		if err != nil {
			return nil, fmt.Errorf("eval: fit: %w", err)
		}
		ss := byKind[k]
		w, err := logistic(mode, ss)
		if err != nil {
			return nil, fmt.Errorf("eval: fit %s: %w", name, err)
		}
		c := Calibration{Mode: name, Documents: k.documents, Questions: len(ss)}
		c.SetWeights(mode, w)
		for _, s := range ss {
			if !s.Probe {
				c.Answerable++
			}
		}
		c.UnknownName = 1
		if mode != memory.VectorOnly {
			c.UnknownName = unknownNameFactor(c.Model, mode, ss)
		}
		base := float64(c.Answerable) / float64(len(ss))
		for _, s := range ss {
			c.LogLoss += logLoss(c.P(mode, features(s)), !s.Probe)
			c.BaseLogLoss += logLoss(base, !s.Probe)
		}
		c.LogLoss /= float64(len(ss))
		c.BaseLogLoss /= float64(len(ss))
		out = append(out, c)
	}
	return out, nil
}

func logistic(mode memory.Mode, ss []Sample) ([]float64, error) {
	d := len(relevance.Names(mode))
	w := make([]float64, d)
	const ridge = 1e-3
	for iter := 0; iter < 100; iter++ {
		grad := make([]float64, d)
		hess := make([][]float64, d)
		for i := range hess {
			hess[i] = make([]float64, d)
			hess[i][i] = ridge * float64(len(ss))
			grad[i] = ridge * float64(len(ss)) * w[i]
		}
		for _, s := range ss {
			x := relevance.Inputs(mode, features(s))
			p := sigmoid(dot(w, x))
			y := 1.0
			if s.Probe {
				y = 0
			}
			for i := range x {
				grad[i] += (p - y) * x[i]
				for j := range x {
					hess[i][j] += p * (1 - p) * x[i] * x[j]
				}
			}
		}
		step, err := solve(hess, grad)
		if err != nil {
			return nil, err
		}
		size := 0.0
		for i := range w {
			w[i] -= step[i]
			size = max(size, math.Abs(step[i]))
		}
		if size < 1e-10 {
			break
		}
	}
	return w, nil
}

// unknownNameFactor returns the factor in [0, 1] of m's probability for
// the searches whose query names something the namespace never mentions
// that makes ss most likely (golden-section search: the log-likelihood is
// concave in it).
func unknownNameFactor(m relevance.Model, mode memory.Mode, ss []Sample) float64 {
	loss := func(f float64) float64 {
		m.UnknownName = f
		l := 0.0
		for _, s := range ss {
			if s.UnknownName {
				l += logLoss(m.P(mode, features(s)), !s.Probe)
			}
		}
		return l
	}
	lo, hi := 0.0, 1.0
	g := (math.Sqrt(5) - 1) / 2
	for hi-lo > 1e-4 {
		a, b := hi-g*(hi-lo), lo+g*(hi-lo)
		if loss(a) < loss(b) {
			hi = b
		} else {
			lo = a
		}
	}
	return (lo + hi) / 2
}

// solve solves a·x = b by Gaussian elimination with partial pivoting.
func solve(a [][]float64, b []float64) ([]float64, error) {
	n := len(b)
	m := make([][]float64, n)
	for i := range a {
		m[i] = append(append([]float64(nil), a[i]...), b[i])
	}
	for c := 0; c < n; c++ {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(m[r][c]) > math.Abs(m[p][c]) {
				p = r
			}
		}
		if math.Abs(m[p][c]) < 1e-300 {
			return nil, fmt.Errorf("singular system")
		}
		m[c], m[p] = m[p], m[c]
		for r := c + 1; r < n; r++ {
			f := m[r][c] / m[c][c]
			for k := c; k <= n; k++ {
				m[r][k] -= f * m[c][k]
			}
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := m[r][n]
		for k := r + 1; k < n; k++ {
			s -= m[r][k] * x[k]
		}
		x[r] = s / m[r][r]
	}
	return x, nil
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func logLoss(p float64, y bool) float64 {
	p = min(max(p, 1e-12), 1-1e-12)
	if y {
		return -math.Log(p)
	}
	return -math.Log(1 - p)
}
