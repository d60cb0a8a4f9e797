package longterm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// Record types inside a payload. recAdd and recAddSparse are the same
// record (an added record with its children and their vectors) and differ
// only in how the vectors are written: recAdd as dim float32s per child,
// recAddSparse as each child's non-zero entries (see encodeAdd). A reader
// of either gets the same addRecord.
//
// recAddFacts and recAddSparseFacts are recAdd and recAddSparse with a
// block of the record's validity and versions after its tags (see
// appendFacts); they are written only for a record that has some, so a
// store that never uses them stays readable by the previous release
// (format 1; a store that has them is format 2). recSeen says that a
// record's text was written again (Memory.Remember's duplicate).
const (
	recAdd            byte = 1
	recForget         byte = 2
	recAddSparse      byte = 3
	recAddFacts       byte = 4
	recAddSparseFacts byte = 5
	recSeen           byte = 6
)

// isAdd reports whether typ is an added record's type, in either vector
// encoding.
func isAdd(typ byte) bool {
	return typ == recAdd || typ == recAddSparse || typ == recAddFacts || typ == recAddSparseFacts
}

// addType returns the type of an added record's frame: with facts or
// without, vectors sparse or dense.
func addType(facts, sparse bool) byte {
	switch {
	case facts && sparse:
		return recAddSparseFacts
	case facts:
		return recAddFacts
	case sparse:
		return recAddSparse
	}
	return recAdd
}

// hasFacts reports whether r has validity or versions to log (a block
// that recAdd lacks).
func hasFacts(r *Record) bool {
	return !r.ValidFrom.IsZero() || !r.ValidUntil.IsZero() || r.Supersedes != "" || r.SupersededBy != "" ||
		r.Seen != 0 || !r.LastSeen.IsZero()
}

// Keys of the facts block's fields. A reader skips a key it does not know
// (each value has its length), so that later fields need no new type.
const (
	factValidFrom    = 1
	factValidUntil   = 2
	factSupersedes   = 3
	factSupersededBy = 4
	factSeen         = 5
	factLastSeen     = 6
)

// appendFacts appends r's facts block: the number of fields, then each as
// its key and its value's bytes (a time as varint seconds and uvarint
// nanoseconds, a string as is, a count as a uvarint).
func appendFacts(dst []byte, r *Record) []byte {
	var fields [][2]any
	if !r.ValidFrom.IsZero() {
		fields = append(fields, [2]any{factValidFrom, r.ValidFrom})
	}
	if !r.ValidUntil.IsZero() {
		fields = append(fields, [2]any{factValidUntil, r.ValidUntil})
	}
	if r.Supersedes != "" {
		fields = append(fields, [2]any{factSupersedes, r.Supersedes})
	}
	if r.SupersededBy != "" {
		fields = append(fields, [2]any{factSupersededBy, r.SupersededBy})
	}
	if r.Seen != 0 {
		fields = append(fields, [2]any{factSeen, r.Seen})
	}
	if !r.LastSeen.IsZero() {
		fields = append(fields, [2]any{factLastSeen, r.LastSeen})
	}
	dst = binary.AppendUvarint(dst, uint64(len(fields)))
	var val []byte
	for _, f := range fields {
		val = val[:0]
		switch v := f[1].(type) {
		case time.Time:
			val = appendTime(val, v)
		case string:
			val = append(val, v...)
		case int:
			val = binary.AppendUvarint(val, uint64(v))
		}
		dst = binary.AppendUvarint(dst, uint64(f[0].(int)))
		dst = appendString(dst, string(val))
	}
	return dst
}

func appendTime(dst []byte, t time.Time) []byte {
	dst = binary.AppendVarint(dst, t.Unix())
	return binary.AppendUvarint(dst, uint64(t.Nanosecond()))
}

// time reads a time as appendTime writes it.
func (d *decoder) time() time.Time {
	sec := d.varint()
	nsec := d.uvarint()
	if d.err == nil && nsec >= 1e9 {
		d.err = fmt.Errorf("bad nanoseconds %d", nsec)
	}
	if d.err != nil {
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

// facts reads a facts block (appendFacts) into r.
func (d *decoder) facts(r *Record) {
	n := d.count(2)
	for range n {
		key := d.uvarint()
		v := &decoder{b: d.bytes(d.uvarint())}
		if d.err != nil {
			return
		}
		switch key {
		case factValidFrom:
			r.ValidFrom = v.time()
		case factValidUntil:
			r.ValidUntil = v.time()
		case factSupersedes:
			r.Supersedes = string(v.b)
		case factSupersededBy:
			r.SupersededBy = string(v.b)
		case factSeen:
			r.Seen = int(min(v.uvarint(), math.MaxInt32))
		case factLastSeen:
			r.LastSeen = v.time()
		}
		if v.err != nil {
			d.err = fmt.Errorf("fact %d: %w", key, v.err)
			return
		}
	}
}

// encodeSeen appends the payload of a recSeen record: id's text was
// written again at t.
func encodeSeen(dst []byte, id string, t time.Time) []byte {
	dst = append(dst, recSeen)
	dst = appendString(dst, id)
	return appendTime(dst, t)
}

func decodeSeen(p []byte) (string, time.Time, error) {
	d := &decoder{b: p}
	id := d.string()
	t := d.time()
	if d.err == nil && len(d.b) != 0 {
		d.err = errors.New("trailing bytes")
	}
	if d.err != nil {
		return "", time.Time{}, fmt.Errorf("%w: %v", ErrCorrupt, d.err)
	}
	return id, t, nil
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
	vc.b[start] = addType(hasFacts(rec), vc.sparse)
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
	facts := hasFacts(rec)
	dst = append(dst, addType(facts, vc.sparse))
	dst = appendString(dst, rec.ID)
	dst = appendString(dst, rec.Namespace)
	dst = appendString(dst, rec.Speaker)
	if rec.Time.IsZero() {
		dst = append(dst, 0)
	} else {
		dst = append(dst, 1)
		dst = appendTime(dst, rec.Time)
	}
	dst = binary.AppendUvarint(dst, uint64(len(rec.Tags)))
	for _, t := range rec.Tags {
		dst = appendString(dst, t)
	}
	if facts {
		dst = appendFacts(dst, rec)
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
		a.rec.Time = d.time()
	}
	if nt := d.count(1); nt > 0 {
		a.rec.Tags = make([]string, nt)
		for i := range a.rec.Tags {
			a.rec.Tags[i] = d.string()
		}
	}
	if typ == recAddFacts || typ == recAddSparseFacts {
		d.facts(&a.rec)
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
			if d.err == nil && (c.start < 0 || c.start > c.end || c.end > len(a.rec.Text)) {
				d.err = fmt.Errorf("child span [%d,%d) outside text of %d bytes", c.start, c.end, len(a.rec.Text))
			}
			if d.err == nil {
				c.text = a.rec.Text[c.start:c.end]
			}
		} else {
			c.text = d.string()
		}
	}
	// No vector of a larger dim fits a frame; and a larger one could
	// make the dense size check below wrap around.
	if dim := d.uvarint(); d.err == nil && dim > maxPayload/4 {
		d.err = fmt.Errorf("vectors: dim %d", dim)
	} else {
		a.dim = int(dim)
	}
	if typ == recAddSparse || typ == recAddSparseFacts {
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
	case recAdd, recAddSparse, recForget, recAddFacts, recAddSparseFacts, recSeen:
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
