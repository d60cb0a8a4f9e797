package keyword

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/agentmem/agentmem/internal/errs"
)

// Errors returned by [Index.Import]; test with errors.Is.
var (
	// ErrCorrupt: the snapshot is truncated, fails its checksum or does not
	// parse. The index is unchanged; rebuild it from the texts. It is the
	// shared errs.Corrupt (also vdb.ErrCorrupt).
	ErrCorrupt = errs.Corrupt
	// ErrVersion: the snapshot has a format version this build cannot read.
	// It is the shared errs.Version.
	ErrVersion = errs.Version
	// ErrTokenizer: the snapshot was built by a tokenizer that cuts text
	// differently; rebuild the index from the texts.
	ErrTokenizer = errors.New("keyword: snapshot made by a different tokenizer")
)

// Snapshot format, version 1 (little endian; varints as encoding/binary):
//
//	magic "AMKW" | version uint16 | reserved uint16
//	tokenizer name: uvarint length, bytes
//	documents: uvarint count, then per document in id order:
//	           varint id (the first absolute, then the gap to the previous),
//	           uvarint length in tokens
//	terms:     uvarint count, uvarint total postings, then per term in
//	           byte order: uvarint length, bytes, uvarint df, then df ×
//	           (uvarint document number gap, uvarint tf), ascending
//	crc32 (Castagnoli) of everything above, uint32
//
// Postings are stored term by term so that Import fills its arrays
// without sorting or re-tokenizing anything.
const (
	magic         = "AMKW"
	formatVersion = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc(s string) uint32 { return crc32.Checksum([]byte(s), castagnoli) }

// TokenizerName identifies what t does: the Name of a tokenizer that has
// one (NewTokenizer's: its version, Chinese mode, stop words and
// stemming), its type otherwise. A store records it beside the terms it
// keeps, so that terms cut by another tokenizer are not read as this
// one's (a snapshot records it; memory/postgres's manifest too).
func TokenizerName(t Tokenizer) string {
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
	str(TokenizerName(ix.tok))

	// Documents in id order; rank maps a slot to its number in that order.
	ids := make([]int64, 0, len(ix.slots))
	for id := range ix.slots {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	rank := make([]uint32, len(ix.ids))
	uv(uint64(len(ids)))
	prev := int64(0)
	for i, id := range ids {
		slot := ix.slots[id]
		rank[slot] = uint32(i)
		bw.Write(buf[:binary.PutVarint(buf[:], id-prev)])
		uv(uint64(ix.lens[slot]))
		prev = id
	}

	// Live terms in byte order.
	live := make([]uint32, 0, len(ix.terms))
	total := 0
	for tid, p := range ix.postings {
		if len(p) > 0 {
			live = append(live, uint32(tid))
			total += len(p)
		}
	}
	slices.SortFunc(live, func(a, b uint32) int { return cmp.Compare(ix.terms[a], ix.terms[b]) })
	uv(uint64(len(live)))
	uv(uint64(total))
	var list []posting
	for _, tid := range live {
		str(ix.terms[tid])
		list = append(list[:0], ix.postings[tid]...)
		for i := range list {
			list[i].slot = rank[list[i].slot]
		}
		slices.SortFunc(list, func(a, b posting) int { return cmp.Compare(a.slot, b.slot) })
		uv(uint64(len(list)))
		last := uint32(0)
		for _, p := range list {
			uv(uint64(p.slot - last))
			uv(uint64(p.tf))
			last = p.slot
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
	// Check magic, then version, then checksum, then parse.
	if len(data) < len(magic)+4+4 || string(data[:len(magic)]) != magic {
		return fmt.Errorf("keyword: snapshot: %w: not a keyword snapshot (bad magic or too short)", ErrCorrupt)
	}
	if v := binary.LittleEndian.Uint16(data[4:]); v != formatVersion {
		return fmt.Errorf("keyword: snapshot: %w: version %d, this build reads %d", ErrVersion, v, formatVersion)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if got := crc32.Checksum(body, castagnoli); got != sum {
		return fmt.Errorf("keyword: snapshot: %w: checksum %08x, want %08x", ErrCorrupt, got, sum)
	}
	d := decoder{b: body, off: 8}
	name := d.str()
	if want := TokenizerName(ix.tok); d.err == nil && name != want {
		return fmt.Errorf("%w: snapshot %q, index %q", ErrTokenizer, name, want)
	}
	st, err := d.state()
	if err != nil {
		return err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.termIDs, ix.terms, ix.postings = st.termIDs, st.terms, st.postings
	ix.slots, ix.ids, ix.lens, ix.refs = st.slots, st.ids, st.lens, st.refs
	ix.free, ix.totalLen = nil, st.totalLen
	return nil
}

// state parses the documents and terms of a snapshot into a new index
// state, checking every count and reference.
func (d *decoder) state() (*Index, error) {
	st := &Index{}
	ndocs := d.count()
	st.ids = make([]int64, ndocs)
	st.lens = make([]uint32, ndocs)
	st.slots = make(map[int64]uint32, ndocs)
	prev := int64(0)
	for i := 0; i < ndocs && d.err == nil; i++ {
		gap := d.varint()
		if i > 0 && gap <= 0 {
			d.fail("document ids out of order")
		}
		id := prev + gap
		if i > 0 && id < prev {
			d.fail("document id overflows")
		}
		length := d.uvarint()
		if length > math.MaxUint32 {
			d.fail("document too long")
		}
		st.ids[i], st.lens[i], st.slots[id] = id, uint32(length), uint32(i)
		st.totalLen += int64(length)
		prev = id
	}

	nterms, total := d.count(), d.count()
	st.terms = make([]string, nterms)
	st.termIDs = make(map[string]uint32, nterms)
	st.postings = make([][]posting, nterms)
	arena := make([]posting, total) // all posting lists, back to back
	var termBytes strings.Builder
	termEnds := make([]int, nterms)
	sumTF := make([]uint64, ndocs)
	nrefs := make([]uint32, ndocs)
	used := 0
	var prevTerm []byte
	for t := 0; t < nterms && d.err == nil; t++ {
		term := d.bytes()
		if t > 0 && bytes.Compare(term, prevTerm) <= 0 {
			d.fail("terms out of order")
		}
		prevTerm = term
		termBytes.Write(term)
		termEnds[t] = termBytes.Len()
		df := d.count()
		if df == 0 || df > total-used {
			d.fail("bad document frequency")
			break
		}
		list := arena[used : used+df : used+df]
		used += df
		slot := uint64(0)
		for j := 0; j < df && d.err == nil; j++ {
			gap, tf := d.uvarint(), d.uvarint()
			slot += gap
			if j > 0 && gap == 0 || slot >= uint64(ndocs) || tf == 0 || tf > math.MaxUint32 {
				d.fail("bad posting")
				break
			}
			list[j] = posting{slot: uint32(slot), tf: uint32(tf)}
			sumTF[slot] += tf
			nrefs[slot]++
		}
		st.postings[t] = list
	}
	if d.err == nil && used != total {
		d.fail("posting count does not match")
	}
	if d.err == nil && d.off != len(d.b) {
		d.fail("trailing bytes")
	}
	for i := 0; i < ndocs && d.err == nil; i++ {
		if sumTF[i] != uint64(st.lens[i]) {
			d.fail(fmt.Sprintf("document %d: length does not match its terms", st.ids[i]))
		}
	}
	if d.err != nil {
		return nil, d.err
	}

	// Terms: one string, sliced.
	all := termBytes.String()
	start := 0
	for t, end := range termEnds {
		st.terms[t] = all[start:end]
		st.termIDs[st.terms[t]] = uint32(t)
		start = end
	}
	// Each document's references, from one arena, in term order.
	refArena := make([]termRef, total)
	st.refs = make([][]termRef, ndocs)
	off := 0
	for i, n := range nrefs {
		st.refs[i] = refArena[off : off : off+int(n)]
		off += int(n)
	}
	for t, list := range st.postings {
		for pos, p := range list {
			st.refs[p.slot] = append(st.refs[p.slot], termRef{term: uint32(t), pos: uint32(pos)})
		}
	}
	return st, nil
}

// decoder reads a snapshot body; the first error sticks.
type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("keyword: snapshot: %w: %s at offset %d", ErrCorrupt, what, d.off)
	}
}

func (d *decoder) uvarint() uint64 { return readVarint(d, binary.Uvarint) }

func (d *decoder) varint() int64 { return readVarint(d, binary.Varint) }

// readVarint reads one varint with read (binary.Uvarint or binary.Varint).
func readVarint[T int64 | uint64](d *decoder, read func([]byte) (T, int)) T {
	if d.err != nil {
		return 0
	}
	v, n := read(d.b[d.off:])
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

func (d *decoder) str() string { return string(d.bytes()) }

// bytes returns a length-prefixed byte string, aliasing the snapshot.
func (d *decoder) bytes() []byte {
	n := d.count()
	if d.err != nil {
		return nil
	}
	b := d.b[d.off : d.off+n]
	d.off += n
	return b
}
