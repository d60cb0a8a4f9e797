package longterm

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
)

// The log is the store's source of truth: an append-only file of framed
// records. It starts with a 16-byte header:
//
//	magic "AMLOG\x00" | uint16 LE format version | uint64 LE log id
//
// The log id is random per file; snapshots name the log they were taken
// from, so that a snapshot of an older (pre-compaction) log is never applied
// to a newer one. In format 2 (logVersion) each record is framed as
//
//	uint32 LE payload length | uint64 LE sequence | uint32 LE CRC32C(payload) | uint32 LE CRC32C(first 16 bytes) | payload
//
// The sequence number of a log's first frame is 1 and each next frame's is
// one more, so that a replay detects a frame that is missing, repeated or
// out of order anywhere in the log, not only a torn tail: every frame's
// checksums can be right while the log is not what was written. (A whole
// last frame that is gone leaves no gap; the snapshot's log offset catches
// that for the records it covers.) The header checksum lets Open tell a
// frame whose length was corrupted (an error) from one that was cut short
// by a crash (a torn tail, repaired).
//
// Format 1 (logVersion1), the previous release's, has no sequence numbers:
//
//	uint32 LE payload length | uint32 LE CRC32C(payload) | uint32 LE CRC32C(first 8 bytes) | payload
//
// A format-1 log still opens, and appends to it stay in format 1 (one
// format per file). It becomes a format-2 log when it is rewritten: by
// Compact, by Repair of a damaged log, or by store.Migrate (agentmem
// migrate), which keeps a copy and compacts a store whose log is in
// format 1. A snapshot (at Close) does not rewrite the log: the log is the
// only copy of the records, and rewriting it is an explicit step.
const (
	logMagic      = "AMLOG\x00"
	logVersion    = 2 // the format createLog writes
	logVersion1   = 1 // frames without sequence numbers
	logHeaderSize = 16
	frameHeader   = 20      // a format-2 frame header
	frameHeaderV1 = 12      // a format-1 frame header
	maxPayload    = 1 << 30 // a frame longer than this is corruption, not data
)

// LogFormat is the log format this build writes; it also reads format 1.
const LogFormat = logVersion

// ReadLogFormat returns the format of the log of the store in dir (1, or
// LogFormat) from the log's header alone. A missing log is an error
// wrapping os.ErrNotExist; a header that is not an agentmem log's, one
// wrapping ErrCorrupt.
func ReadLogFormat(dir string) (int, error) {
	path := filepath.Join(dir, logFileName)
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("longterm: %w", err)
	}
	defer f.Close()
	hdr := make([]byte, logHeaderSize)
	if _, err := io.ReadFull(f, hdr); err != nil || string(hdr[:6]) != logMagic {
		return 0, fmt.Errorf("%w: %s: offset 0: not an agentmem log header", ErrCorrupt, path)
	}
	return int(binary.LittleEndian.Uint16(hdr[6:])), nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func logHeader(id uint64) []byte {
	hdr := make([]byte, logHeaderSize)
	copy(hdr, logMagic)
	binary.LittleEndian.PutUint16(hdr[6:], logVersion)
	binary.LittleEndian.PutUint64(hdr[8:], id)
	return hdr
}

// checkSeq returns an error wrapping ErrCorrupt, naming the file, the
// frame's offset and both numbers, when the frame at off carries sequence
// number got where want was due.
func checkSeq(path string, off int64, got, want uint64) error {
	if got == want {
		return nil
	}
	var what string
	switch {
	case want > 1 && got == want-1:
		what = "the previous frame repeated"
	case got < want:
		what = "a frame repeated or out of order"
	case got == want+1:
		what = fmt.Sprintf("frame %d is missing, or frames are out of order", want)
	default:
		what = fmt.Sprintf("frames %d to %d are missing, or frames are out of order", want, got-1)
	}
	return fmt.Errorf("%w: %s: offset %d: frame sequence %d where %d was due (%s)", ErrCorrupt, path, off, got, want, what)
}

// frameFields is a decoded frame header.
type frameFields struct {
	n   uint32 // payload length
	seq uint64 // sequence number (0 in format 1)
	sum uint32 // CRC32C of the payload
}

// frameHeaderSize is the length of a frame header in format version.
func frameHeaderSize(version uint16) int {
	if version == logVersion1 {
		return frameHeaderV1
	}
	return frameHeader
}

// parseFrameHeader decodes fh, a frame header of format version; ok is
// false when the header's own checksum does not match.
func parseFrameHeader(version uint16, fh []byte) (h frameFields, ok bool) {
	le := binary.LittleEndian
	if version == logVersion1 {
		h = frameFields{n: le.Uint32(fh[0:]), sum: le.Uint32(fh[4:])}
		return h, crc32.Checksum(fh[:8], castagnoli) == le.Uint32(fh[8:])
	}
	h = frameFields{n: le.Uint32(fh[0:]), seq: le.Uint64(fh[4:]), sum: le.Uint32(fh[12:])}
	return h, crc32.Checksum(fh[:16], castagnoli) == le.Uint32(fh[16:])
}

// appendFrame appends one framed payload of format version to dst; seq is
// its sequence number (unused in format 1).
func appendFrame(dst []byte, version uint16, seq uint64, payload []byte) []byte {
	le := binary.LittleEndian
	start := len(dst)
	dst = le.AppendUint32(dst, uint32(len(payload)))
	if version != logVersion1 {
		dst = le.AppendUint64(dst, seq)
	}
	dst = le.AppendUint32(dst, crc32.Checksum(payload, castagnoli))
	dst = le.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
	return append(dst, payload...)
}
