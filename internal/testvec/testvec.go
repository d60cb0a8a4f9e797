// Package testvec makes reproducible random unit vectors for tests and
// benchmarks, so that every backend and peer is measured on the same data.
package testvec

import (
	"math"
	"math/rand/v2"
)

// Unit returns n random unit vectors of dimension d (Gaussian directions)
// drawn from seed. They are views of one backing array, each with its
// capacity capped so that appending to one cannot overwrite the next.
func Unit(seed uint64, n, d int) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 2))
	flat := make([]float32, n*d)
	out := make([][]float32, n)
	for i := range out {
		v := flat[i*d : (i+1)*d : (i+1)*d]
		var sum float64
		for j := range v {
			x := r.NormFloat64()
			v[j] = float32(x)
			sum += x * x
		}
		inv := float32(1 / math.Sqrt(sum))
		for j := range v {
			v[j] *= inv
		}
		out[i] = v
	}
	return out
}

// Clustered returns n vectors around the given centres (each a unit centre
// plus Gaussian noise of norm ≈ spread), views of one backing array: a
// stand-in for real embeddings, which are clustered by topic. Uniformly
// random vectors are a worst case no ANN index serves well. The Faiss and
// pgvector benchmarks share it, so they measure the same vectors.
func Clustered(seed uint64, n int, centres [][]float32, spread float64) [][]float32 {
	d := len(centres[0])
	r := rand.New(rand.NewPCG(seed, 3))
	sigma := spread / math.Sqrt(float64(d))
	flat := make([]float32, n*d)
	out := make([][]float32, n)
	for i := range out {
		c := centres[r.IntN(len(centres))]
		v := flat[i*d : (i+1)*d : (i+1)*d]
		for j := range v {
			v[j] = c[j] + float32(r.NormFloat64()*sigma)
		}
		out[i] = v
	}
	return out
}

// IDs returns the n ids from, from+1, …, from+n-1.
func IDs(from, n int) []int64 {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(from + i)
	}
	return ids
}
