//go:build faiss && cgo

package faiss

import (
	"encoding/binary"
	"hash/crc32"
)

// HeaderLen returns the length of a stream's header and of its Faiss bytes.
func HeaderLen(data []byte) (hdrLen, blobLen int) {
	flen := int(binary.LittleEndian.Uint32(data[24:]))
	off := 28 + flen
	blobLen = int(binary.LittleEndian.Uint64(data[off:]))
	return off + 8 + 4, blobLen
}

// Forge returns data with its Faiss bytes replaced by blob and every
// checksum recomputed, as only a bug or a forger would write.
func Forge(data, blob []byte) []byte {
	hdrLen, blobLen := HeaderLen(data)
	out := append([]byte(nil), data[:hdrLen-12]...)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(blob)))
	out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
	out = append(out, blob...)
	out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(blob, castagnoli))
	return append(out, data[hdrLen+blobLen+4:]...)
}

// SetBLASThreshold exposes setBLASThreshold to benchmarks.
var SetBLASThreshold = setBLASThreshold
