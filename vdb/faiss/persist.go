//go:build faiss

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
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"runtime"
	"unsafe"

	"github.com/agentmem/agentmem/vdb"
)

// Stream format (all integers little-endian). Faiss' own serialization
// (write_index) is wrapped in a header that [Index.Import] checks before it
// lets Faiss parse anything, in this order: magic, version, header checksum,
// dimension, factory string; then the Faiss bytes' checksum before
// read_index sees them. A stream that does not pass these checks never
// reaches Faiss.
//
//	magic       8 bytes "AMFAISS\x00"
//	version     uint32 (formatVersion)
//	dim         uint32
//	metric      uint32 (1: inner product on unit vectors)
//	flags       uint32 (bit 0: a label table follows the Faiss bytes)
//	factoryLen  uint32, then the canonical factory string
//	blobLen     uint64
//	headerCRC   uint32, CRC-32C of everything above
//	blob        blobLen bytes of faiss::write_index output
//	blobCRC     uint32, CRC-32C of blob
//	if flags&1 (tombstoned index, e.g. HNSW):
//	  nlabels   uint64
//	  labels    nlabels × int64 (the ID stored under each Faiss label, -1 if dead)
//	  tableCRC  uint32, CRC-32C of nlabels and labels
const (
	magic         = "AMFAISS\x00"
	formatVersion = 1
	metricIP      = 1
	flagLabels    = 1
	maxFactoryLen = 1024
	maxBlobLen    = 1 << 40
	chunkSize     = 1 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Export writes the index to w: our header, then Faiss' own serialization.
// The index is serialized into C memory under the read lock (searches go on;
// writers wait), then written to w without holding the lock.
func (ix *Index) Export(ctx context.Context, w io.Writer) error {
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
	err := cerr("export", C.shim_write(ix.h, &buf, &data, &size))
	runtime.KeepAlive(ix)
	var labels []int64
	tombstoned := ix.tomb != nil
	if tombstoned {
		labels = append([]int64(nil), ix.tomb.slots...)
	}
	ix.mu.RUnlock()
	if err != nil {
		return err
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

// Import replaces the index's contents with a stream [Index.Export] wrote.
// The stream must come from an Index of the same dimension (else the error
// wraps [vdb.ErrDimension]) and factory string ([ErrFactory]); a truncated or
// damaged stream fails with [vdb.ErrCorrupt], one of an unknown format with
// [vdb.ErrVersion]. On error the index is unchanged. The stream is read and
// parsed without holding the lock; only the swap takes the write lock.
// Search options (nprobe, efSearch) of this Index apply to the loaded index.
func (ix *Index) Import(ctx context.Context, r io.Reader) error {
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

// reader reads exact sizes, keeps a running checksum and turns a short
// stream into vdb.ErrCorrupt.
type reader struct {
	r   io.Reader
	crc hash.Hash32
}

func (rd *reader) full(p []byte, what string) error {
	if _, err := io.ReadFull(rd.r, p); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("faiss: import: %w: stream ends in the %s", vdb.ErrCorrupt, what)
		}
		return fmt.Errorf("faiss: import: reading the %s: %w", what, err)
	}
	rd.crc.Write(p)
	return nil
}

func (rd *reader) u32(what string) (uint32, error) {
	var b [4]byte
	err := rd.full(b[:], what)
	return binary.LittleEndian.Uint32(b[:]), err
}

func (rd *reader) u64(what string) (uint64, error) {
	var b [8]byte
	err := rd.full(b[:], what)
	return binary.LittleEndian.Uint64(b[:]), err
}

// checkCRC reads a stored CRC-32C and compares it with the running one,
// then starts a new section.
func (rd *reader) checkCRC(what string) error {
	sum := rd.crc.Sum32()
	var b [4]byte
	if err := rd.full(b[:], what+" checksum"); err != nil {
		return err
	}
	if got := binary.LittleEndian.Uint32(b[:]); got != sum {
		return fmt.Errorf("faiss: import: %w: %s checksum mismatch (stored %08x, computed %08x)", vdb.ErrCorrupt, what, got, sum)
	}
	rd.crc.Reset()
	return nil
}

// decode reads one stream into a new handle (owned by the caller) and its
// label table. Nothing of ix but immutable fields is used.
func (ix *Index) decode(ctx context.Context, r io.Reader) (*C.shim_index, *tombstones, error) {
	rd := &reader{r: r, crc: crc32.New(castagnoli)}
	var m [len(magic)]byte
	if err := rd.full(m[:], "magic"); err != nil {
		return nil, nil, err
	}
	if string(m[:]) != magic {
		return nil, nil, fmt.Errorf("faiss: import: %w: not a Faiss index stream of agentmem (magic %q)", vdb.ErrVersion, m[:])
	}
	version, err := rd.u32("version")
	if err != nil {
		return nil, nil, err
	}
	if version != formatVersion {
		return nil, nil, fmt.Errorf("faiss: import: %w: format version %d, this build reads %d", vdb.ErrVersion, version, formatVersion)
	}
	var fixed [4]uint32
	for i, what := range []string{"dimension", "metric", "flags", "factory length"} {
		if fixed[i], err = rd.u32(what); err != nil {
			return nil, nil, err
		}
	}
	dim, metric, flags, flen := fixed[0], fixed[1], fixed[2], fixed[3]
	if flen > maxFactoryLen {
		return nil, nil, fmt.Errorf("faiss: import: %w: factory string of %d bytes", vdb.ErrCorrupt, flen)
	}
	factory := make([]byte, flen)
	if err := rd.full(factory, "factory string"); err != nil {
		return nil, nil, err
	}
	blobLen, err := rd.u64("index size")
	if err != nil {
		return nil, nil, err
	}
	if err := rd.checkCRC("header"); err != nil {
		return nil, nil, err
	}
	switch {
	case int(dim) != ix.dim:
		return nil, nil, fmt.Errorf("faiss: import: %w: stream has dimension %d, index %d", vdb.ErrDimension, dim, ix.dim)
	case string(factory) != ix.canonical:
		return nil, nil, fmt.Errorf("faiss: import: %w: stream was written by %q, index is %q", ErrFactory, factory, ix.canonical)
	case metric != metricIP || flags&^flagLabels != 0 || blobLen > maxBlobLen:
		return nil, nil, fmt.Errorf("faiss: import: %w: metric %d, flags %#x, index size %d", vdb.ErrCorrupt, metric, flags, blobLen)
	}

	var (
		buf  *C.shim_buf
		data *C.uint8_t
	)
	if err := cerr("import", C.shim_buf_new(C.size_t(blobLen), &buf, &data)); err != nil {
		return nil, nil, err
	}
	defer C.shim_buf_free(buf)
	// C memory, filled by the io.Reader, which must not retain it.
	blob := unsafe.Slice((*byte)(unsafe.Pointer(data)), int(blobLen))
	for off := 0; off < len(blob); off += chunkSize {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if err := rd.full(blob[off:min(off+chunkSize, len(blob))], "Faiss index"); err != nil {
			return nil, nil, err
		}
	}
	if err := rd.checkCRC("Faiss index"); err != nil {
		return nil, nil, err
	}
	var h *C.shim_index
	if err := cerr("read_index", C.shim_read(buf, C.int32_t(ix.dim), &h)); err != nil {
		return nil, nil, fmt.Errorf("faiss: import: %w: %w", vdb.ErrCorrupt, err)
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
func readLabels(rd *reader, ntotal int64) (*tombstones, error) {
	n, err := rd.u64("label count")
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
		if err := rd.full(b[:8*c], "label table"); err != nil {
			return nil, err
		}
		for i := range c {
			t.slots[off+i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
		}
		off += c
	}
	if err := rd.checkCRC("label table"); err != nil {
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
