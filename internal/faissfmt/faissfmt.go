// Package faissfmt reads the header of the stream vdb/faiss writes (its
// Index.Export: our header around Faiss' own serialization). It is pure Go
// and links no Faiss, so that package store can learn a saved index's
// type (the factory string) without linking the faiss backend, while
// vdb/faiss reads its streams with the same reader.
//
// Stream format (all integers little-endian). The header is checked before
// Faiss parses anything, in this order: magic, version, header checksum,
// dimension, factory string; then the Faiss bytes' checksum before
// read_index sees them. A stream that does not pass these checks never
// reaches Faiss.
//
//	magic       8 bytes "AMFAISS\x00"
//	version     uint32 (Version)
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
package faissfmt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"

	"github.com/agentmem/agentmem/internal/errs"
)

// The stream's constants.
const (
	Magic         = "AMFAISS\x00"
	Version       = 1
	MetricIP      = 1
	FlagLabels    = 1
	MaxFactoryLen = 1024
	MaxBlobLen    = 1 << 40
	// ChunkSize is how much of the Faiss bytes is read or written at a
	// time (between context checks).
	ChunkSize = 1 << 20
)

// DefaultFactory is the index-factory string of an index made without
// one: exact inner-product search over every stored vector.
const DefaultFactory = "IDMap,Flat"

// Castagnoli is the CRC-32C table of every checksum in the stream.
var Castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Header is a stream's header.
type Header struct {
	Dim     int    // vector dimension
	Factory string // index-factory string, without a leading "IDMap,"
	Metric  uint32
	Flags   uint32
	BlobLen uint64 // length of the Faiss bytes that follow
}

// ReadHeader reads and checks the header of a stream (magic, version,
// checksum). A stream from a newer format version is an error wrapping
// errs.Version; any other bad header (another magic, a short stream, a
// checksum mismatch) wraps errs.Corrupt.
func ReadHeader(r io.Reader) (Header, error) { return NewReader(r).Header() }

// Reader reads a stream's sections: exact sizes, with a running checksum
// that CheckCRC compares; a short stream is errs.Corrupt.
type Reader struct {
	r   io.Reader
	crc hash.Hash32
}

// NewReader returns a Reader at the start of a stream.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: r, crc: crc32.New(Castagnoli)}
}

// Header reads and checks the header (see [ReadHeader]); the reader is
// then at the Faiss bytes.
func (rd *Reader) Header() (Header, error) {
	var m [len(Magic)]byte
	if err := rd.Full(m[:], "magic"); err != nil {
		return Header{}, err
	}
	if string(m[:]) != Magic {
		return Header{}, fmt.Errorf("faiss: import: not a Faiss index stream of agentmem (magic %q): %w", m[:], errs.Corrupt)
	}
	version, err := rd.U32("version")
	if err != nil {
		return Header{}, err
	}
	switch {
	case version > Version:
		return Header{}, fmt.Errorf("faiss: import: format version %d, this build reads %d (upgrade agentmem): %w", version, Version, errs.Version)
	case version < Version:
		// No build ever wrote it: the stream is damaged, not new.
		return Header{}, fmt.Errorf("faiss: import: format version %d was never written: %w", version, errs.Corrupt)
	}
	var fixed [4]uint32
	for i, what := range []string{"dimension", "metric", "flags", "factory length"} {
		if fixed[i], err = rd.U32(what); err != nil {
			return Header{}, err
		}
	}
	if fixed[3] > MaxFactoryLen {
		return Header{}, fmt.Errorf("faiss: import: factory string of %d bytes: %w", fixed[3], errs.Corrupt)
	}
	factory := make([]byte, fixed[3])
	if err := rd.Full(factory, "factory string"); err != nil {
		return Header{}, err
	}
	blobLen, err := rd.U64("index size")
	if err != nil {
		return Header{}, err
	}
	if err := rd.CheckCRC("header"); err != nil {
		return Header{}, err
	}
	return Header{Dim: int(fixed[0]), Factory: string(factory), Metric: fixed[1], Flags: fixed[2], BlobLen: blobLen}, nil
}

// Full fills p, adding it to the running checksum; what names the section
// in errors.
func (rd *Reader) Full(p []byte, what string) error {
	if _, err := io.ReadFull(rd.r, p); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("faiss: import: stream ends in the %s: %w", what, errs.Corrupt)
		}
		return fmt.Errorf("faiss: import: reading the %s: %w", what, err)
	}
	rd.crc.Write(p)
	return nil
}

// U32 reads a little-endian uint32.
func (rd *Reader) U32(what string) (uint32, error) {
	var b [4]byte
	err := rd.Full(b[:], what)
	return binary.LittleEndian.Uint32(b[:]), err
}

// U64 reads a little-endian uint64.
func (rd *Reader) U64(what string) (uint64, error) {
	var b [8]byte
	err := rd.Full(b[:], what)
	return binary.LittleEndian.Uint64(b[:]), err
}

// CheckCRC reads a stored CRC-32C and compares it with the running one,
// then starts a new section.
func (rd *Reader) CheckCRC(what string) error {
	sum := rd.crc.Sum32()
	var b [4]byte
	if err := rd.Full(b[:], what+" checksum"); err != nil {
		return err
	}
	if got := binary.LittleEndian.Uint32(b[:]); got != sum {
		return fmt.Errorf("faiss: import: %s checksum mismatch (stored %08x, computed %08x): %w", what, got, sum, errs.Corrupt)
	}
	rd.crc.Reset()
	return nil
}
