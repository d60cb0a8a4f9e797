package inmem_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/vdb/inmem"
)

// bruteTop returns the k best ids of live for q by cosine similarity,
// computed in float64.
func bruteTop(q []float32, live map[int64][]float32, k int) []int64 {
	type scored struct {
		id int64
		s  float64
	}
	norm := func(v []float32) float64 {
		var s float64
		for _, x := range v {
			s += float64(x) * float64(x)
		}
		return math.Sqrt(s)
	}
	var all []scored
	for id, v := range live {
		var dot float64
		for i := range v {
			dot += float64(q[i]) * float64(v[i])
		}
		all = append(all, scored{id, dot / norm(q) / norm(v)})
	}
	slices.SortFunc(all, func(a, b scored) int {
		if a.s != b.s {
			if a.s > b.s {
				return -1
			}
			return 1
		}
		return int(a.id - b.id)
	})
	ids := make([]int64, 0, k)
	for _, s := range all[:min(k, len(all))] {
		ids = append(ids, s.id)
	}
	return ids
}

// TestSegments fills databases past several segments (one at a time and in
// batches), deletes across segment boundaries, and checks every search
// against a brute-force ranking, with and without codes, before and after
// an export/import round trip. Rows already stored never move when the
// database grows past its first segment.
func TestSegments(t *testing.T) {
	t.Parallel()

	const dim = 8192 // a segment is 256 rows
	seg := inmem.SegmentRows(dim)
	require.Equal(t, 256, seg)
	n := 2*seg + 37
	r := rand.New(rand.NewPCG(3, 4))
	vs := vecs(r, n, dim)
	qs := vecs(r, 5, dim)
	for _, tc := range []struct {
		name string
		opts []inmem.Option
	}{{"plain", nil}, {"codes", []inmem.Option{inmem.WithCodes(inmem.Int8), inmem.WithCodesAlways()}}, {"parallel", []inmem.Option{inmem.WithParallelMin(1)}}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			db, err := inmem.New(dim, tc.opts...)
			require.NoError(t, err)
			live := map[int64][]float32{}
			check := func(db *inmem.DB) {
				t.Helper()
				require.Equal(t, len(live), db.Len())
				for _, q := range qs {
					res, err := db.Search(ctx, q, 10)
					require.NoError(t, err)
					got := make([]int64, 0, len(res))
					for _, x := range res {
						got = append(got, x.ID)
					}
					assert.Equal(t, bruteTop(q, live, 10), got)
				}
				// Each stored vector finds itself first.
				for id := range live {
					if id%97 == 0 {
						res, err := db.Search(ctx, live[id], 1)
						require.NoError(t, err)
						require.Equal(t, id, res[0].ID)
					}
				}
			}
			var firstSeg, secondSeg *float32
			for i := 0; i < n; {
				size := 1 + i%50
				if i < seg+5 {
					size = 1
				}
				hi := min(i+size, n)
				ids := make([]int64, 0, hi-i)
				for j := i; j < hi; j++ {
					ids = append(ids, int64(j))
					live[int64(j)] = vs[j]
				}
				require.NoError(t, db.Add(ctx, ids, vs[i:hi]))
				i = hi
				if i > seg && firstSeg == nil {
					firstSeg = db.RowAddr(0)
				}
				if i > 2*seg && secondSeg == nil {
					secondSeg = db.RowAddr(seg)
				}
			}
			assert.Same(t, firstSeg, db.RowAddr(0), "growth past the first segment does not move it")
			assert.Same(t, secondSeg, db.RowAddr(seg), "nor the segments after it")
			check(db)

			// Delete rows in every segment: last rows move into the holes.
			var del []int64
			for id := int64(0); id < int64(n); id += 3 {
				del = append(del, id)
				delete(live, id)
			}
			got, err := db.Delete(ctx, del...)
			require.NoError(t, err)
			require.Equal(t, len(del), got)
			check(db)

			// Replace some, add some back.
			for id := int64(1); id < int64(n); id += 7 {
				v := vecs(r, 1, dim)
				require.NoError(t, db.Add(ctx, []int64{id}, v))
				live[id] = v[0]
			}
			check(db)

			var buf bytes.Buffer
			require.NoError(t, db.Export(ctx, &buf))
			db2, err := inmem.New(dim, tc.opts...)
			require.NoError(t, err)
			require.NoError(t, db2.Import(ctx, bytes.NewReader(buf.Bytes())))
			check(db2)
			require.NoError(t, db2.Add(ctx, []int64{int64(n)}, qs[:1]))
			live[int64(n)] = qs[0]
			check(db2)

			// Deleting almost everything gives the segments back.
			var rest []int64
			for id := range live {
				if id != 2 {
					rest = append(rest, id)
					delete(live, id)
				}
			}
			_, err = db2.Delete(ctx, rest...)
			require.NoError(t, err)
			assert.LessOrEqual(t, db2.Cap(), seg, "one segment at most is kept")
			check(db2)
		})
	}
}
