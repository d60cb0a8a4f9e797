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
