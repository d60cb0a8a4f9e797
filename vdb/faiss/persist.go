//go:build faiss && cgo

package faiss

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"runtime"
	"unsafe"

	"github.com/agentmem/agentmem/internal/faissfmt"
	"github.com/agentmem/agentmem/vdb"
)

func (ix *Index) exportTo(ctx context.Context, w io.Writer) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ix.mu.RLock()
	if ix.h == nil {
		ix.mu.RUnlock()
		return errClosed()
	}
	var (
		buf  *C.shim_buf
		data *C.uint8_t
		size C.size_t
	)
	err := cerr(C.shim_write(ix.h, &buf, &data, &size))
	runtime.KeepAlive(ix)
	var labels []int64
	tombstoned := ix.tomb != nil
	if tombstoned {
		labels = append([]int64(nil), ix.tomb.slots...)
	}
	ix.mu.RUnlock()
	if err != nil {
		return fmt.Errorf("faiss: export: %w", err)
	}
	defer C.shim_buf_free(buf)
	// C memory, read only while buf is alive; io.Writer must not retain it.
	blob := unsafe.Slice((*byte)(unsafe.Pointer(data)), int(size))

	var hdr bytes.Buffer
	hdr.WriteString(magic)
	le := binary.LittleEndian
	var flags uint32
	if tombstoned {
		flags |= flagLabels
	}
	hdr.Write(le.AppendUint32(nil, formatVersion))
	hdr.Write(le.AppendUint32(nil, uint32(ix.dim)))
	hdr.Write(le.AppendUint32(nil, metricIP))
	hdr.Write(le.AppendUint32(nil, flags))
	hdr.Write(le.AppendUint32(nil, uint32(len(ix.canonical))))
	hdr.WriteString(ix.canonical)
	hdr.Write(le.AppendUint64(nil, uint64(len(blob))))
	hdr.Write(le.AppendUint32(nil, crc32.Checksum(hdr.Bytes(), castagnoli)))
	if _, err := w.Write(hdr.Bytes()); err != nil {
		return fmt.Errorf("faiss: export: %w", err)
	}
	for off := 0; off < len(blob); off += chunkSize {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := w.Write(blob[off:min(off+chunkSize, len(blob))]); err != nil {
			return fmt.Errorf("faiss: export: %w", err)
		}
	}
	tail := le.AppendUint32(nil, crc32.Checksum(blob, castagnoli))
	if tombstoned {
		table := le.AppendUint64(nil, uint64(len(labels)))
		for _, l := range labels {
			table = le.AppendUint64(table, uint64(l))
		}
		tail = append(tail, table...)
		tail = le.AppendUint32(tail, crc32.Checksum(table, castagnoli))
	}
	if _, err := w.Write(tail); err != nil {
		return fmt.Errorf("faiss: export: %w", err)
	}
	return nil
}

func (ix *Index) importFrom(ctx context.Context, r io.Reader) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ix.mu.RLock()
	closed := ix.h == nil
	ix.mu.RUnlock()
	if closed {
		return errClosed()
	}
	h, tomb, err := ix.decode(ctx, r)
	if err != nil {
		return err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.h == nil {
		C.shim_free(h)
		return errClosed()
	}
	if err := ix.configure(h, ix.cfg); err != nil {
		C.shim_free(h)
		return err
	}
	ix.cleanup.Stop()
	C.shim_free(ix.h)
	ix.attach(h)
	ix.tomb = tomb
	return nil
}

// decode reads one stream into a new handle (owned by the caller) and its
// label table. Nothing of ix but immutable fields is used.
func (ix *Index) decode(ctx context.Context, r io.Reader) (*C.shim_index, *tombstones, error) {
	rd := faissfmt.NewReader(r)
	hdr, err := rd.Header()
	if err != nil {
		return nil, nil, err
	}
	dim, factory, metric, flags, blobLen := hdr.Dim, hdr.Factory, hdr.Metric, hdr.Flags, hdr.BlobLen
	switch {
	case dim != ix.dim:
		return nil, nil, fmt.Errorf("faiss: import: %w: stream has dimension %d, index %d", vdb.ErrDimension, dim, ix.dim)
	case factory != ix.canonical:
		return nil, nil, fmt.Errorf("faiss: import: %w: stream was written by %q, index is %q", ErrFactory, factory, ix.canonical)
	case metric != metricIP || flags&^flagLabels != 0 || blobLen > maxBlobLen:
		return nil, nil, fmt.Errorf("faiss: import: %w: metric %d, flags %#x, index size %d", vdb.ErrCorrupt, metric, flags, blobLen)
	}

	var (
		buf  *C.shim_buf
		data *C.uint8_t
	)
	if err := cerr(C.shim_buf_new(C.size_t(blobLen), &buf, &data)); err != nil {
		return nil, nil, fmt.Errorf("faiss: import: %w", err)
	}
	defer C.shim_buf_free(buf)
	// C memory, filled by the io.Reader, which must not retain it.
	blob := unsafe.Slice((*byte)(unsafe.Pointer(data)), int(blobLen))
	for off := 0; off < len(blob); off += chunkSize {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if err := rd.Full(blob[off:min(off+chunkSize, len(blob))], "Faiss index"); err != nil {
			return nil, nil, err
		}
	}
	if err := rd.CheckCRC("Faiss index"); err != nil {
		return nil, nil, err
	}
	var h *C.shim_index
	if err := cerr(C.shim_read(buf, C.int32_t(ix.dim), &h)); err != nil {
		return nil, nil, fmt.Errorf("faiss: import: Faiss cannot read the index: %w: %w", vdb.ErrCorrupt, err)
	}
	ok := false
	defer func() {
		if !ok {
			C.shim_free(h)
		}
	}()
	var in C.shim_info
	C.shim_stat(h, &in)
	if (in.removable == 0) != (flags&flagLabels != 0) {
		return nil, nil, fmt.Errorf("faiss: import: %w: label table flag does not match the index type", vdb.ErrCorrupt)
	}
	var tomb *tombstones
	if flags&flagLabels != 0 {
		if tomb, err = readLabels(rd, int64(in.ntotal)); err != nil {
			return nil, nil, err
		}
	}
	ok = true
	return h, tomb, nil
}

// readLabels reads a tombstoned index's label table, which must have one
// entry per Faiss vector and no live ID twice.
func readLabels(rd *faissfmt.Reader, ntotal int64) (*tombstones, error) {
	n, err := rd.U64("label count")
	if err != nil {
		return nil, err
	}
	if n != uint64(ntotal) {
		return nil, fmt.Errorf("faiss: import: %w: %d labels for %d vectors", vdb.ErrCorrupt, n, ntotal)
	}
	t := &tombstones{slots: make([]int64, n), live: make(map[int64]int64)}
	b := make([]byte, 8*min(n, chunkSize/8))
	for off := uint64(0); off < n; {
		c := min(n-off, uint64(len(b)/8))
		if err := rd.Full(b[:8*c], "label table"); err != nil {
			return nil, err
		}
		for i := range c {
			t.slots[off+i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
		}
		off += c
	}
	if err := rd.CheckCRC("label table"); err != nil {
		return nil, err
	}
	for slot, id := range t.slots {
		if id < -1 {
			return nil, fmt.Errorf("faiss: import: %w: label %d holds id %d", vdb.ErrCorrupt, slot, id)
		}
		if id == -1 {
			continue
		}
		if _, dup := t.live[id]; dup {
			return nil, fmt.Errorf("faiss: import: %w: id %d stored twice", vdb.ErrCorrupt, id)
		}
		t.live[id] = int64(slot)
	}
	return t, nil
}
