package eval

import (
	"fmt"
	"math"
)

// Calibration is a fitted logistic model of whether the memory holds what
// a question asks about, for one mode: P = 1/(1 + e^−z) with z = Bias +
// BestKeyword·kwBest + SqrtBestKeyword·√kwBest + BestVector·cosBest +
// Coverage·cover + BestShare·share + L·(LogRecords + BestKeywordL·kwBest +
// SqrtBestKeywordL·√kwBest + BestVectorL·cosBest + CoverageL·cover +
// BestShareL·share), L the logarithm of the namespace's records, from a
// search's memory.Explanation (BestKeyword, BestVector, Coverage,
// BestShare, Records; a mode without a path has 0 for its weights, and
// vector mode, which reads no keyword statistics, for L's), times
// UnknownNameFactor when the query names something the namespace never
// mentions (Sample.UnknownName; 1 in vector mode, which does not read the
// namespace's words). memory/engine's relevance is this probability times
// the hit's strength relative to the search's best.
type Calibration struct {
	Mode                                                                string
	Bias, BestKeyword, SqrtBestKeyword, BestVector, Coverage, BestShare float64
	LogRecords, BestKeywordL, SqrtBestKeywordL, BestVectorL, CoverageL  float64
	BestShareL                                                          float64
	UnknownNameFactor                                                   float64
	Questions, Answerable                                               int
	LogLoss, BaseLogLoss                                                float64 // per question: the model's, and a constant's (the base rate)
}

// names are the features a mode's model has, in order after the constant.
func names(mode string) []string {
	switch mode {
	case "vector":
		return []string{"cosBest", "share"}
	case "keyword":
		return []string{"kwBest", "sqrtKWBest", "cover", "share", "logDocs", "kwBestL", "sqrtKWBestL", "coverL", "shareL"}
	}
	return []string{"kwBest", "sqrtKWBest", "cosBest", "cover", "share", "logDocs", "kwBestL", "sqrtKWBestL", "cosBestL", "coverL", "shareL"}
}

// features returns the model's inputs for a sample in a mode: the
// constant, then names(mode)'s.
func features(mode string, s Sample) []float64 {
	sq := math.Sqrt(max(s.BestKeyword, 0))
	l := math.Log(float64(max(s.Records, 1)))
	v := map[string]float64{"kwBest": s.BestKeyword, "sqrtKWBest": sq, "cosBest": s.BestVector, "cover": s.Coverage, "share": s.BestShare,
		"logDocs": l, "kwBestL": l * s.BestKeyword, "sqrtKWBestL": l * sq, "cosBestL": l * s.BestVector, "coverL": l * s.Coverage, "shareL": l * s.BestShare}
	f := []float64{1}
	for _, n := range names(mode) {
		f = append(f, v[n])
	}
	return f
}

// Fit fits each mode's calibration on the samples' searches (one per
// question or probe and mode: its best hit's sample; a search without
// hits has nothing to calibrate), whether the question is answerable
// (has evidence) or a probe, by Newton's method on the log-likelihood with
// a small ridge (1e-3) that keeps it finite. The probability it fits
// assumes the samples' share of probes: with scripts/cross-probes.py, as
// many as questions, a memory asked on every turn about things it may
// never have been told.
func Fit(samples []Sample) ([]Calibration, error) {
	byMode := map[string][]Sample{}
	var modes []string
	for _, s := range samples {
		if s.Rank != 1 {
			continue
		}
		if _, ok := byMode[s.Mode]; !ok {
			modes = append(modes, s.Mode)
		}
		byMode[s.Mode] = append(byMode[s.Mode], s)
	}
	var out []Calibration
	for _, mode := range modes {
		ss := byMode[mode]
		w, err := logistic(mode, ss)
		if err != nil {
			return nil, fmt.Errorf("eval: fit %s: %w", mode, err)
		}
		c := Calibration{Mode: mode, Questions: len(ss), Bias: w[0]}
		for i, n := range names(mode) {
			*map[string]*float64{"kwBest": &c.BestKeyword, "sqrtKWBest": &c.SqrtBestKeyword,
				"cosBest": &c.BestVector, "cover": &c.Coverage, "share": &c.BestShare,
				"logDocs": &c.LogRecords, "kwBestL": &c.BestKeywordL, "sqrtKWBestL": &c.SqrtBestKeywordL,
				"cosBestL": &c.BestVectorL, "coverL": &c.CoverageL, "shareL": &c.BestShareL}[n] = w[i+1]
		}
		for _, s := range ss {
			if !s.Probe {
				c.Answerable++
			}
		}
		c.UnknownNameFactor = 1
		if mode != "vector" {
			c.UnknownNameFactor = unknownNameFactor(w, mode, ss)
		}
		base := float64(c.Answerable) / float64(len(ss))
		for _, s := range ss {
			p := sigmoid(dot(w, features(mode, s)))
			if s.UnknownName {
				p *= c.UnknownNameFactor
			}
			c.LogLoss += logLoss(p, !s.Probe)
			c.BaseLogLoss += logLoss(base, !s.Probe)
		}
		c.LogLoss /= float64(len(ss))
		c.BaseLogLoss /= float64(len(ss))
		out = append(out, c)
	}
	return out, nil
}

func logistic(mode string, ss []Sample) ([]float64, error) {
	d := len(features(mode, Sample{}))
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
			x := features(mode, s)
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

// unknownNameFactor returns the factor in [0, 1] of the model w's
// probability for the searches whose query names something the namespace
// never mentions that makes ss most likely (golden-section search: the
// log-likelihood is concave in it).
func unknownNameFactor(w []float64, mode string, ss []Sample) float64 {
	loss := func(f float64) float64 {
		l := 0.0
		for _, s := range ss {
			if s.UnknownName {
				l += logLoss(f*sigmoid(dot(w, features(mode, s))), !s.Probe)
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
