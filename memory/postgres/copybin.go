package postgres

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// copyRows builds the data of a COPY … FROM STDIN (FORMAT binary) of a
// write's records and chunks, field by field, in PostgreSQL's binary
// format (the server's *_recv functions: int8recv, textrecv, array_recv,
// timestamptz_recv, pgvector's vector_recv and sparsevec_recv).
//
// pgx's CopyFrom takes rows of []any and encodes each value through its
// type map, and pgvector-go builds a sparse vector by appending its
// non-zero elements one at a time: for a load's batch of 1,000 records
// (3,000 chunks, ~76,000 terms) some 25 ms of Go CPU on the write's path
// (profiled: CopyFromRows' boxing, encodeCopyValue, NewSparseVector).
// Here a batch is appended to one buffer and no value is boxed; the
// vectors are encoded by prepareBatch, beside the write of the batch
// before.
type copyRows struct {
	b []byte
}

// copyHeader is the binary COPY signature, flags and header extension
// length (both 0).
const copyHeader = "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00"

// Element type OIDs of the arrays written (pg_type).
const (
	oidText = 25
	oidInt4 = 23
)

// pgEpochMicros is 2000-01-01 00:00:00 UTC, PostgreSQL's timestamp epoch,
// in microseconds since the Unix epoch.
const pgEpochMicros = 946_684_800_000_000

// copyRowsPool keeps copyRows buffers between writes: a 10,000-record
// load's batches allocated 42 MB in them.
var copyRowsPool sync.Pool

// maxPooledCopyBytes is the largest buffer copyRowsPool keeps.
const maxPooledCopyBytes = 64 << 20

// newCopyRows returns an empty copyRows with room for size bytes; send
// gives it back.
func newCopyRows(size int) *copyRows {
	size += len(copyHeader) + 2
	c, _ := copyRowsPool.Get().(*copyRows)
	if c == nil || cap(c.b) < size {
		c = &copyRows{b: make([]byte, 0, size)}
	}
	c.b = append(c.b[:0], copyHeader...)
	return c
}

// row starts a row of n fields.
func (c *copyRows) row(n int) { c.b = binary.BigEndian.AppendUint16(c.b, uint16(n)) }

func (c *copyRows) size(n int) { c.b = binary.BigEndian.AppendUint32(c.b, uint32(n)) }

func (c *copyRows) null() { c.b = binary.BigEndian.AppendUint32(c.b, math.MaxUint32) }

func (c *copyRows) int8(v int64) {
	c.size(8)
	c.b = binary.BigEndian.AppendUint64(c.b, uint64(v))
}

func (c *copyRows) int4(v int32) {
	c.size(4)
	c.b = binary.BigEndian.AppendUint32(c.b, uint32(v))
}

func (c *copyRows) bool(v bool) {
	c.size(1)
	if v {
		c.b = append(c.b, 1)
	} else {
		c.b = append(c.b, 0)
	}
}

func (c *copyRows) text(s string) {
	c.size(len(s))
	c.b = append(c.b, s...)
}

// time writes t as a timestamptz, to the microsecond (rounded down, as
// the records' times already are: prepare).
func (c *copyRows) time(t time.Time) {
	c.int8(t.UnixMicro() - pgEpochMicros)
}

// nullTime writes t, or NULL if it is zero.
func (c *copyRows) nullTime(t time.Time) {
	if t.IsZero() {
		c.null()
		return
	}
	c.time(t)
}

// arrayHead writes the size and header of a one-dimensional array of n
// elements of type oid whose elements take body bytes (their sizes
// included); an empty array has no dimension.
func (c *copyRows) arrayHead(oid uint32, n, body int) {
	if n == 0 {
		c.size(12)
		c.b = binary.BigEndian.AppendUint32(c.b, 0) // dimensions
		c.b = binary.BigEndian.AppendUint32(c.b, 0) // no NULL
		c.b = binary.BigEndian.AppendUint32(c.b, oid)
		return
	}
	c.size(20 + body)
	c.b = binary.BigEndian.AppendUint32(c.b, 1)
	c.b = binary.BigEndian.AppendUint32(c.b, 0)
	c.b = binary.BigEndian.AppendUint32(c.b, oid)
	c.b = binary.BigEndian.AppendUint32(c.b, uint32(n))
	c.b = binary.BigEndian.AppendUint32(c.b, 1) // lower bound
}

func (c *copyRows) texts(l []string) {
	body := 4 * len(l)
	for _, s := range l {
		body += len(s)
	}
	c.arrayHead(oidText, len(l), body)
	for _, s := range l {
		c.text(s)
	}
}

func (c *copyRows) int4s(l []int32) {
	c.arrayHead(oidInt4, len(l), 8*len(l))
	for _, v := range l {
		c.int4(v)
	}
}

// open starts a field whose bytes the caller appends to c.b, and returns
// where its size goes; close(at) writes it.
func (c *copyRows) open() int {
	at := len(c.b)
	c.size(0)
	return at
}

func (c *copyRows) close(at int) {
	binary.BigEndian.PutUint32(c.b[at:], uint32(len(c.b)-at-4))
}

// field writes a value already in binary form (appendVector's).
func (c *copyRows) field(b []byte) {
	c.size(len(b))
	c.b = append(c.b, b...)
}

// appendVector appends v in the binary form of a pgvector vector, or of a
// sparsevec (its non-zero elements) if sparse. prepareBatch encodes a batch's vectors with it beside its
// other work, off the write's path.
func appendVector(b []byte, v []float32, sparse bool) []byte {
	if !sparse {
		off := len(b)
		b = slices.Grow(b, 4+4*len(v))[:off+4+4*len(v)]
		binary.BigEndian.PutUint16(b[off:], uint16(len(v)))
		binary.BigEndian.PutUint16(b[off+2:], 0)
		for i, x := range v {
			binary.BigEndian.PutUint32(b[off+4+4*i:], math.Float32bits(x))
		}
		return b
	}
	var stack [maxSparseDim]int32 // the indexes of the non-zero elements
	idx := stack[:0]
	for i, x := range v {
		if x != 0 {
			idx = append(idx, int32(i))
		}
	}
	n := len(idx)
	off := len(b)
	b = slices.Grow(b, 12+8*n)[:off+12+8*n]
	binary.BigEndian.PutUint32(b[off:], uint32(len(v)))
	binary.BigEndian.PutUint32(b[off+4:], uint32(n))
	binary.BigEndian.PutUint32(b[off+8:], 0)
	off += 12
	for k, i := range idx {
		binary.BigEndian.PutUint32(b[off+4*k:], uint32(i)) // from 0
		binary.BigEndian.PutUint32(b[off+4*(n+k):], math.Float32bits(v[i]))
	}
	return b
}

// send ends the data and copies it into table's columns; c is not used
// again.
func (c *copyRows) send(ctx context.Context, tx pgx.Tx, table string, columns []string) error {
	c.b = binary.BigEndian.AppendUint16(c.b, math.MaxUint16) // -1: no more rows
	sql := "COPY " + pgx.Identifier{table}.Sanitize() + " ("
	for i, col := range columns {
		if i > 0 {
			sql += ", "
		}
		sql += pgx.Identifier{col}.Sanitize()
	}
	sql += ") FROM STDIN (FORMAT binary)"
	_, err := tx.Conn().PgConn().CopyFrom(ctx, bytes.NewReader(c.b), sql)
	// After a failure pgconn may return before its goroutine that reads
	// the data has stopped: the buffer is then left to it.
	if err == nil && cap(c.b) <= maxPooledCopyBytes {
		c.b = c.b[:0]
		copyRowsPool.Put(c)
	}
	return err
}
