package vdbtest_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/agentmem/agentmem/vdb"
	_ "github.com/agentmem/agentmem/vdb/inmem"
	"github.com/agentmem/agentmem/vdb/vdbtest"
)

// naive is the simplest backend that honours the vdb contract: a map of
// normalised vectors scanned and sorted on every search. It checks the suite
// against an implementation other than inmem, so that the suite's rules are
// the contract's and not one backend's habits.
type naive struct {
	dim    int
	mu     sync.RWMutex
	vecs   map[int64][]float32
	closed bool
	// noDelete makes Delete and replacing Adds unsupported.
	noDelete bool
}

var (
	_ vdb.VectorDatabase = (*naive)(nil)
	_ vdb.Persister      = (*naive)(nil)
)

func (n *naive) Dim() int { return n.dim }

func (n *naive) Len() int {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return len(n.vecs)
}

func (n *naive) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closed = true
	return nil
}

func (n *naive) Add(ctx context.Context, ids []int64, vecs [][]float32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(ids) != len(vecs) {
		return vdb.ErrInvalidID
	}
	staged := make([][]float32, len(ids))
	for i, id := range ids {
		if id < 0 {
			return vdb.ErrInvalidID
		}
		if err := vdb.CheckVector(vecs[i], n.dim); err != nil {
			return err
		}
		staged[i] = make([]float32, n.dim)
		if err := vdb.Normalize(staged[i], vecs[i]); err != nil {
			return err
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return vdb.ErrClosed
	}
	if n.noDelete {
		seen := map[int64]bool{}
		for _, id := range ids {
			if _, ok := n.vecs[id]; ok || seen[id] {
				return fmt.Errorf("naive: replace: %w", errors.ErrUnsupported)
			}
			seen[id] = true
		}
	}
	for i, id := range ids {
		n.vecs[id] = staged[i]
	}
	return nil
}

func (n *naive) Search(ctx context.Context, q []float32, k int) ([]vdb.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if k <= 0 {
		return nil, vdb.ErrInvalidK
	}
	if err := vdb.CheckVector(q, n.dim); err != nil {
		return nil, err
	}
	u := make([]float32, n.dim)
	_ = vdb.Normalize(u, q)
	n.mu.RLock()
	defer n.mu.RUnlock()
	if n.closed {
		return nil, vdb.ErrClosed
	}
	out := []vdb.Result{}
	for id, v := range n.vecs {
		var dot float32
		for i := range v {
			dot += u[i] * v[i]
		}
		out = append(out, vdb.Result{ID: id, Score: dot})
	}
	slices.SortFunc(out, func(a, b vdb.Result) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out[:min(k, len(out))], nil
}

func (n *naive) Delete(ctx context.Context, ids ...int64) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return 0, vdb.ErrClosed
	}
	if n.noDelete {
		return 0, errors.ErrUnsupported
	}
	c := 0
	for _, id := range ids {
		if _, ok := n.vecs[id]; ok {
			delete(n.vecs, id)
			c++
		}
	}
	return c, nil
}

// Stream: "NAIVEVDB" | version u32 | dim u32 | count u32 | records | crc u32.
func (n *naive) Export(ctx context.Context, w io.Writer) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	if n.closed {
		return vdb.ErrClosed
	}
	var b bytes.Buffer
	b.WriteString("NAIVEVDB")
	for _, x := range []uint32{1, uint32(n.dim), uint32(len(n.vecs))} {
		binary.Write(&b, binary.LittleEndian, x)
	}
	for _, id := range slices.Sorted(maps.Keys(n.vecs)) {
		binary.Write(&b, binary.LittleEndian, id)
		binary.Write(&b, binary.LittleEndian, n.vecs[id])
	}
	binary.Write(&b, binary.LittleEndian, crc32.ChecksumIEEE(b.Bytes()))
	_, err := w.Write(b.Bytes())
	return err
}

func (n *naive) Import(ctx context.Context, r io.Reader) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	n.mu.RLock()
	closed := n.closed
	n.mu.RUnlock()
	if closed {
		return vdb.ErrClosed
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if len(b) < 12 {
		return vdb.ErrCorrupt
	}
	if string(b[:8]) != "NAIVEVDB" {
		return vdb.ErrCorrupt
	}
	if binary.LittleEndian.Uint32(b[8:]) > 1 {
		return vdb.ErrVersion
	}
	if len(b) < 24 {
		return vdb.ErrCorrupt
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return vdb.ErrCorrupt
	}
	if int(binary.LittleEndian.Uint32(b[12:])) != n.dim {
		return vdb.ErrDimension
	}
	count := int(binary.LittleEndian.Uint32(b[16:]))
	rec := 8 + 4*n.dim
	if len(body) != 20+count*rec {
		return vdb.ErrCorrupt
	}
	vecs := make(map[int64][]float32, count)
	for i := range count {
		p := body[20+i*rec:]
		v := make([]float32, n.dim)
		for j := range v {
			v[j] = math.Float32frombits(binary.LittleEndian.Uint32(p[8+4*j:]))
		}
		vecs[int64(binary.LittleEndian.Uint64(p))] = v
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.vecs = vecs
	return nil
}

func openNaive(noDelete bool) vdbtest.Open {
	return func(t *testing.T, dim int) vdb.VectorDatabase {
		db := &naive{dim: dim, vecs: map[int64][]float32{}, noDelete: noDelete}
		t.Cleanup(func() { db.Close() })
		return db
	}
}

func TestRun_Naive(t *testing.T) {
	vdbtest.Run(t, openNaive(false))
}

// TestRun_NaiveNoDelete checks that the NoDelete option accepts a backend
// that cannot delete or replace.
func TestRun_NaiveNoDelete(t *testing.T) {
	vdbtest.Run(t, openNaive(true), vdbtest.NoDelete())
}

// TestRun_NaiveApproximate checks that Approximate accepts an exact backend
// (recall 1).
func TestRun_NaiveApproximate(t *testing.T) {
	vdbtest.Run(t, openNaive(false), vdbtest.Approximate(0.99))
}

// noPersist hides naive's Persister: the suite must then expect
// errors.ErrUnsupported from vdb.Save and vdb.Load.
type noPersist struct{ vdb.VectorDatabase }

func TestRun_NaiveWithoutPersister(t *testing.T) {
	vdbtest.Run(t, func(t *testing.T, dim int) vdb.VectorDatabase {
		return noPersist{openNaive(false)(t, dim)}
	})
}

// TestRunSpec_Inmem runs the suite on inmem opened through the registry, as
// a program opens it: vdb.Open(ctx, "inmem", …).
func TestRunSpec_Inmem(t *testing.T) {
	vdbtest.RunSpec(t, "inmem")
}
