package faiss

import (
	"io"

	"github.com/agentmem/agentmem/internal/faissfmt"
)

// The stream format ([Index.Export]'s header around Faiss' own
// serialization) is described and read by internal/faissfmt, which links no
// Faiss, so that package store reads a saved index's header with the same
// code without linking this backend.
const (
	magic         = faissfmt.Magic
	formatVersion = faissfmt.Version
	metricIP      = faissfmt.MetricIP
	flagLabels    = faissfmt.FlagLabels
	maxFactoryLen = faissfmt.MaxFactoryLen
	maxBlobLen    = faissfmt.MaxBlobLen
	chunkSize     = faissfmt.ChunkSize
)

var castagnoli = faissfmt.Castagnoli

// Header describes a stream written by [Index.Export].
type Header struct {
	Dim     int    // vector dimension
	Factory string // index-factory string, without a leading "IDMap,"
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
	h, err := faissfmt.ReadHeader(r)
	return Header{Dim: h.Dim, Factory: h.Factory}, err
}
