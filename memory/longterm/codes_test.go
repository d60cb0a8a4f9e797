//go:build unix

package longterm

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed/hash"
)

// TestDefaultBackend_Int8Codes checks that the default backend's vector
// indexes keep int8 codes and that searches find exactly what the plain
// float32 scan ("inmem:none") finds: the same hits, scores and order, in
// every mode.
func TestDefaultBackend_Int8Codes(t *testing.T) {
	t.Parallel()

	ctx := t.Context()
	emb, err := hash.New(hash.DefaultDim)
	require.NoError(t, err)
	recs := benchRecords(6000, "c1") // ~12k child vectors: past the codes scan's threshold
	mems := map[string]*Memory{}
	for _, spec := range []string{DefaultBackend, "inmem:none"} {
		m, err := New(ctx, emb, WithBackend(spec))
		require.NoError(t, err)
		t.Cleanup(func() { m.Close() })
		for lo := 0; lo < len(recs); lo += 1000 {
			_, err := m.AddBatch(ctx, recs[lo:lo+1000])
			require.NoError(t, err)
		}
		mems[spec] = m
	}
	assert.Equal(t, fmt.Sprintf("inmem:int8,cols,ivf=%d,nprobe=%d", DefaultANNMin, DefaultANNProbes), mems[DefaultBackend].vecs["c1"].Spec(),
		"int8 codes, by columns too (a lexical embedder), and the approximate stage from DefaultANNMin vectors")
	assert.Equal(t, "inmem:none", mems["inmem:none"].vecs["c1"].Spec())
	for _, text := range []string{"when did we move the database", "OPS-1234", "服务器账单是多少", "the customer invoice last week"} {
		for _, mode := range []Mode{Hybrid, VectorOnly, KeywordOnly} {
			for _, k := range []int{1, 10, 50} {
				q := Query{Text: text, Namespace: "c1", Mode: mode, K: k}
				want, err := mems["inmem:none"].Query(ctx, q)
				require.NoError(t, err)
				got, err := mems[DefaultBackend].Query(ctx, q)
				require.NoError(t, err)
				require.NotEmpty(t, want)
				assert.Equal(t, want, got, "%q mode=%s k=%d", text, mode, k)
			}
		}
	}
}
