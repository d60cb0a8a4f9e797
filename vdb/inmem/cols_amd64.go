//go:build amd64 && !purego

package inmem

//go:noescape
func dotColsAVX512(out *int32, blk *int8, offs *int64, as *int32, nz int)

//go:noescape
func dotColsAVX2(out *int32, blk *int8, offs *int64, as *int32, nz int)

// dotCols sets out[i] to Σ_k t.as[k]·blk[t.offs[k]+i] for every row i of
// the column block blk (blockRows·d bytes; rows past the database's last
// are computed too, from whatever they hold): through the AVX-512 kernel,
// else the AVX2 one, else the portable loop.
func dotCols(out *[blockRows]int32, t colTerms, blk []int8) {
	nz := len(t.offs)
	if nz == 0 || len(t.as) != nz {
		dotColsGeneric(out[:], t, blk)
		return
	}
	// Every offset is j·blockRows with j < d: its column lies in blk.
	_ = blk[t.offs[nz-1]+blockRows-1]
	switch {
	case useAVX512:
		dotColsAVX512(&out[0], &blk[0], &t.offs[0], &t.as[0], nz)
	case useAVX2:
		dotColsAVX2(&out[0], &blk[0], &t.offs[0], &t.as[0], nz)
		dotColsAVX2(&out[64], &blk[64], &t.offs[0], &t.as[0], nz)
	default:
		dotColsGeneric(out[:], t, blk)
	}
}
