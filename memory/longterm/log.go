package longterm

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/agentmem/agentmem/internal/atomicfile"
)

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
