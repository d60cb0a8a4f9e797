package eval

import (
	"fmt"
	"math"
)

// Calibration is a fitted logistic model of the probability that a hit is
// evidence of its question, for one mode: 1/(1 + e^−z) with z = Bias +
// Keyword·kw + SqrtKeyword·√kw + Vector·cos + BestKeyword·kwBest +
// BestVector·cosBest + Coverage·cover, from memory.Explanation's fields
// of the same names (a mode without a path has 0 for its weights).
type Calibration struct {
	Mode                                                                  string
	Bias, Keyword, SqrtKeyword, Vector, BestKeyword, BestVector, Coverage float64
	Samples, Positives                                                    int
	LogLoss, BaseLogLoss                                                  float64 // per sample: the model's, and a constant's (the base rate)
}

// names are the features a mode's model has, in order after the constant.
func names(mode string) []string {
	switch mode {
	case "vector":
		return []string{"cos", "cosBest"}
	case "keyword":
		return []string{"kw", "sqrtKW", "kwBest", "cover"}
	}
	return []string{"kw", "sqrtKW", "cos", "kwBest", "cosBest", "cover"}
}

// features returns the model's inputs for a sample in a mode: the
// constant, then the keyword terms (not in vector mode), then the cosine
// (not in keyword mode).
func features(mode string, s Sample) []float64 {
	f := []float64{1}
	for _, n := range names(mode) {
		f = append(f, map[string]float64{"kw": s.Keyword, "sqrtKW": math.Sqrt(max(s.Keyword, 0)), "cos": s.Vector,
			"kwBest": s.BestKeyword, "cosBest": s.BestVector, "cover": s.Coverage}[n])
	}
	return f
}

// Fit fits each mode's calibration on the samples, probes' hits (never
// evidence) among them, by Newton's method on the log-likelihood with a
// small ridge (1e-3) that keeps it finite. The probability it fits is
// that of a hit being evidence among questions asked as the samples' are:
// with as many probes as questions, of a memory asked on every turn about
// things it may never have been told.
func Fit(samples []Sample) ([]Calibration, error) {
	byMode := map[string][]Sample{}
	var modes []string
	for _, s := range samples {
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
		c := Calibration{Mode: mode, Samples: len(ss), Bias: w[0]}
		for i, n := range names(mode) {
			*map[string]*float64{"kw": &c.Keyword, "sqrtKW": &c.SqrtKeyword, "cos": &c.Vector,
				"kwBest": &c.BestKeyword, "cosBest": &c.BestVector, "cover": &c.Coverage}[n] = w[i+1]
		}
		pos := 0
		for _, s := range ss {
			if s.Evidence {
				pos++
			}
		}
		c.Positives = pos
		base := float64(pos) / float64(len(ss))
		for _, s := range ss {
			p := sigmoid(dot(w, features(mode, s)))
			c.LogLoss += logLoss(p, s.Evidence)
			c.BaseLogLoss += logLoss(base, s.Evidence)
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
			y := 0.0
			if s.Evidence {
				y = 1
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
