package faiss

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"

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

// Header describes a stream written by [Index.Export].
type Header struct {
	Dim     int    // vector dimension
	Factory string // index-factory string, without a leading "IDMap,"

	metric, flags uint32
	blobLen       uint64
}

// ReadHeader reads and checks the header of a stream written by
// [Index.Export] (magic, version, checksum), so that a program can learn
// which index to make before importing, e.g. to reopen a saved index with the
// factory string it was built with. It reads only the header and works in
// every build, with or without the faiss tag. A stream from a newer format
// version is an error wrapping [vdb.ErrVersion]; any other bad header
// (another magic, a short stream, a checksum mismatch) wraps
// [vdb.ErrCorrupt].
func ReadHeader(r io.Reader) (Header, error) {
	return readHeader(&reader{r: r, crc: crc32.New(castagnoli)})
}

func readHeader(rd *reader) (Header, error) {
	var m [len(magic)]byte
	if err := rd.full(m[:], "magic"); err != nil {
		return Header{}, err
	}
	if string(m[:]) != magic {
		return Header{}, fmt.Errorf("faiss: import: not a Faiss index stream of agentmem (magic %q): %w", m[:], vdb.ErrCorrupt)
	}
	version, err := rd.u32("version")
	if err != nil {
		return Header{}, err
	}
	switch {
	case version > formatVersion:
		return Header{}, fmt.Errorf("faiss: import: format version %d, this build reads %d (upgrade agentmem): %w", version, formatVersion, vdb.ErrVersion)
	case version < formatVersion:
		// No build ever wrote it: the stream is damaged, not new.
		return Header{}, fmt.Errorf("faiss: import: format version %d was never written: %w", version, vdb.ErrCorrupt)
	}
	var fixed [4]uint32
	for i, what := range []string{"dimension", "metric", "flags", "factory length"} {
		if fixed[i], err = rd.u32(what); err != nil {
			return Header{}, err
		}
	}
	if fixed[3] > maxFactoryLen {
		return Header{}, fmt.Errorf("faiss: import: factory string of %d bytes: %w", fixed[3], vdb.ErrCorrupt)
	}
	factory := make([]byte, fixed[3])
	if err := rd.full(factory, "factory string"); err != nil {
		return Header{}, err
	}
	blobLen, err := rd.u64("index size")
	if err != nil {
		return Header{}, err
	}
	if err := rd.checkCRC("header"); err != nil {
		return Header{}, err
	}
	return Header{Dim: int(fixed[0]), Factory: string(factory), metric: fixed[1], flags: fixed[2], blobLen: blobLen}, nil
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
			return fmt.Errorf("faiss: import: stream ends in the %s: %w", what, vdb.ErrCorrupt)
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
		return fmt.Errorf("faiss: import: %s checksum mismatch (stored %08x, computed %08x): %w", what, got, sum, vdb.ErrCorrupt)
	}
	rd.crc.Reset()
	return nil
}
