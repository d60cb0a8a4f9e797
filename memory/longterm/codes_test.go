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

// TestDefaultBackend_AllNamespaces: a search of every namespace (no
// Namespace) with the default backend, whose exact indexes are asked only
// for what can beat the best found so far in the namespaces searched
// before (vectorSearch's floor) and read the codes by columns, finds
// exactly what the plain float32 scan of each namespace finds.
func TestDefaultBackend_AllNamespaces(t *testing.T) {
	t.Parallel()

	ctx := t.Context()
	emb, err := hash.New(hash.DefaultDim)
	require.NoError(t, err)
	mems := map[string]*Memory{}
	for _, spec := range []string{DefaultBackend, "inmem:none"} {
		m, err := New(ctx, emb, WithBackend(spec))
		require.NoError(t, err)
		t.Cleanup(func() { m.Close() })
		for i := range 12 {
			// Namespaces of 100 to 1,200 records: some below, some past
			// the column scan's size.
			_, err := m.AddBatch(ctx, benchRecords(100*(i+1), fmt.Sprintf("ns%02d", i)))
			require.NoError(t, err)
		}
		mems[spec] = m
	}
	found := 0
	for _, text := range []string{"when did we move the database", "OPS-1234", "服务器账单是多少", "the customer invoice last week", "Priya"} {
		for _, mode := range []Mode{Hybrid, VectorOnly} {
			for _, k := range []int{1, 10, 50} {
				q := Query{Text: text, Mode: mode, K: k}
				want, err := mems["inmem:none"].Query(ctx, q)
				require.NoError(t, err)
				got, err := mems[DefaultBackend].Query(ctx, q)
				require.NoError(t, err)
				if len(want) > 0 {
					found++
				}
				assert.Equal(t, want, got, "%q mode=%s k=%d", text, mode, k)
			}
		}
	}
	assert.Greater(t, found, 20, "of 30 searches, most find something")
}
