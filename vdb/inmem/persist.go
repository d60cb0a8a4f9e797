package inmem

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"unsafe"

	"github.com/agentmem/agentmem/vdb"
)

// The stream format, all integers little-endian:
//
//	header  magic "AGMINMEM" | version uint32 | dim uint32 | count uint64 | crc uint32 (of the 24 bytes before it)
//	payload ids [count]int64 | vectors [count*dim]float32 (normalised, row-major)
//	trailer crc uint32 (of the payload)
//
// CRCs are CRC-32C (Castagnoli). The magic and version are checked before
// anything else, then the header CRC, then the dimension.
const (
	magic        = "AGMINMEM"
	version      = 1
	headerSize   = 28
	ioChunkBytes = 4 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// littleEndian reports whether memory can be written as the stream's byte
// order directly.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// Export writes the database to w in a versioned, checksummed binary format
// that [DB.Import] reads. It holds the read lock while writing, so Add and
// Delete wait for it.
func (db *DB) Export(ctx context.Context, w io.Writer) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("inmem: export: %w", err)
	}
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return vdb.ErrClosed
	}
	var h [headerSize]byte
	copy(h[:], magic)
	binary.LittleEndian.PutUint32(h[8:], version)
	binary.LittleEndian.PutUint32(h[12:], uint32(db.dim))
	binary.LittleEndian.PutUint64(h[16:], uint64(len(db.ids)))
	binary.LittleEndian.PutUint32(h[24:], crc32.Checksum(h[:24], castagnoli))
	if _, err := w.Write(h[:]); err != nil {
		return fmt.Errorf("inmem: export: %w", err)
	}
	crc := uint32(0)
	var scratch []byte
	write := func(b []byte) error {
		crc = crc32.Update(crc, castagnoli, b)
		_, err := w.Write(b)
		return err
	}
	if err := writeChunks(ctx, write, len(db.ids)*8, func(lo, hi int) []byte {
		return int64Bytes(db.ids[lo/8:hi/8], &scratch)
	}); err != nil {
		return fmt.Errorf("inmem: export: %w", err)
	}
	for _, seg := range db.segs {
		if err := writeChunks(ctx, write, len(seg)*4, func(lo, hi int) []byte {
			return float32Bytes(seg[lo/4:hi/4], &scratch)
		}); err != nil {
			return fmt.Errorf("inmem: export: %w", err)
		}
	}
	var t [4]byte
	binary.LittleEndian.PutUint32(t[:], crc)
	if _, err := w.Write(t[:]); err != nil {
		return fmt.Errorf("inmem: export: %w", err)
	}
	return nil
}

// writeChunks calls write on consecutive byte ranges of at most ioChunkBytes
// (a multiple of 8) of an n-byte region, checking ctx between them.
func writeChunks(ctx context.Context, write func([]byte) error, n int, bytes func(lo, hi int) []byte) error {
	for lo := 0; lo < n; lo += ioChunkBytes {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := write(bytes(lo, min(lo+ioChunkBytes, n))); err != nil {
			return err
		}
	}
	return nil
}

// int64Bytes returns s as little-endian bytes (leBytes).
func int64Bytes(s []int64, scratch *[]byte) []byte {
	return leBytes(s, scratch, func(b []byte, v int64) { binary.LittleEndian.PutUint64(b, uint64(v)) })
}

// float32Bytes returns s as little-endian bytes (leBytes).
func float32Bytes(s []float32, scratch *[]byte) []byte {
	return leBytes(s, scratch, func(b []byte, v float32) { binary.LittleEndian.PutUint32(b, math.Float32bits(v)) })
}

// leBytes returns s as little-endian bytes: a view of s's memory on
// little-endian machines, an encoding into *scratch with put elsewhere.
func leBytes[T int64 | float32](s []T, scratch *[]byte, put func([]byte, T)) []byte {
	if len(s) == 0 {
		return nil
	}
	size := int(unsafe.Sizeof(s[0]))
	if littleEndian {
		return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*size)
	}
	b := grow(scratch, len(s)*size)
	for i, v := range s {
		put(b[i*size:], v)
	}
	return b
}

func grow(scratch *[]byte, n int) []byte {
	if cap(*scratch) < n {
		*scratch = make([]byte, n)
	}
	return (*scratch)[:n]
}

// Import replaces the database's contents with a stream written by
// [DB.Export]. The stream is read and verified completely before anything is
// replaced: on error the database is unchanged. A stream with another magic or
// a newer version yields [vdb.ErrVersion]; a truncated or corrupted one (CRC
// mismatch, duplicate or negative IDs) [vdb.ErrCorrupt]; one of another
// dimension [vdb.ErrDimension].
func (db *DB) Import(ctx context.Context, r io.Reader) error {
	return db.importStream(ctx, r, true)
}

// importStream is Import; with columns false it leaves the column codes
// (WithColumns) unbuilt, for a caller that decides afterwards whether
// they are wanted (keepColumns): an IVF whose index is trained on the
// imported rows searches its own codes.
func (db *DB) importStream(ctx context.Context, r io.Reader, columns bool) error {
	s, err := db.loadStream(ctx, r)
	if err != nil {
		return err
	}
	return db.installStream(s, columns)
}

// loadedStream is a stream read and coded by loadStream, not yet the
// database's.
type loadedStream struct {
	ids  []int64
	segs [][]float32
	rows map[int64]int
	code []int8
	meta []rowMeta
}

// loadStream reads and checks a stream and codes its rows, without
// holding mu for more than a check that the database is open.
func (db *DB) loadStream(ctx context.Context, r io.Reader) (*loadedStream, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("inmem: import: %w", err)
	}
	db.mu.RLock()
	closed := db.closed
	db.mu.RUnlock()
	if closed {
		return nil, vdb.ErrClosed
	}
	ids, segs, rows, err := db.read(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("inmem: import: %w", err)
	}
	// The stream holds no codes (its format does not depend on
	// WithCodes): recompute them.
	code, meta := encodeAll(db.codes, db.dim, db.workers, len(ids), func(r int) []float32 {
		off := (r % db.segRows) * db.dim
		return segs[r/db.segRows][off : off+db.dim]
	})
	return &loadedStream{ids, segs, rows, code, meta}, nil
}

// installStream replaces the database's rows with s's, under mu; with
// columns false it leaves the column codes unbuilt (see importStream).
func (db *DB) installStream(s *loadedStream, columns bool) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return vdb.ErrClosed
	}
	db.ids, db.segs, db.rows = s.ids, s.segs, s.rows
	db.code, db.meta = s.code, s.meta
	db.cols = nil
	db.keepColumns(columns)
	return nil
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", vdb.ErrCorrupt, fmt.Sprintf(format, args...))
}

// readFull is io.ReadFull with a short read reported as corruption.
func readFull(r io.Reader, b []byte, what string) error {
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return corrupt("truncated %s", what)
		}
		return err
	}
	return nil
}

// read reads and checks a stream: its ids, the rows in segments (as
// db.segs holds them) and the id → row map.
func (db *DB) read(ctx context.Context, r io.Reader) ([]int64, [][]float32, map[int64]int, error) {
	var h [headerSize]byte
	if err := readFull(r, h[:12], "header"); err != nil {
		return nil, nil, nil, err
	}
	if string(h[:8]) != magic {
		return nil, nil, nil, fmt.Errorf("%w: not an inmem stream (magic %q)", vdb.ErrCorrupt, h[:8])
	}
	if v := binary.LittleEndian.Uint32(h[8:]); v != version {
		return nil, nil, nil, fmt.Errorf("%w: format version %d, this build reads %d (upgrade agentmem)", vdb.ErrVersion, v, version)
	}
	if err := readFull(r, h[12:], "header"); err != nil {
		return nil, nil, nil, err
	}
	if got, want := crc32.Checksum(h[:24], castagnoli), binary.LittleEndian.Uint32(h[24:]); got != want {
		return nil, nil, nil, corrupt("header checksum %08x, want %08x", got, want)
	}
	if dim := binary.LittleEndian.Uint32(h[12:]); int64(dim) != int64(db.dim) {
		return nil, nil, nil, fmt.Errorf("%w: stream has dimension %d, database %d", vdb.ErrDimension, dim, db.dim)
	}
	count := binary.LittleEndian.Uint64(h[16:])
	if count > uint64(math.MaxInt/8/(db.dim+2)) {
		return nil, nil, nil, corrupt("implausible vector count %d", count)
	}
	n := int(count)
	// The header's checksum vouches for count only as far as the header
	// goes: a damaged or hostile stream can claim any count under the
	// bound above. Memory is taken as the payload arrives (the ids as
	// they are read, each segment when its rows begin), so that a claim
	// the stream does not back ends in a truncation error, not in an
	// allocation of the claimed size.
	ids := make([]int64, 0, min(n, ioChunkBytes/8))
	var segRows []int // rows of each segment
	for lo := 0; lo < n; lo += db.segRows {
		segRows = append(segRows, min(db.segRows, n-lo))
	}
	crc := uint32(0)
	var scratch []byte
	readChunks := func(nbytes int, view func(lo, hi int) []byte, decode func(lo int, b []byte)) error {
		for lo := 0; lo < nbytes; lo += ioChunkBytes {
			if err := ctx.Err(); err != nil {
				return err
			}
			hi := min(lo+ioChunkBytes, nbytes)
			var b []byte
			if littleEndian {
				b = view(lo, hi) // read straight into the destination
			} else {
				b = grow(&scratch, hi-lo)
			}
			if err := readFull(r, b, "payload"); err != nil {
				return err
			}
			crc = crc32.Update(crc, castagnoli, b)
			if !littleEndian {
				decode(lo, b)
			}
		}
		return nil
	}
	// more extends ids to the first hi/8 (the bytes read so far).
	more := func(hi int) { ids = slices.Grow(ids, hi/8-len(ids))[:hi/8] }
	err := readChunks(n*8, func(lo, hi int) []byte {
		more(hi)
		return int64Bytes(ids[lo/8:hi/8], &scratch)
	}, func(lo int, b []byte) {
		more(lo + len(b))
		for i := 0; i < len(b); i += 8 {
			ids[(lo+i)/8] = int64(binary.LittleEndian.Uint64(b[i:]))
		}
	})
	if err != nil {
		return nil, nil, nil, err
	}
	var segs [][]float32
	for i, rows := range segRows {
		capRows := db.segRows
		if len(segRows) == 1 {
			capRows = rows // one segment holds exactly its rows
		}
		seg := newSegment(rows*db.dim, capRows*db.dim, db.hugeFloats(i*db.segRows))
		segs = append(segs, seg)
		err = readChunks(len(seg)*4, func(lo, hi int) []byte {
			return float32Bytes(seg[lo/4:hi/4], &scratch)
		}, func(lo int, b []byte) {
			for i := 0; i < len(b); i += 4 {
				seg[(lo+i)/4] = math.Float32frombits(binary.LittleEndian.Uint32(b[i:]))
			}
		})
		if err != nil {
			return nil, nil, nil, err
		}
	}
	var t [4]byte
	if err := readFull(r, t[:], "checksum"); err != nil {
		return nil, nil, nil, err
	}
	if want := binary.LittleEndian.Uint32(t[:]); crc != want {
		return nil, nil, nil, corrupt("payload checksum %08x, want %08x", crc, want)
	}
	rows := make(map[int64]int, n)
	for i, id := range ids {
		if id < 0 {
			return nil, nil, nil, corrupt("negative id %d", id)
		}
		if _, dup := rows[id]; dup {
			return nil, nil, nil, corrupt("duplicate id %d", id)
		}
		rows[id] = i
	}
	return ids, segs, rows, nil
}
