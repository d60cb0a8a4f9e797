package glove

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"sync"

	"github.com/agentmem/agentmem/internal/errs"
)

// ErrFormat is what a malformed vector file wraps (agentmem's shared
// errs.Corrupt): a line with the wrong number of values, a value that is no
// number or is NaN or infinite, a header that does not match the file.
// Read's errors are a *LineError naming the line.
var ErrFormat = errs.Corrupt

// A LineError is a problem on one line of a vector file.
type LineError struct {
	Line int   // 1-based
	Err  error // wraps ErrFormat or the reader's error
}

func (e *LineError) Error() string { return fmt.Sprintf("glove: line %d: %v", e.Line, e.Err) }

// Unwrap returns the line's error.
func (e *LineError) Unwrap() error { return e.Err }

// Vectors is a read-only table of word vectors in file order (most
// frequent first in the published GloVe files). It is safe for concurrent
// use by multiple goroutines.
type Vectors struct {
	dim   int
	words []string
	index map[string]int32
	data  []float32 // len(words)·dim, row i is words[i]'s vector

	nearOnce sync.Once
	unit     []float32 // L2-normalised rows of the first nearLimit words
	nearMu   sync.Mutex
	near     map[string][]Neighbour
}

// Dim returns the vectors' length.
func (v *Vectors) Dim() int { return v.dim }

// Len returns the number of words.
func (v *Vectors) Len() int { return len(v.words) }

// Rank returns the word's 0-based position in the file, and whether it is
// there.
func (v *Vectors) Rank(word string) (int, bool) {
	i, ok := v.index[word]
	return int(i), ok
}

// Vector returns the word's vector (shared: do not modify it), or nil.
func (v *Vectors) Vector(word string) []float32 {
	i, ok := v.index[word]
	if !ok {
		return nil
	}
	return v.row(int(i))
}

func (v *Vectors) row(i int) []float32 { return v.data[i*v.dim : (i+1)*v.dim : (i+1)*v.dim] }

// Load reads the GloVe text file at path (see Read).
func Load(path string) (*Vectors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("glove: %w", err)
	}
	defer f.Close()
	return Read(f)
}

// Read parses the standard GloVe text format: one word a line, followed
// by its values separated by spaces ("the 0.418 0.24968 …"), every line
// with the same number of values. An optional first line "COUNT DIM" (the
// word2vec text header) is checked against the file. Empty lines are
// skipped; a word given twice keeps its first vector. Errors name the line
// (*LineError) and wrap ErrFormat: a line whose value count differs from
// the first line's (a truncated line), a value that is not a number, or
// that is NaN or infinite.
func Read(r io.Reader) (*Vectors, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	v := &Vectors{index: map[string]int32{}}
	headerCount := -1
	line := 0
	for {
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: gather it whole.
			long := append([]byte(nil), b...)
			for errors.Is(err, bufio.ErrBufferFull) {
				b, err = br.ReadSlice('\n')
				long = append(long, b...)
			}
			b = long
		}
		if err != nil && err != io.EOF {
			return nil, &LineError{line + 1, err}
		}
		if len(b) > 0 {
			line++
			if perr := v.parseLine(bytes.TrimRight(b, "\r\n"), line, &headerCount); perr != nil {
				return nil, perr
			}
		}
		if err == io.EOF {
			break
		}
	}
	if len(v.words) == 0 {
		return nil, fmt.Errorf("glove: %w: no vectors", ErrFormat)
	}
	if headerCount >= 0 && headerCount != len(v.words) {
		return nil, fmt.Errorf("glove: %w: header says %d words, file has %d", ErrFormat, headerCount, len(v.words))
	}
	v.data = slices.Clip(v.data)
	return v, nil
}

func (v *Vectors) parseLine(b []byte, line int, headerCount *int) error {
	fields := bytes.Fields(b)
	if len(fields) == 0 {
		return nil
	}
	if line == 1 && len(fields) == 2 {
		n, err1 := strconv.Atoi(string(fields[0]))
		d, err2 := strconv.Atoi(string(fields[1]))
		if err1 == nil && err2 == nil {
			if n < 0 || d <= 0 {
				return &LineError{line, fmt.Errorf("%w: header %d %d", ErrFormat, n, d)}
			}
			*headerCount, v.dim = n, d
			return nil
		}
	}
	vals := fields[1:]
	if len(vals) == 0 {
		return &LineError{line, fmt.Errorf("%w: word %q has no values", ErrFormat, fields[0])}
	}
	if v.dim == 0 {
		v.dim = len(vals)
	}
	if len(vals) != v.dim {
		return &LineError{line, fmt.Errorf("%w: word %q has %d values, want %d (truncated line?)", ErrFormat, fields[0], len(vals), v.dim)}
	}
	word := string(fields[0])
	if _, dup := v.index[word]; dup {
		return nil
	}
	start := len(v.data)
	for j, f := range vals {
		x, err := strconv.ParseFloat(string(f), 32)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			v.data = v.data[:start]
			return &LineError{line, fmt.Errorf("%w: word %q value %d is %q, not a finite number", ErrFormat, word, j+1, f)}
		}
		v.data = append(v.data, float32(x))
	}
	v.index[word] = int32(len(v.words))
	v.words = append(v.words, word)
	return nil
}

// A Neighbour is a word near another one and their cosine similarity.
type Neighbour struct {
	Word       string
	Similarity float32
}

// nearLimit: Neighbours searches the this many most frequent words; rarer
// ones are mostly names and misspellings, and the scan's cost grows with
// the count.
const nearLimit = 50000

// Neighbours returns up to n words among the most frequent 50,000 whose
// cosine similarity to word is at least minSim, most similar first (the
// word itself left out), or nil for a word without a vector. Results are
// cached per word.
func (v *Vectors) Neighbours(word string, n int, minSim float32) []Neighbour {
	qi, ok := v.index[word]
	if !ok || n <= 0 {
		return nil
	}
	v.nearOnce.Do(v.normalise)
	key := fmt.Sprintf("%s\x00%d\x00%g", word, n, minSim)
	v.nearMu.Lock()
	if r, ok := v.near[key]; ok {
		v.nearMu.Unlock()
		return r
	}
	v.nearMu.Unlock()
	q := slices.Clone(v.row(int(qi)))
	normalise(q)
	var best []Neighbour
	rows := len(v.unit) / v.dim
	for i := range rows {
		if i == int(qi) {
			continue
		}
		s := dot(q, v.unit[i*v.dim:(i+1)*v.dim])
		if s < minSim || (len(best) == n && s <= best[n-1].Similarity) {
			continue
		}
		nb := Neighbour{v.words[i], s}
		k, _ := slices.BinarySearchFunc(best, nb, func(a, b Neighbour) int { return cmp.Compare(b.Similarity, a.Similarity) })
		best = slices.Insert(best, k, nb)
		if len(best) > n {
			best = best[:n]
		}
	}
	v.nearMu.Lock()
	if v.near == nil {
		v.near = map[string][]Neighbour{}
	}
	v.near[key] = best
	v.nearMu.Unlock()
	return best
}

func (v *Vectors) normalise() {
	rows := min(len(v.words), nearLimit)
	v.unit = slices.Clone(v.data[:rows*v.dim])
	for i := range rows {
		normalise(v.unit[i*v.dim : (i+1)*v.dim])
	}
}

func dot(a, b []float32) float32 {
	var s float32
	b = b[:len(a)]
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func normalise(x []float32) {
	var s float64
	for _, f := range x {
		s += float64(f) * float64(f)
	}
	if s == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range x {
		x[i] *= inv
	}
}

// Related returns a function giving the n nearest words (Neighbours) of a
// word with a similarity of at least minSim: the form query expansion
// takes (longterm.WithQueryExpansion).
func (v *Vectors) Related(n int, minSim float32) func(word string) []string {
	return func(word string) []string {
		nb := v.Neighbours(word, n, minSim)
		out := make([]string, len(nb))
		for i, x := range nb {
			out[i] = x.Word
		}
		return out
	}
}
