//go:build faiss && cgo

package faiss

/*
#cgo CXXFLAGS: -std=c++17 -O2 -Wall
#cgo LDFLAGS: -lfaiss -lopenblas -lgomp -lstdc++ -lm
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/agentmem/agentmem/internal/errs"
	"github.com/agentmem/agentmem/vdb"
)

// index is what an Index of the cgo build keeps besides its configuration:
// the Faiss handle, under a lock.
type index struct {
	mu      sync.RWMutex
	h       *C.shim_index // nil once closed
	cleanup runtime.Cleanup
	info    facts       // refreshed after every change of h
	tomb    *tombstones // non-nil when the index cannot remove
}

// facts mirrors shim_info.
type facts struct {
	trained   bool
	removable bool
	ivf       bool
	nlist     int64
	ntotal    int64 // including dead vectors of a tombstoned index
}

// tombstones maps internal labels to IDs for an index that cannot remove.
type tombstones struct {
	slots []int64         // label → ID, or -1 once deleted or replaced
	live  map[int64]int64 // ID → label
}

func (t *tombstones) dead() int { return len(t.slots) - len(t.live) }

// newIndex makes the Index New returns, from a checked configuration.
func newIndex(dim int, c config) (*Index, error) {
	canonical, err := canonicalFactory(c.factory)
	if err != nil {
		return nil, err
	}
	cs := C.CString(canonical)
	defer C.free(unsafe.Pointer(cs))
	var h *C.shim_index
	if err := cerr(C.shim_new(C.int32_t(dim), cs, &h)); err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrFactory, c.factory, err)
	}
	ix := &Index{dim: dim, factory: c.factory, canonical: canonical, cfg: c}
	if err := ix.configure(h, c); err != nil {
		C.shim_free(h)
		return nil, err
	}
	ix.attach(h)
	if !ix.info.removable {
		ix.tomb = &tombstones{live: map[int64]int64{}}
	}
	return ix, nil
}

// maxFactorySize bounds every number in a factory string (list counts,
// links, code sizes).
const maxFactorySize = 1 << 24

var (
	hnswM  = regexp.MustCompile(`HNSW(\d+)`)
	pqBits = regexp.MustCompile(`PQ\d+x(\d+)`)
)

// canonicalFactory removes spaces and a leading IDMap from a factory string
// and rejects strings no Faiss index could come from.
func canonicalFactory(s string) (string, error) {
	c := strings.ReplaceAll(s, " ", "")
	for _, p := range []string{"IDMap2,", "IDMap,"} {
		if rest, ok := strings.CutPrefix(c, p); ok {
			c = rest
			break
		}
	}
	if c == "" || len(c) > maxFactoryLen {
		return "", fmt.Errorf("%w %q: want a Faiss index-factory string such as %q or %q",
			ErrFactory, s, "Flat", "HNSW32,Flat")
	}
	// Faiss 1.7.3 checks factory strings loosely, and some that it accepts
	// kill the process when used. Found by trying them: "IVF0,Flat" aborts
	// on an assertion, "HNSW0,Flat" segfaults, "PQ0" and "PQ4x64" divide by
	// zero, "HNSW1,Flat" never returns from Add, "HNSW99999999,Flat" tries
	// to allocate without end. Refuse those shapes. This is a guard against
	// mistakes, not a sandbox: a factory string is configuration to trust,
	// not input from strangers.
	for f := range strings.FieldsFuncSeq(c, func(r rune) bool { return r < '0' || r > '9' }) {
		if n, err := strconv.Atoi(f); err != nil || n <= 0 || n > maxFactorySize {
			return "", fmt.Errorf("%w %q: sizes must be between 1 and %d", ErrFactory, s, maxFactorySize)
		}
	}
	for _, m := range hnswM.FindAllStringSubmatch(c, -1) {
		if n, _ := strconv.Atoi(m[1]); n < 2 || n > 512 {
			return "", fmt.Errorf("%w %q: HNSW needs 2 to 512 links per node", ErrFactory, s)
		}
	}
	for _, m := range pqBits.FindAllStringSubmatch(c, -1) {
		if n, _ := strconv.Atoi(m[1]); n > 16 {
			return "", fmt.Errorf("%w %q: at most 16 bits per PQ code", ErrFactory, s)
		}
	}
	return c, nil
}

// configure applies the search-time options of c to h, a handle nobody
// else uses at the moment (a new one, or ix.h under the write lock).
func (ix *Index) configure(h *C.shim_index, c config) error {
	set := func(name string, v int) error {
		if v == 0 {
			return nil
		}
		cs := C.CString(name)
		defer C.free(unsafe.Pointer(cs))
		if err := cerr(C.shim_set_param(h, cs, C.double(v))); err != nil {
			return fmt.Errorf("%w: %s does not apply to %q: %w", ErrFactory, name, ix.factory, err)
		}
		return nil
	}
	if err := set("nprobe", c.nprobe); err != nil {
		return err
	}
	return set("efSearch", c.efSearch)
}

// attach makes h the index's handle, with a cleanup as a safety net. The
// caller holds the write lock (or is New).
func (ix *Index) attach(h *C.shim_index) {
	ix.h = h
	ix.cleanup = runtime.AddCleanup(ix, func(h *C.shim_index) { C.shim_free(h) }, h)
	ix.refresh()
}

// refresh reads the handle's facts after a change. The caller holds the
// write lock.
func (ix *Index) refresh() {
	var in C.shim_info
	C.shim_stat(ix.h, &in)
	runtime.KeepAlive(ix)
	ix.info = facts{
		trained:   in.is_trained != 0,
		removable: in.removable != 0,
		ivf:       in.ivf != 0,
		nlist:     int64(in.nlist),
		ntotal:    int64(in.ntotal),
	}
}

// cerr turns a shim error string, which came from the same cgo call, into an
// error and frees it. The caller says what failed; the error is Faiss'
// message without its "Error in <C++ signature> at <file>:<line>: " prefix.
func cerr(s *C.char) error {
	if s == nil {
		return nil
	}
	defer C.free(unsafe.Pointer(s))
	return errors.New(faissMessage(C.GoString(s)))
}

// setParam changes the search parameter name ("nprobe" or "efSearch").
func (ix *Index) setParam(name string, n int) error {
	field := &ix.cfg.nprobe
	if name == "efSearch" {
		field = &ix.cfg.efSearch
	}
	if n <= 0 {
		return fmt.Errorf("faiss: %s %d must be positive: %w", name, n, errs.InvalidArgument)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.h == nil {
		return errClosed()
	}
	old := *field
	*field = n
	if err := ix.configure(ix.h, ix.cfg); err != nil {
		*field = old
		return err
	}
	runtime.KeepAlive(ix)
	return nil
}

func (ix *Index) liveLen() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.lenLocked()
}

func (ix *Index) lenLocked() int {
	if ix.h == nil {
		return 0
	}
	if ix.tomb != nil {
		return len(ix.tomb.live)
	}
	return int(ix.info.ntotal)
}

func (ix *Index) trained() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.h != nil && ix.info.trained
}

func (ix *Index) close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.h == nil {
		return nil
	}
	ix.cleanup.Stop() // before freeing, so the cleanup can never free twice
	C.shim_free(ix.h)
	ix.h = nil
	ix.tomb = nil
	return nil
}

func cbool(b bool) C.int32_t {
	if b {
		return 1
	}
	return 0
}

// setBLASThreshold sets Faiss' process-wide BLAS threshold (see shim.h).
func setBLASThreshold(n int) int { return int(C.shim_blas_threshold(C.int32_t(n))) }

func errClosed() error { return fmt.Errorf("faiss: %w", vdb.ErrClosed) }

// flatten checks and normalises vecs into one contiguous buffer, the layout
// Faiss takes.
func (ix *Index) flatten(vecs [][]float32) ([]float32, error) {
	d := ix.dim
	buf := make([]float32, len(vecs)*d)
	for i, v := range vecs {
		if len(v) != d {
			return nil, fmt.Errorf("faiss: vector %d: %w: got %d, want %d", i, vdb.ErrDimension, len(v), d)
		}
		if err := vdb.Normalize(buf[i*d:(i+1)*d], v); err != nil {
			return nil, fmt.Errorf("faiss: vector %d: %w", i, err)
		}
	}
	return buf, nil
}

func (ix *Index) train(ctx context.Context, vecs [][]float32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	x, err := ix.flatten(vecs)
	if err != nil {
		return err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.h == nil {
		return errClosed()
	}
	return ix.trainLocked(x, len(vecs))
}

func (ix *Index) trainLocked(x []float32, n int) error {
	if ix.info.trained {
		return nil
	}
	if n == 0 {
		return fmt.Errorf("faiss: train %q: no vectors", ix.factory)
	}
	if ix.info.nlist > 0 && int64(n) < ix.info.nlist {
		return fmt.Errorf("faiss: train %q: %d vectors for %d lists: need at least one per list",
			ix.factory, n, ix.info.nlist)
	}
	err := cerr(C.shim_train(ix.h, C.int64_t(n), (*C.float)(&x[0]), C.int32_t(ix.cfg.threads)))
	runtime.KeepAlive(ix)
	ix.refresh()
	if err != nil {
		return fmt.Errorf("faiss: train %q: %w", ix.factory, err)
	}
	return nil
}

// trainSize is how many vectors an untrained index trains on automatically.
func (ix *Index) trainSize() int {
	switch {
	case ix.cfg.trainSize > 0:
		return ix.cfg.trainSize
	case ix.info.nlist > 0:
		return int(39 * ix.info.nlist)
	default:
		return 1000
	}
}

func (ix *Index) add(ctx context.Context, ids []int64, vecs [][]float32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(ids) != len(vecs) {
		return fmt.Errorf("faiss: %w: %d ids for %d vectors", vdb.ErrInvalidID, len(ids), len(vecs))
	}
	for i, id := range ids {
		if id < 0 {
			return fmt.Errorf("faiss: %w: ids[%d] = %d is negative", vdb.ErrInvalidID, i, id)
		}
	}
	x, err := ix.flatten(vecs)
	if err != nil {
		return err
	}
	ids, x = dedupLast(ids, x, ix.dim)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.h == nil {
		return errClosed()
	}
	if len(ids) == 0 {
		return nil
	}
	if !ix.info.trained {
		if len(ids) < ix.trainSize() {
			return fmt.Errorf("%w: %q needs training: call Train with a sample, or make the first Add at least %d vectors (got %d)",
				ErrNotTrained, ix.factory, ix.trainSize(), len(ids))
		}
		if err := ix.trainLocked(x, len(ids)); err != nil {
			return err
		}
	}
	if ix.tomb != nil {
		return ix.addTombLocked(ids, x)
	}
	if ix.info.ntotal > 0 {
		// Faiss' id map and IVF lists accept duplicate ids: remove first,
		// so that the same ID replaces.
		if _, err := ix.removeLocked(ids); err != nil {
			return err
		}
	}
	err = cerr(C.shim_add(ix.h, C.int64_t(len(ids)), (*C.float)(&x[0]),
		(*C.int64_t)(unsafe.Pointer(&ids[0])), C.int32_t(ix.cfg.threads)))
	runtime.KeepAlive(ix)
	ix.refresh()
	if err != nil {
		return fmt.Errorf("faiss: add: %w", err)
	}
	return nil
}

func (ix *Index) addTombLocked(ids []int64, x []float32) error {
	t := ix.tomb
	base := int64(len(t.slots))
	labels := make([]int64, len(ids))
	for i := range labels {
		labels[i] = base + int64(i)
	}
	err := cerr(C.shim_add(ix.h, C.int64_t(len(ids)), (*C.float)(&x[0]),
		(*C.int64_t)(unsafe.Pointer(&labels[0])), C.int32_t(ix.cfg.threads)))
	runtime.KeepAlive(ix)
	ix.refresh()
	if err != nil {
		return fmt.Errorf("faiss: add: %w", err)
	}
	for i, id := range ids {
		if old, ok := t.live[id]; ok {
			t.slots[old] = -1
		}
		t.live[id] = labels[i]
		t.slots = append(t.slots, id)
	}
	return nil
}

// dedupLast keeps, for each ID, its last vector, in the order of those last
// occurrences. It returns its arguments when there is nothing to drop.
func dedupLast(ids []int64, x []float32, d int) ([]int64, []float32) {
	last := make(map[int64]int, len(ids))
	for i, id := range ids {
		last[id] = i
	}
	if len(last) == len(ids) {
		return slices.Clone(ids), x
	}
	outIDs := make([]int64, 0, len(last))
	outX := make([]float32, 0, len(last)*d)
	for i, id := range ids {
		if last[id] == i {
			outIDs = append(outIDs, id)
			outX = append(outX, x[i*d:(i+1)*d]...)
		}
	}
	return outIDs, outX
}

func (ix *Index) del(ctx context.Context, ids []int64) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.h == nil {
		return 0, errClosed()
	}
	if ix.tomb != nil {
		n := 0
		for _, id := range ids {
			if slot, ok := ix.tomb.live[id]; ok {
				ix.tomb.slots[slot] = -1
				delete(ix.tomb.live, id)
				n++
			}
		}
		return n, nil
	}
	valid := make([]int64, 0, len(ids))
	for _, id := range ids {
		if id >= 0 {
			valid = append(valid, id)
		}
	}
	if len(valid) == 0 || ix.info.ntotal == 0 {
		return 0, nil
	}
	return ix.removeLocked(valid)
}

func (ix *Index) removeLocked(ids []int64) (int, error) {
	var removed C.int64_t
	err := cerr(C.shim_remove(ix.h, C.int64_t(len(ids)),
		(*C.int64_t)(unsafe.Pointer(&ids[0])), &removed, C.int32_t(ix.cfg.threads)))
	runtime.KeepAlive(ix)
	ix.refresh()
	if err != nil {
		return int(removed), fmt.Errorf("faiss: remove: %w", err)
	}
	return int(removed), nil
}

func (ix *Index) search(ctx context.Context, query []float32, k int) ([]vdb.Result, error) {
	res, err := ix.searchBatch(ctx, [][]float32{query}, k)
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

func (ix *Index) searchBatch(ctx context.Context, queries [][]float32, k int) ([][]vdb.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if k <= 0 {
		return nil, fmt.Errorf("faiss: %w: got %d", vdb.ErrInvalidK, k)
	}
	x, err := ix.flatten(queries)
	if err != nil {
		return nil, err
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.h == nil {
		return nil, errClosed()
	}
	if len(queries) == 0 {
		return [][]vdb.Result{}, nil
	}
	return ix.searchLocked(x, len(queries), k)
}

// searchLocked runs nq normalised queries x. The caller holds a lock.
//
// Faiss returns its k best in an order of its own among equal scores, so
// the search asks for one more than needed and, when the k-th result ties
// with the last one returned, asks again for twice as many: the contract
// orders ties by ID and keeps the lowest IDs. A tombstoned index asks for
// the dead vectors on top. An IVF search whose probed lists hold fewer than k
// vectors (a small index), or an HNSW search whose graph walk found fewer
// than k, is repeated over every stored vector, so that k > Len() returns
// Len() results.
func (ix *Index) searchLocked(x []float32, nq, k int) ([][]vdb.Result, error) {
	out := make([][]vdb.Result, nq)
	live := ix.lenLocked()
	if live == 0 || !ix.info.trained {
		for i := range out {
			out[i] = []vdb.Result{}
		}
		return out, nil
	}
	kk := min(k, live)
	total := int(ix.info.ntotal)
	dead := total - live
	fetch := min(total, kk+dead+1)
	exhaustive := false
	pending := make([]int, nq)
	for i := range pending {
		pending[i] = i
	}
	d := ix.dim
	for len(pending) > 0 {
		q := x
		if len(pending) < nq {
			q = make([]float32, 0, len(pending)*d)
			for _, i := range pending {
				q = append(q, x[i*d:(i+1)*d]...)
			}
		}
		dist := make([]float32, len(pending)*fetch)
		labels := make([]int64, len(pending)*fetch)
		err := cerr(C.shim_search(ix.h, C.int64_t(len(pending)), (*C.float)(&q[0]), C.int64_t(fetch),
			(*C.float)(&dist[0]), (*C.int64_t)(unsafe.Pointer(&labels[0])), cbool(exhaustive), C.int32_t(ix.cfg.threads)))
		runtime.KeepAlive(ix)
		if err != nil {
			return nil, fmt.Errorf("faiss: search: %w", err)
		}
		next := pending[:0]
		scanAll := false
		for j, qi := range pending {
			res, lastScore, short := ix.collect(dist[j*fetch:(j+1)*fetch], labels[j*fetch:(j+1)*fetch])
			exhausted := short || fetch >= total
			switch {
			case len(res) >= kk && (exhausted || res[kk-1].Score > lastScore):
				out[qi] = slices.Clip(res[:kk])
			case short && !exhaustive && len(res) < kk:
				// The probed IVF lists or the HNSW graph walk ran dry.
				scanAll = true
				next = append(next, qi)
			case exhausted:
				out[qi] = slices.Clip(res[:min(kk, len(res))])
			default:
				next = append(next, qi)
			}
		}
		pending = next
		if scanAll {
			exhaustive = true
		} else {
			fetch = min(total, 2*fetch)
		}
	}
	return out, nil
}

// collect turns one query's raw Faiss answer into results sorted by the
// contract's order, dropping empty (-1) and dead labels. It returns the
// lowest raw score and whether Faiss returned fewer than asked (so that
// asking for more cannot help).
func (ix *Index) collect(dist []float32, labels []int64) (res []vdb.Result, lastScore float32, short bool) {
	res = make([]vdb.Result, 0, len(labels))
	for i, l := range labels {
		if l < 0 {
			short = true
			continue
		}
		lastScore = dist[i]
		id := l
		if ix.tomb != nil {
			if l >= int64(len(ix.tomb.slots)) {
				continue
			}
			id = ix.tomb.slots[l]
			if id < 0 {
				continue
			}
		}
		res = append(res, vdb.Result{ID: id, Score: dist[i]})
	}
	slices.SortFunc(res, func(a, b vdb.Result) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return res, lastScore, short
}
