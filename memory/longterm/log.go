package longterm

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/agentmem/agentmem/internal/atomicfile"
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

// Record types inside a payload. recAdd and recAddSparse are the same
// record (an added record with its children and their vectors) and differ
// only in how the vectors are written: recAdd as dim float32s per child,
// recAddSparse as each child's non-zero entries (see encodeAdd). A reader
// of either gets the same addRecord.
const (
	recAdd       byte = 1
	recForget    byte = 2
	recAddSparse byte = 3
)

// isAdd reports whether typ is an added record's type, in either vector
// encoding.
func isAdd(typ byte) bool { return typ == recAdd || typ == recAddSparse }

// logFile is an open log positioned at its end. It is not safe for concurrent
// use; Memory serialises access with its write lock.
type logFile struct {
	f       *os.File
	path    string
	id      uint64
	version uint16 // logVersion or logVersion1
	size    int64  // offset of the next frame
	seq     uint64 // sequence number of the last frame (format 2)
	// lastOffs are the offsets of the frames of the last append.
	lastOffs []int64
	buf      []byte
	// broken is set when a failed append could not be rolled back.
	broken error
	// torn is the length of a torn tail that a read-only open skipped.
	torn    int64
	tornWhy string
}

// createLog creates a new, empty log at path (which must not exist) and syncs
// it and its directory.
func createLog(path string) (*logFile, error) {
	var idb [8]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return nil, fmt.Errorf("longterm: log id: %w", err)
	}
	id := binary.LittleEndian.Uint64(idb[:])
	hdr := logHeader(id)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("longterm: create log: %w", err)
	}
	if _, err := f.Write(hdr); err != nil {
		f.Close()
		return nil, fmt.Errorf("longterm: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("longterm: sync %s: %w", path, err)
	}
	if err := atomicfile.SyncDir(filepath.Dir(path)); err != nil {
		f.Close()
		return nil, err
	}
	return &logFile{f: f, path: path, id: id, version: logVersion, size: logHeaderSize}, nil
}

func logHeader(id uint64) []byte {
	hdr := make([]byte, logHeaderSize)
	copy(hdr, logMagic)
	binary.LittleEndian.PutUint16(hdr[6:], logVersion)
	binary.LittleEndian.PutUint64(hdr[8:], id)
	return hdr
}

// openLog opens the log at path, calls fn for every intact frame at or after
// offset from (0 means the first frame), and leaves the file positioned at
// the end of the last intact frame. A torn tail — a last frame cut short, or
// trailing zeros left by a crash — is, with repair set, copied to
// path+".broken", truncated away and logged as a warning; without repair
// (a read-only open) it is only skipped, and l.torn says how long it is.
// Any other damage is an error wrapping ErrCorrupt that names the file and
// the frame's offset; the file is not modified in that case.
func openLog(path string, from int64, repair bool, logger *slog.Logger, fn func(off int64, payload []byte) error) (*logFile, error) {
	flag := os.O_RDWR
	if !repair {
		flag = os.O_RDONLY
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, fmt.Errorf("longterm: open log: %w", err)
	}
	l, err := scanLog(f, path, from, repair, logger, fn)
	if err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

func scanLog(f *os.File, path string, from int64, repair bool, logger *slog.Logger, fn func(off int64, payload []byte) error) (*logFile, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("longterm: stat log: %w", err)
	}
	fileSize := st.Size()
	hdr := make([]byte, logHeaderSize)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return nil, fmt.Errorf("%w: %s: offset 0: short header: %v", ErrCorrupt, path, err)
	}
	if string(hdr[:6]) != logMagic {
		return nil, fmt.Errorf("%w: %s: offset 0: not an agentmem log (bad magic)", ErrCorrupt, path)
	}
	version := binary.LittleEndian.Uint16(hdr[6:])
	if version != logVersion && version != logVersion1 {
		return nil, fmt.Errorf("%w: %s: log format %d, this build reads %d and %d", ErrVersion, path, version, logVersion1, logVersion)
	}
	l := &logFile{f: f, path: path, id: binary.LittleEndian.Uint64(hdr[8:]), version: version}
	// The records before from (the snapshot's offset) are not replayed,
	// but their checksums and sequence numbers are checked: damage there
	// would otherwise go unnoticed until the snapshot is next unusable.
	off := int64(logHeaderSize)
	if from > fileSize {
		return nil, fmt.Errorf("%w: %s: offset %d is past the end (%d bytes)", ErrCorrupt, path, from, fileSize)
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, fmt.Errorf("longterm: seek log: %w", err)
	}
	r := bufio.NewReaderSize(f, 1<<20)
	hsize := int64(frameHeaderSize(version))
	fh := make([]byte, hsize)
	var payload []byte
	torn := int64(-1)
	var tornWhy string
	for off < fileSize {
		rest := fileSize - off
		if rest < hsize {
			torn, tornWhy = off, "incomplete frame header"
			break
		}
		if _, err := io.ReadFull(r, fh); err != nil {
			return nil, fmt.Errorf("longterm: read %s at offset %d: %w", path, off, err)
		}
		h, ok := parseFrameHeader(version, fh)
		if !ok {
			zero, err := allZero(f, off, fileSize)
			if err != nil {
				return nil, err
			}
			if zero {
				torn, tornWhy = off, "zero-filled tail"
				break
			}
			return nil, fmt.Errorf("%w: %s: offset %d: frame header checksum mismatch", ErrCorrupt, path, off)
		}
		if h.n > maxPayload {
			return nil, fmt.Errorf("%w: %s: offset %d: frame length %d too large", ErrCorrupt, path, off, h.n)
		}
		if int64(h.n) > rest-hsize {
			torn, tornWhy = off, fmt.Sprintf("frame of %d bytes cut short at %d", h.n, rest-hsize)
			break
		}
		if cap(payload) < int(h.n) {
			payload = make([]byte, h.n)
		}
		payload = payload[:h.n]
		if _, err := io.ReadFull(r, payload); err != nil {
			return nil, fmt.Errorf("longterm: read %s at offset %d: %w", path, off, err)
		}
		if crc32.Checksum(payload, castagnoli) != h.sum {
			return nil, fmt.Errorf("%w: %s: offset %d: record checksum mismatch", ErrCorrupt, path, off)
		}
		if version != logVersion1 {
			if err := checkSeq(path, off, h.seq, l.seq+1); err != nil {
				return nil, err
			}
			l.seq = h.seq
		}
		next := off + hsize + int64(h.n)
		if off < from && next > from {
			return nil, fmt.Errorf("%w: %s: offset %d: the snapshot's log offset %d is inside this record", ErrCorrupt, path, off, from)
		}
		if off >= from {
			if err := fn(off, payload); err != nil {
				return nil, fmt.Errorf("%s: offset %d: %w", path, off, err)
			}
		}
		off = next
	}
	if torn >= 0 && torn < from {
		return nil, fmt.Errorf("%w: %s: offset %d: %s, but the snapshot covers the log up to %d", ErrCorrupt, path, torn, tornWhy, from)
	}
	if torn >= 0 && !repair {
		l.torn, l.tornWhy = fileSize-torn, tornWhy
		off = torn
	} else if torn >= 0 {
		if err := repairTail(f, path, torn, fileSize); err != nil {
			return nil, err
		}
		logger.Warn("longterm: repaired torn log tail",
			"file", path, "offset", torn, "dropped_bytes", fileSize-torn,
			"reason", tornWhy, "copy", path+".broken")
		off = torn
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, fmt.Errorf("longterm: seek log: %w", err)
	}
	l.size = off
	return l, nil
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

// allZero reports whether f holds only zero bytes in [off, end).
func allZero(f *os.File, off, end int64) (bool, error) {
	buf := make([]byte, 64<<10)
	for off < end {
		n := min(int64(len(buf)), end-off)
		if _, err := f.ReadAt(buf[:n], off); err != nil {
			return false, fmt.Errorf("longterm: read log at %d: %w", off, err)
		}
		for _, b := range buf[:n] {
			if b != 0 {
				return false, nil
			}
		}
		off += n
	}
	return true, nil
}

// repairTail copies the whole damaged file to path+".broken" (as etcd's
// wal.Repair does), truncates the log at off and syncs it.
func repairTail(f *os.File, path string, off, size int64) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("longterm: repair %s: %w", path, err)
	}
	err := atomicfile.Write(path+".broken", func(w *bufio.Writer) error {
		_, err := io.Copy(w, io.LimitReader(f, size))
		return err
	})
	if err != nil {
		return fmt.Errorf("longterm: repair %s: save broken copy: %w", path, err)
	}
	if err := f.Truncate(off); err != nil {
		return fmt.Errorf("longterm: repair %s: truncate at %d: %w", path, off, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("longterm: repair %s: sync: %w", path, err)
	}
	return nil
}

// append writes the framed payloads in one write and, if sync is set, fsyncs
// the file: several records, one fsync (group commit). It returns the offset
// of each frame. On a write or sync error the file is truncated back to where
// it was, so that nothing of a failed append is left to replay and a later
// append does not follow a half-written frame; if even that fails the log
// refuses further appends.
func (l *logFile) append(payloads [][]byte, sync bool) ([]int64, error) {
	if l.broken != nil {
		return nil, fmt.Errorf("longterm: %s: an earlier failed write could not be rolled back: %w", l.path, l.broken)
	}
	total := 0
	for _, p := range payloads {
		total += frameHeaderSize(l.version) + len(p)
	}
	l.buf = slices.Grow(l.buf[:0], total)
	offs := make([]int64, len(payloads))
	for i, p := range payloads {
		offs[i] = l.size + int64(len(l.buf))
		l.buf = appendFrame(l.buf, l.version, l.seq+uint64(i)+1, p)
	}
	if _, err := l.f.Write(l.buf); err != nil {
		return nil, l.rollback(fmt.Errorf("longterm: append to %s: %w", l.path, err))
	}
	if sync {
		if err := l.f.Sync(); err != nil {
			// After a failed fsync the page cache state is unknown
			// (fsyncgate); do not pretend the records are durable.
			return nil, l.rollback(fmt.Errorf("longterm: sync %s: %w", l.path, err))
		}
	}
	l.size += int64(len(l.buf))
	l.seq += uint64(len(payloads))
	l.lastOffs = offs
	if cap(l.buf) > 4<<20 {
		l.buf = nil
	}
	return offs, nil
}

// rollback truncates the file back to l.size after a failed append and
// returns err, joined with the rollback's own failure (which also marks
// the log broken).
func (l *logFile) rollback(err error) error {
	if rerr := l.truncate(l.size); rerr != nil {
		l.broken = rerr
		return fmt.Errorf("%w; rolling back failed too, so the log may hold the records: %v", err, rerr)
	}
	return err
}

// truncate cuts the log at off (a frame boundary at or before l.size),
// syncs it and positions it there; the next frame appended takes the
// sequence number of the first frame cut.
func (l *logFile) truncate(off int64) error {
	seq, err := l.seqBefore(off)
	if err != nil {
		return err
	}
	if err := l.f.Truncate(off); err != nil {
		return fmt.Errorf("longterm: truncate %s at %d: %w", l.path, off, err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("longterm: sync %s: %w", l.path, err)
	}
	if _, err := l.f.Seek(off, io.SeekStart); err != nil {
		return fmt.Errorf("longterm: seek %s: %w", l.path, err)
	}
	l.size = off
	l.seq = seq
	return nil
}

// seqBefore returns the sequence number of the last frame before off, a
// frame boundary at or before l.size: from the last append's offsets when
// off is one of them (a rolled-back write), else by counting the frames
// from the start.
func (l *logFile) seqBefore(off int64) (uint64, error) {
	if l.version == logVersion1 || off == l.size {
		return l.seq, nil
	}
	if i := slices.Index(l.lastOffs, off); i >= 0 {
		return l.seq - uint64(len(l.lastOffs)-i), nil
	}
	fh := make([]byte, frameHeaderSize(l.version))
	var seq uint64
	for at := int64(logHeaderSize); at < off; seq++ {
		if _, err := l.f.ReadAt(fh, at); err != nil {
			return 0, fmt.Errorf("longterm: read %s at %d: %w", l.path, at, err)
		}
		h, ok := parseFrameHeader(l.version, fh)
		if !ok {
			return 0, fmt.Errorf("%w: %s: offset %d: frame header checksum mismatch", ErrCorrupt, l.path, at)
		}
		at += int64(len(fh)) + int64(h.n)
	}
	return seq, nil
}

func (l *logFile) sync() error {
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("longterm: sync %s: %w", l.path, err)
	}
	return nil
}

func (l *logFile) close() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// readFrame reads the payload of the frame at off (used by compaction).
func (l *logFile) readFrame(off int64) ([]byte, error) {
	fh := make([]byte, frameHeaderSize(l.version))
	if _, err := l.f.ReadAt(fh, off); err != nil {
		return nil, fmt.Errorf("longterm: read %s at %d: %w", l.path, off, err)
	}
	h, ok := parseFrameHeader(l.version, fh)
	if !ok || h.n > maxPayload {
		return nil, fmt.Errorf("%w: %s: offset %d: frame header checksum mismatch", ErrCorrupt, l.path, off)
	}
	p := make([]byte, h.n)
	if _, err := l.f.ReadAt(p, off+int64(len(fh))); err != nil {
		return nil, fmt.Errorf("longterm: read %s at %d: %w", l.path, off, err)
	}
	if crc32.Checksum(p, castagnoli) != h.sum {
		return nil, fmt.Errorf("%w: %s: offset %d: record checksum mismatch", ErrCorrupt, l.path, off)
	}
	return p, nil
}

// logChild is one child of an added record as the log carries it.
type logChild struct {
	id         int64
	start, end int    // byte offsets into the parent's text
	text       string // the child's text; equal to parent text[start:end] unless chunking rewrote it
}

// addRecord is the decoded payload of a recAdd frame.
type addRecord struct {
	rec      Record
	children []logChild
	dim      int
	vecs     []float32 // len(children)*dim, child-major
}

// encodeAdd appends the payload of an added record to dst. Its vectors are
// written dense (recAdd: dim little-endian float32s per child) or, when at
// most half of their entries are non-zero, sparse (recAddSparse): per child
// the number of non-zero entries, then each as the uvarint gap from the
// previous one's index (+1; the first one's gap is its index) and its
// float32 bits. Entries whose bits are zero (+0) are left out, so the
// encoding is lossless (-0 is kept as non-zero). The hash embedder's
// vectors (512 entries, ~40 non-zero) take ~220 bytes instead of 2 KB.
func encodeAdd(dst []byte, rec *Record, children []logChild, dim int, vecs [][]float32) []byte {
	start := len(dst)
	vc := encodeVectors(appendAdd(dst, rec, children, vectorCode{}), dim, vecs)
	if vc.sparse {
		vc.b[start] = recAddSparse
	}
	return vc.b
}

// vectorCode is the tail of an added record's payload, its dimension and
// vectors as encodeAdd writes them, and whether they are sparse. AddBatch
// encodes it in its parallel phase, so that the writer only copies it.
type vectorCode struct {
	b      []byte
	sparse bool
}

// appendAdd appends the payload of an added record whose vectors vc holds
// to dst (encodeAdd).
func appendAdd(dst []byte, rec *Record, children []logChild, vc vectorCode) []byte {
	// Room for the whole payload at once (child spans estimated): an
	// 8 MiB record has ~170k children, and growing dst append by append
	// spent 40% of its Add copying the vectors from one buffer to the next.
	dst = slices.Grow(dst, 64+recordBytes(rec)+len(rec.Tags)*binary.MaxVarintLen64+
		len(children)*(1+3*binary.MaxVarintLen32)+len(vc.b))
	if vc.sparse {
		dst = append(dst, recAddSparse)
	} else {
		dst = append(dst, recAdd)
	}
	dst = appendString(dst, rec.ID)
	dst = appendString(dst, rec.Namespace)
	dst = appendString(dst, rec.Speaker)
	if rec.Time.IsZero() {
		dst = append(dst, 0)
	} else {
		dst = append(dst, 1)
		dst = binary.AppendVarint(dst, rec.Time.Unix())
		dst = binary.AppendUvarint(dst, uint64(rec.Time.Nanosecond()))
	}
	dst = binary.AppendUvarint(dst, uint64(len(rec.Tags)))
	for _, t := range rec.Tags {
		dst = appendString(dst, t)
	}
	dst = appendString(dst, rec.Text)
	dst = binary.AppendUvarint(dst, uint64(len(children)))
	for _, c := range children {
		dst = binary.AppendUvarint(dst, uint64(c.id))
		dst = binary.AppendUvarint(dst, uint64(c.start))
		dst = binary.AppendUvarint(dst, uint64(c.end))
		if c.start >= 0 && c.end <= len(rec.Text) && c.start <= c.end && rec.Text[c.start:c.end] == c.text {
			dst = append(dst, 0)
		} else {
			dst = append(dst, 1)
			dst = appendString(dst, c.text)
		}
	}
	return append(dst, vc.b...)
}

// encodeVectors appends the tail of an added record's payload, dim and
// vecs (encodeAdd), to dst and returns it with whether it is sparse. It
// reads each vector once: it writes them sparse until more than half of
// all their entries turn out non-zero, and then writes them dense instead.
func encodeVectors(dst []byte, dim int, vecs [][]float32) vectorCode {
	dst = binary.AppendUvarint(dst, uint64(dim))
	head := len(dst)
	total := 0
	for _, v := range vecs {
		total += len(v)
	}
	dense := func() vectorCode {
		dst = slices.Grow(dst, 4*total)
		for _, v := range vecs {
			for _, x := range v {
				dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(x))
			}
		}
		return vectorCode{b: dst}
	}
	if total == 0 {
		return dense()
	}
	const slot = binary.MaxVarintLen32 // room for a vector's count, written after its entries
	nnz := 0
	for _, v := range vecs {
		at := len(dst)
		dst = append(dst, make([]byte, slot)...)
		n, next := 0, 0 // next: the index the next gap counts from
		for i, x := range v {
			if b := math.Float32bits(x); b != 0 {
				dst = binary.AppendUvarint(dst, uint64(i-next))
				dst = binary.LittleEndian.AppendUint32(dst, b)
				n, next = n+1, i+1
			}
		}
		if nnz += n; 2*nnz > total {
			dst = dst[:head]
			return dense()
		}
		k := binary.PutUvarint(dst[at:], uint64(n))
		dst = append(dst[:at+k], dst[at+slot:]...)
	}
	return vectorCode{b: dst, sparse: true}
}

func encodeForget(dst []byte, id string) []byte {
	dst = append(dst, recForget)
	return appendString(dst, id)
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// decoder reads a payload; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

var errShort = errors.New("record truncated")

func (d *decoder) uvarint() uint64 { return readVarint(d, binary.Uvarint) }

func (d *decoder) varint() int64 { return readVarint(d, binary.Varint) }

// readVarint reads one varint with read, binary.Uvarint or binary.Varint.
func readVarint[T uint64 | int64](d *decoder, read func([]byte) (T, int)) T {
	if d.err != nil {
		return 0
	}
	v, n := read(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) < 1 {
		d.err = errShort
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) bytes(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = errShort
		return nil
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) string() string { return string(d.bytes(d.uvarint())) }

// count reads a length that must be plausible for the bytes left (each
// element needs at least min bytes).
func (d *decoder) count(min int) int {
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.b)/min) {
		d.err = fmt.Errorf("count %d exceeds record size", n)
		return 0
	}
	return int(n)
}

// decodeAdd decodes the payload of a recAdd or recAddSparse frame (after
// its type byte, typ). The decoded strings do not alias p.
func decodeAdd(typ byte, p []byte) (*addRecord, error) {
	d := &decoder{b: p}
	a := &addRecord{}
	a.rec.ID = d.string()
	a.rec.Namespace = d.string()
	a.rec.Speaker = d.string()
	if d.byte() == 1 {
		sec := d.varint()
		nsec := d.uvarint()
		if nsec >= 1e9 {
			d.err = fmt.Errorf("bad nanoseconds %d", nsec)
		}
		a.rec.Time = time.Unix(sec, int64(nsec)).UTC()
	}
	if nt := d.count(1); nt > 0 {
		a.rec.Tags = make([]string, nt)
		for i := range a.rec.Tags {
			a.rec.Tags[i] = d.string()
		}
	}
	a.rec.Text = d.string()
	nc := d.count(4)
	a.children = make([]logChild, nc)
	for i := range a.children {
		c := &a.children[i]
		c.id = int64(d.uvarint())
		c.start = int(d.uvarint())
		c.end = int(d.uvarint())
		if d.byte() == 0 {
			if d.err == nil && (c.start > c.end || c.end > len(a.rec.Text)) {
				d.err = fmt.Errorf("child span [%d,%d) outside text of %d bytes", c.start, c.end, len(a.rec.Text))
			}
			if d.err == nil {
				c.text = a.rec.Text[c.start:c.end]
			}
		} else {
			c.text = d.string()
		}
	}
	a.dim = int(d.uvarint())
	if typ == recAddSparse {
		a.vecs = d.sparseVectors(nc, a.dim)
		if d.err == nil && len(d.b) != 0 {
			d.err = fmt.Errorf("vectors: %d bytes after %d sparse children", len(d.b), nc)
		}
		if d.err != nil {
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, d.err)
		}
		return a, nil
	}
	if d.err == nil && a.dim*nc*4 != len(d.b) {
		d.err = fmt.Errorf("vectors: %d bytes for %d children of dim %d", len(d.b), nc, a.dim)
	}
	if d.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, d.err)
	}
	a.vecs = make([]float32, nc*a.dim)
	for i := range a.vecs {
		a.vecs[i] = math.Float32frombits(binary.LittleEndian.Uint32(d.b[4*i:]))
	}
	return a, nil
}

// sparseVectors reads nc sparse vectors of dim entries (see encodeAdd)
// into one child-major slice.
func (d *decoder) sparseVectors(nc, dim int) []float32 {
	// nc is bounded by the record's size (count checked it); the vectors
	// are bounded as the dense encoding bounds them, by what a frame holds.
	if d.err == nil && (dim > maxPayload/4 || nc*dim > maxPayload/4) {
		d.err = fmt.Errorf("vectors: %d children of dim %d", nc, dim)
	}
	if d.err != nil {
		return nil
	}
	vecs := make([]float32, nc*dim)
	for c := range nc {
		n := d.count(5)
		v := vecs[c*dim : (c+1)*dim]
		next := uint64(0)
		for range n {
			i := next + d.uvarint()
			b := d.bytes(4)
			if d.err != nil {
				return nil
			}
			if i >= uint64(dim) {
				d.err = fmt.Errorf("vector %d: entry %d outside dim %d", c, i, dim)
				return nil
			}
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b))
			next = i + 1
		}
	}
	return vecs
}

// decodeRecord splits a payload into its type and body.
func decodeRecord(p []byte) (byte, []byte, error) {
	if len(p) == 0 {
		return 0, nil, fmt.Errorf("%w: empty record", ErrCorrupt)
	}
	switch p[0] {
	case recAdd, recAddSparse, recForget:
		return p[0], p[1:], nil
	}
	return 0, nil, fmt.Errorf("%w: unknown record type %d", ErrCorrupt, p[0])
}

func decodeForget(p []byte) (string, error) {
	d := &decoder{b: p}
	id := d.string()
	if d.err == nil && len(d.b) != 0 {
		d.err = errors.New("trailing bytes")
	}
	if d.err != nil {
		return "", fmt.Errorf("%w: %v", ErrCorrupt, d.err)
	}
	return id, nil
}
