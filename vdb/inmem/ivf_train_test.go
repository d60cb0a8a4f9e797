package inmem_test

import (
	"bytes"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/internal/testvec"
	"github.com/agentmem/agentmem/vdb/inmem"
)

// gate holds a training at a step until released.
type gate struct {
	reached chan struct{} // closed when the training reaches the step
	release chan struct{}
	once    sync.Once
}

func holdAt(x *inmem.IVF, step string) *gate {
	g := &gate{reached: make(chan struct{}), release: make(chan struct{})}
	x.SetTrainHook(func(s string) {
		if s == step {
			g.once.Do(func() { close(g.reached) })
			<-g.release
		}
	})
	return g
}

// TestIVF_TrainsInBackground: the Add that reaches MinRows returns while
// the index trains; searches (exact meanwhile) and writes (adds,
// replacements, deletes) go on during the training, and the index
// installed afterwards holds every row of the DB exactly once, with its
// current code, in its nearest list; with every list probed it is exact.
func TestIVF_TrainsInBackground(t *testing.T) {
	t.Parallel()

	const dim, n = 32, 3000
	cs := centres(41, 30, dim)
	p := newIVFPair(t, dim, inmem.IVFConfig{MinRows: n, ListRows: 100, Probes: 1 << 20})
	ctx := t.Context()
	p.add(t, testvec.IDs(0, n-1), testvec.Clustered(42, n-1, cs, 0.6))
	// The training waits after its snapshot until the writers are under
	// way, and before it installs its index until they are done: over
	// ivfCatchUp rows are then to redo, some without the lock.
	g := &gate{reached: make(chan struct{}), release: make(chan struct{})}
	written := make(chan struct{})
	var caughtUp atomic.Int32
	p.ivf.SetTrainHook(func(s string) {
		switch s {
		case "snapshot":
			close(g.reached)
			<-g.release
		case "filled":
			<-written
		case "caught up":
			caughtUp.Add(1)
		}
	})
	require.NoError(t, p.ivf.Add(ctx, []int64{n - 1}, testvec.Clustered(43, 1, cs, 0.6)))
	require.NoError(t, p.exact.Add(ctx, []int64{n - 1}, testvec.Clustered(43, 1, cs, 0.6)))
	<-g.reached
	assert.True(t, p.ivf.Training())
	assert.Zero(t, p.ivf.Lists(), "no index until the training ends")
	qs := testvec.Clustered(44, 20, cs, 0.6)
	p.checkExact(t, qs, "while training")

	// Writers on both copies (each id's writes in one goroutine, so the
	// copies agree), readers on the IVF; the training is let go midway.
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			vs := testvec.Clustered(uint64(50+w), 1200, cs, 0.6)
			for i := range 1200 {
				id := int64(n + w*2000 + i)
				old := int64(w*1500 + i) // replaced, then some deleted
				assert.NoError(t, p.exact.Add(ctx, []int64{id, old}, [][]float32{vs[i], vs[(i+7)%1200]}))
				assert.NoError(t, p.ivf.Add(ctx, []int64{id, old}, [][]float32{vs[i], vs[(i+7)%1200]}))
				if i%4 == 0 {
					_, err := p.exact.Delete(ctx, old, id-2)
					assert.NoError(t, err)
					_, err = p.ivf.Delete(ctx, old, id-2)
					assert.NoError(t, err)
				}
				if w == 0 && i == 300 {
					close(g.release)
				}
			}
		})
	}
	for w := range 2 {
		wg.Go(func() {
			for _, q := range testvec.Clustered(uint64(60+w), 200, cs, 0.6) {
				res, err := p.ivf.Search(ctx, q, 10)
				assert.NoError(t, err)
				assert.Len(t, res, 10)
			}
		})
	}
	wg.Wait()
	close(written)
	require.NoError(t, p.ivf.WaitTrained(ctx))
	assert.Positive(t, caughtUp.Load(), "rows redone without the lock")
	assert.False(t, p.ivf.Training())
	require.Positive(t, p.ivf.Lists())
	require.Equal(t, p.exact.Len(), p.ivf.Len())
	require.NoError(t, p.ivf.CheckIndex())
	p.checkExact(t, qs, "trained during writes")
}

// TestIVF_CloseDuringTraining: Close stops a training and waits for its
// goroutine: none is left, and no index appears.
func TestIVF_CloseDuringTraining(t *testing.T) {
	const dim, n = 32, 4000
	before := runtime.NumGoroutine()
	for _, step := range []string{"snapshot", "trained", "assigned"} {
		x, err := inmem.NewIVF(dim, inmem.IVFConfig{MinRows: n, ListRows: 100}, inmem.WithCodes(inmem.Int8))
		require.NoError(t, err)
		g := holdAt(x, step)
		require.NoError(t, x.Add(t.Context(), testvec.IDs(0, n), testvec.Unit(70, n, dim)))
		<-g.reached
		closed := make(chan error)
		go func() { closed <- x.Close() }()
		select {
		case <-closed:
			t.Fatalf("%s: Close returned before the training stopped", step)
		case <-time.After(20 * time.Millisecond):
		}
		close(g.release)
		require.NoError(t, <-closed)
		assert.Zero(t, x.Lists(), step)
		assert.False(t, x.Training(), step)
		require.NoError(t, x.WaitTrained(t.Context()))
	}
	// Goroutines of other tests' may still be ending: wait a little.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "no goroutine left")
}

// TestIVF_ImportTrainsInBackground: Import returns with the rows loaded
// and searches exact while the index trains; Export meanwhile writes the
// rows; once trained, the index is the one an Add of the same rows
// trains (the training is a function of the rows).
func TestIVF_ImportTrainsInBackground(t *testing.T) {
	t.Parallel()

	const dim, n = 48, 5000
	cs := centres(80, 40, dim)
	cfg := inmem.IVFConfig{MinRows: 4000, ListRows: 200, Probes: 3}
	p := newIVFPair(t, dim, cfg)
	p.add(t, testvec.IDs(0, n), testvec.Clustered(81, n, cs, 0.5))
	var buf bytes.Buffer
	require.NoError(t, p.ivf.Export(t.Context(), &buf))
	stream := buf.Bytes()

	fresh, err := inmem.NewIVF(dim, cfg, inmem.WithCodes(inmem.Int8))
	require.NoError(t, err)
	defer fresh.Close()
	g := holdAt(fresh, "assigned")
	require.NoError(t, fresh.Import(t.Context(), bytes.NewReader(stream)))
	<-g.reached
	assert.Equal(t, n, fresh.Len())
	assert.Zero(t, fresh.Lists())
	qs := testvec.Clustered(82, 20, cs, 0.5)
	ivfPair{p.exact, fresh}.checkExact(t, qs, "imported, training")
	var again bytes.Buffer
	require.NoError(t, fresh.Export(t.Context(), &again))
	assert.Equal(t, stream, again.Bytes(), "Export during training")
	close(g.release)
	require.NoError(t, fresh.WaitTrained(t.Context()))
	require.NoError(t, fresh.CheckIndex())
	assert.Equal(t, p.ivf.Index(), fresh.Index())

	// IVFConfig.Sync: the index is there when Import returns, the same.
	sync := cfg
	sync.Sync = true
	inline, err := inmem.NewIVF(dim, sync, inmem.WithCodes(inmem.Int8))
	require.NoError(t, err)
	defer inline.Close()
	require.NoError(t, inline.Import(t.Context(), bytes.NewReader(stream)))
	assert.False(t, inline.Training())
	assert.Equal(t, p.ivf.Index(), inline.Index())
	for _, q := range qs {
		want, err := p.ivf.Search(t.Context(), q, 10)
		require.NoError(t, err)
		got, err := inline.Search(t.Context(), q, 10)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
}

// TestIVF_ImportStopsTraining: an Import while a training runs stops it
// (its rows are gone) and trains on the imported rows.
func TestIVF_ImportStopsTraining(t *testing.T) {
	t.Parallel()

	const dim, n = 32, 3000
	cfg := inmem.IVFConfig{MinRows: 2000, ListRows: 100, Probes: 1 << 20}
	src, err := inmem.NewIVF(dim, cfg, inmem.WithCodes(inmem.Int8))
	require.NoError(t, err)
	defer src.Close()
	require.NoError(t, src.Add(t.Context(), testvec.IDs(10_000, n), testvec.Unit(90, n, dim)))
	var buf bytes.Buffer
	require.NoError(t, src.Export(t.Context(), &buf))

	p := newIVFPair(t, dim, cfg)
	g := holdAt(p.ivf, "trained")
	require.NoError(t, p.ivf.Add(t.Context(), testvec.IDs(0, n), testvec.Unit(91, n, dim)))
	<-g.reached
	require.NoError(t, p.ivf.Import(t.Context(), bytes.NewReader(buf.Bytes())))
	require.NoError(t, p.exact.Import(t.Context(), bytes.NewReader(buf.Bytes())))
	close(g.release)
	require.NoError(t, p.ivf.WaitTrained(t.Context()))
	require.Positive(t, p.ivf.Lists())
	require.NoError(t, p.ivf.CheckIndex())
	p.checkExact(t, testvec.Unit(92, 10, dim), "imported during a training")
}

// TestIVF_RetrainKeepsIndex: while the index is retrained (the database
// has doubled), searches use the previous one, kept up to date by the
// writes; the new one replaces it with every row once.
func TestIVF_RetrainKeepsIndex(t *testing.T) {
	t.Parallel()

	const dim = 32
	cs := centres(100, 30, dim)
	p := newIVFPair(t, dim, inmem.IVFConfig{MinRows: 2000, ListRows: 100, Probes: 1 << 20})
	p.add(t, testvec.IDs(0, 2000), testvec.Clustered(101, 2000, cs, 0.6))
	before := p.ivf.Lists()
	require.Positive(t, before)
	g := holdAt(p.ivf, "assigned")
	require.NoError(t, p.exact.Add(t.Context(), testvec.IDs(2000, 2000), testvec.Clustered(102, 2000, cs, 0.6)))
	require.NoError(t, p.ivf.Add(t.Context(), testvec.IDs(2000, 2000), testvec.Clustered(102, 2000, cs, 0.6)))
	<-g.reached
	assert.Equal(t, before, p.ivf.Lists(), "the previous index serves")
	require.NoError(t, p.ivf.CheckIndex(), "the previous index holds the rows added since")
	qs := testvec.Clustered(103, 20, cs, 0.6)
	p.checkExact(t, qs, "retraining")
	// Writes while the new index is filled: replacements and deletes.
	require.NoError(t, p.exact.Add(t.Context(), testvec.IDs(0, 300), testvec.Clustered(104, 300, cs, 0.6)))
	require.NoError(t, p.ivf.Add(t.Context(), testvec.IDs(0, 300), testvec.Clustered(104, 300, cs, 0.6)))
	_, err := p.exact.Delete(t.Context(), testvec.IDs(3000, 200)...)
	require.NoError(t, err)
	_, err = p.ivf.Delete(t.Context(), testvec.IDs(3000, 200)...)
	require.NoError(t, err)
	require.NoError(t, p.ivf.CheckIndex())
	close(g.release)
	require.NoError(t, p.ivf.WaitTrained(t.Context()))
	assert.Greater(t, p.ivf.Lists(), before, "retrained at twice the size")
	require.NoError(t, p.ivf.CheckIndex())
	p.checkExact(t, qs, "retrained")
}
