package keyword

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
)

// Errors returned by [Index.Import]; test with errors.Is.
var (
	// ErrCorrupt: the snapshot is truncated, fails its checksum or does not
	// parse. The index is unchanged; rebuild it from the texts.
	ErrCorrupt = errors.New("keyword: corrupt snapshot")
	// ErrVersion: the snapshot has a format version this build cannot read.
	ErrVersion = errors.New("keyword: unsupported snapshot version")
	// ErrTokenizer: the snapshot was built by a tokenizer that cuts text
	// differently; rebuild the index from the texts.
	ErrTokenizer = errors.New("keyword: snapshot made by a different tokenizer")
)

// Snapshot format, version 1 (little endian, varints as encoding/binary):
//
//	magic "AMKW" | version uint16 | reserved uint16
//	tokenizer name: uvarint length, bytes
//	terms: uvarint count, then each: uvarint length, bytes (sorted)
//	docs:  uvarint count, then each (sorted by id): varint id,
//	       uvarint length, uvarint nterms, nterms × (uvarint term-index
//	       delta, uvarint tf)
//	crc32 (Castagnoli) of everything above, uint32
const (
	magic         = "AMKW"
	formatVersion = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc(s string) uint32 { return crc32.Checksum([]byte(s), castagnoli) }

// tokenizerName is what a snapshot records about the tokenizer.
func tokenizerName(t Tokenizer) string {
	if n, ok := t.(interface{ Name() string }); ok {
		return n.Name()
	}
	return fmt.Sprintf("%T", t)
}

// Export writes a snapshot of the index to w. The bytes depend only on
// the index's contents (not on the order of Adds), so equal indexes give
// equal snapshots. Export holds a read lock: searches continue, writes
// wait.
func (ix *Index) Export(w io.Writer) error {
	ix.mu.RLock()
	defer ix.mu.RUnlock()

	h := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(w, h), 1<<16)
	var buf [binary.MaxVarintLen64]byte
	uv := func(v uint64) { bw.Write(buf[:binary.PutUvarint(buf[:], v)]) }
	str := func(s string) { uv(uint64(len(s))); bw.WriteString(s) }

	bw.WriteString(magic)
	binary.Write(bw, binary.LittleEndian, [2]uint16{formatVersion, 0})
	str(tokenizerName(ix.tok))

	// Live terms, sorted; remap old term ids to their rank.
	live := make([]uint32, 0, len(ix.terms))
	for tid, p := range ix.postings {
		if len(p) > 0 {
			live = append(live, uint32(tid))
		}
	}
	slices.SortFunc(live, func(a, b uint32) int { return cmp.Compare(ix.terms[a], ix.terms[b]) })
	rank := make([]uint32, len(ix.terms))
	uv(uint64(len(live)))
	for i, tid := range live {
		rank[tid] = uint32(i)
		str(ix.terms[tid])
	}

	ids := make([]int64, 0, ix.ndocs)
	for id := range ix.slots {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	uv(uint64(len(ids)))
	var pairs [][2]uint32
	for _, id := range ids {
		d := &ix.docs[ix.slots[id]]
		bw.Write(buf[:binary.PutVarint(buf[:], id)])
		uv(uint64(d.length))
		pairs = pairs[:0]
		for _, ref := range d.terms {
			pairs = append(pairs, [2]uint32{rank[ref.term], ix.postings[ref.term][ref.pos].tf})
		}
		slices.SortFunc(pairs, func(a, b [2]uint32) int { return cmp.Compare(a[0], b[0]) })
		uv(uint64(len(pairs)))
		prev := uint32(0)
		for _, p := range pairs {
			uv(uint64(p[0] - prev))
			uv(uint64(p[1]))
			prev = p[0]
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("keyword: export: %w", err)
	}
	if err := binary.Write(w, binary.LittleEndian, h.Sum32()); err != nil {
		return fmt.Errorf("keyword: export: %w", err)
	}
	return nil
}

// Import replaces the index's contents with the snapshot read from r, as
// written by [Index.Export]. The snapshot's tokenizer must cut text as the
// index's does, else the error wraps [ErrTokenizer]; a damaged snapshot
// gives [ErrCorrupt], an unknown format [ErrVersion]. On error the index
// is unchanged. BM25 parameters are the index's own, not the snapshot's.
func (ix *Index) Import(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("keyword: import: %w", err)
	}
	if len(data) < len(magic)+4+4 || string(data[:len(magic)]) != magic {
		return fmt.Errorf("%w: not a keyword snapshot (bad magic or too short)", ErrCorrupt)
	}
	if v := binary.LittleEndian.Uint16(data[4:]); v != formatVersion {
		return fmt.Errorf("%w: version %d, this build reads %d", ErrVersion, v, formatVersion)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if got := crc32.Checksum(body, castagnoli); got != sum {
		return fmt.Errorf("%w: checksum %08x, want %08x", ErrCorrupt, got, sum)
	}

	d := decoder{b: body, off: 8}
	name := d.str()
	if want := tokenizerName(ix.tok); d.err == nil && name != want {
		return fmt.Errorf("%w: snapshot %q, index %q", ErrTokenizer, name, want)
	}
	nt := ix.fresh()
	nterms := d.count()
	nt.terms = make([]string, 0, nterms)
	nt.postings = make([][]posting, nterms)
	for i := 0; i < nterms && d.err == nil; i++ {
		t := d.str()
		if i > 0 && t <= nt.terms[i-1] {
			d.fail("terms out of order")
		}
		nt.termIDs[t] = uint32(i)
		nt.terms = append(nt.terms, t)
	}
	ndocs := d.count()
	nt.docs = make([]doc, 0, ndocs)
	for i := 0; i < ndocs && d.err == nil; i++ {
		id := d.varint()
		if i > 0 && id <= nt.docs[i-1].id {
			d.fail("document ids out of order")
		}
		length := d.uvarint()
		n := d.count()
		refs := make([]termRef, 0, n)
		var tid, sumTF uint64
		for j := 0; j < n && d.err == nil; j++ {
			delta, tf := d.uvarint(), d.uvarint()
			tid += delta
			switch {
			case j > 0 && delta == 0, tid >= uint64(nterms), tf == 0 || tf > length:
				d.fail("bad term reference")
				continue
			}
			sumTF += tf
			refs = append(refs, termRef{term: uint32(tid), pos: uint32(len(nt.postings[tid]))})
			nt.postings[tid] = append(nt.postings[tid], posting{slot: uint32(i), tf: uint32(tf)})
		}
		if d.err == nil && (sumTF != length || length > 1<<32-1) {
			d.fail("document length does not match its terms")
		}
		nt.docs = append(nt.docs, doc{id: id, length: uint32(length), terms: refs, used: true})
		nt.slots[id] = uint32(i)
		nt.totalLen += int64(length)
	}
	if d.err == nil && d.off != len(d.b) {
		d.fail("trailing bytes")
	}
	if d.err != nil {
		return d.err
	}
	nt.ndocs = len(nt.docs)

	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.termIDs, ix.terms, ix.postings = nt.termIDs, nt.terms, nt.postings
	ix.slots, ix.docs, ix.free = nt.slots, nt.docs, nil
	ix.ndocs, ix.totalLen = nt.ndocs, nt.totalLen
	return nil
}

// fresh returns an empty index with ix's settings, for building off-lock.
func (ix *Index) fresh() *Index {
	nt := &Index{tok: ix.tok, k1: ix.k1, b: ix.b}
	nt.reset()
	return nt
}

// decoder reads a snapshot body; the first error sticks.
type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s at offset %d", ErrCorrupt, what, d.off)
	}
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b[d.off:])
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.off += n
	return v
}

// count reads a count, which can never exceed the bytes left (every item
// takes at least one byte); that bounds allocations on corrupt input.
func (d *decoder) count() int {
	v := d.uvarint()
	if v > uint64(len(d.b)-d.off) {
		d.fail("count larger than the snapshot")
		return 0
	}
	return int(v)
}

func (d *decoder) str() string {
	n := d.count()
	if d.err != nil {
		return ""
	}
	s := string(d.b[d.off : d.off+n])
	d.off += n
	return s
}
