package longterm

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"slices"

	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory/internal/ranking"
)

// The keyword path's turn index is kept in each snapshot of a long-term
// store (snapMeta.Turns), so that the first search of a namespace after
// Open does not build it from every record's text: building is most of
// what a command-line search of a large store costs. The file is a cache:
// one that is missing, damaged, written by another tokenizer or that does
// not match the snapshot's records is ignored with a warning, and the
// index is built from the records on first use as before.
//
// Format, version 1 (little endian; varints as encoding/binary):
//
//	magic "AMTU" | version uint16 | flags uint16 (bit 0: an index header
//	was in use, WithIndexHeader)
//	uvarint namespaces, then per namespace in name order:
//	  string name | uvarint next id | uvarint next episode |
//	  varint the newest record's id (-1: none)
//	  uvarint records, then per record in id order: uvarint id (the
//	    first) or the gap to the previous, string record id,
//	    uvarint episode
//	  uvarint links, then per link in ascending order of the earlier
//	    record: uvarint its id or the gap to the previous link's,
//	    uvarint the later record's id minus the earlier's
//	  uvarint length, the text index (keyword.Index.Export)
//	  uvarint length, the episode index (keyword.Index.Export)
//	crc32 (Castagnoli) of everything above, uint32
//
// A string is a uvarint length and its bytes. Who spoke is not stored: it
// is read from the records.
const (
	turnsMagic   = "AMTU"
	turnsVersion = 1
	turnsHeader  = 1 // flags bit: an index header was in use
)

// builtNamespaces returns, in order, the namespaces whose index is built and holds
// records (one whose records were all forgotten has nothing to keep).
func (ti *turnIndex) builtNamespaces() []string {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	var out []string
	for ns, n := range ti.ns {
		if len(n.parents) > 0 {
			out = append(out, ns)
		}
	}
	slices.Sort(out)
	return out
}

// writeTurns writes the turn index of namespaces nss (in order), building
// the ones no search has built yet. m.wmu must be held (nothing changes);
// searches go on.
func (m *Memory) writeTurns(w *bufio.Writer, nss []string) error {
	ti := m.turnIdx()
	crc := crc32.New(castagnoli)
	mw := io.MultiWriter(w, crc)
	var b []byte
	str := func(s string) { b = binary.AppendUvarint(b, uint64(len(s))); b = append(b, s...) }
	flush := func() error {
		_, err := mw.Write(b)
		b = b[:0]
		return err
	}
	b = append(b, turnsMagic...)
	b = binary.LittleEndian.AppendUint16(b, turnsVersion)
	var flags uint16
	if m.opts.header != nil {
		flags |= turnsHeader
	}
	b = binary.LittleEndian.AppendUint16(b, flags)
	b = binary.AppendUvarint(b, uint64(len(nss)))
	var idx bytes.Buffer
	for i, n := range ti.getAll(nss, m) {
		ns := nss[i]
		str(ns)
		b = binary.AppendUvarint(b, uint64(n.next))
		b = binary.AppendUvarint(b, uint64(n.nextEpisode))
		last := int64(-1)
		if n.last != nil {
			last = n.ids[n.last]
		}
		b = binary.AppendVarint(b, last)
		ids := slices.Sorted(maps.Keys(n.parents))
		b = binary.AppendUvarint(b, uint64(len(ids)))
		prev := int64(0)
		for _, id := range ids {
			b = binary.AppendUvarint(b, uint64(id-prev))
			prev = id
			str(n.parents[id].rec.ID)
			b = binary.AppendUvarint(b, uint64(n.episodeOf.at(id)))
			if len(b) > 1<<16 {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		leaders := n.follower.keys()
		b = binary.AppendUvarint(b, uint64(len(leaders)))
		prev = 0
		for _, l := range leaders {
			b = binary.AppendUvarint(b, uint64(l-prev))
			b = binary.AppendUvarint(b, uint64(n.follower.at(l)-l))
			prev = l
		}
		for _, ix := range []*keyword.Index{n.text, n.episodes} {
			idx.Reset()
			if err := ix.Export(&idx); err != nil {
				return err
			}
			b = binary.AppendUvarint(b, uint64(idx.Len()))
			if err := flush(); err != nil {
				return err
			}
			if _, err := mw.Write(idx.Bytes()); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return binary.Write(w, binary.LittleEndian, crc.Sum32())
}

// errTurns marks a turn-index file that does not match its snapshot.
var errTurns = errors.New("turn index does not match the snapshot")

// loadTurns installs the turn indexes of the snapshot file at path. The
// snapshot's parents must be loaded; nothing else may use the memory yet.
// On error nothing is installed (the indexes are built on first use).
func (m *Memory) loadTurns(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	body, err := checkedFile(data, turnsMagic, turnsVersion)
	if err == nil && len(body) < 2 {
		err = errShort
	}
	if err != nil {
		if errors.Is(err, ErrVersion) {
			return err
		}
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	flags := binary.LittleEndian.Uint16(body)
	if hdr := flags&turnsHeader != 0; hdr != (m.opts.header != nil) {
		return fmt.Errorf("%w: written with an index header %v, opened with one %v", errTurns, hdr, m.opts.header != nil)
	}
	perNS := map[string]int{}
	for _, p := range m.parents {
		perNS[p.rec.Namespace]++
	}
	ti := m.turnIdx()
	d := &decoder{b: body[2:]}
	built := map[string]*nsTurns{}
	for range d.count(1) {
		ns, n, err := m.decodeTurns(d, ti, perNS)
		if err != nil {
			return err
		}
		if built[ns] != nil {
			return fmt.Errorf("%w: namespace %q twice", errTurns, ns)
		}
		built[ns] = n
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%d bytes after the last namespace", len(d.b))
	}
	if d.err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, d.err)
	}
	ti.mu.Lock()
	defer ti.mu.Unlock()
	maps.Copy(ti.ns, built)
	return nil
}

// decodeTurns reads one namespace's turn index and checks it against the
// loaded records (perNS: the records of each namespace).
func (m *Memory) decodeTurns(d *decoder, ti *turnIndex, perNS map[string]int) (string, *nsTurns, error) {
	ns := d.string()
	n := newNSTurns(ti)
	n.next = int64(d.uvarint())
	n.nextEpisode = int64(d.uvarint())
	last := d.varint()
	nrec := d.count(3)
	if d.err != nil {
		return "", nil, fmt.Errorf("%w: %w", ErrCorrupt, d.err)
	}
	if nrec == 0 || nrec != perNS[ns] {
		return "", nil, fmt.Errorf("%w: namespace %q: %d records, the snapshot holds %d", errTurns, ns, nrec, perNS[ns])
	}
	id := int64(0)
	for i := range nrec {
		gap := int64(d.uvarint())
		if i > 0 && gap == 0 {
			return "", nil, fmt.Errorf("%w: namespace %q: record ids not ascending", ErrCorrupt, ns)
		}
		id += gap
		rid := d.string()
		ep := int64(d.uvarint())
		if d.err != nil {
			return "", nil, fmt.Errorf("%w: %w", ErrCorrupt, d.err)
		}
		p := m.parents[rid]
		if p == nil || p.rec.Namespace != ns || id >= n.next || ep >= n.nextEpisode {
			return "", nil, fmt.Errorf("%w: namespace %q: record %q (id %d, episode %d)", errTurns, ns, rid, id, ep)
		}
		if _, dup := n.ids[p]; dup {
			return "", nil, fmt.Errorf("%w: namespace %q: record %q twice", errTurns, ns, rid)
		}
		n.place(ti.tok, p, id, ep)
	}
	if last >= 0 {
		if n.last = n.parents[last]; n.last == nil {
			return "", nil, fmt.Errorf("%w: namespace %q: newest record %d unknown", errTurns, ns, last)
		}
	}
	l := int64(0)
	for range d.count(2) {
		l += int64(d.uvarint())
		f := l + int64(d.uvarint())
		if d.err != nil {
			return "", nil, fmt.Errorf("%w: %w", ErrCorrupt, d.err)
		}
		_, led := n.follower.get(l)
		_, followed := n.leader.get(f)
		if n.parents[l] == nil || n.parents[f] == nil || f == l || led || followed {
			return "", nil, fmt.Errorf("%w: namespace %q: link %d → %d", errTurns, ns, l, f)
		}
		n.follower.set(l, f)
		n.leader.set(f, l)
	}
	for _, ix := range []*keyword.Index{n.text, n.episodes} {
		b := d.bytes(d.uvarint())
		if d.err != nil {
			return "", nil, fmt.Errorf("%w: %w", ErrCorrupt, d.err)
		}
		if err := ix.Import(bytes.NewReader(b)); err != nil {
			return "", nil, err
		}
	}
	if n.text.Len() != nrec || n.episodes.Len() != len(n.episodeLen) {
		return "", nil, fmt.Errorf("%w: namespace %q: %d texts and %d episodes indexed for %d records in %d episodes",
			errTurns, ns, n.text.Len(), n.episodes.Len(), nrec, len(n.episodeLen))
	}
	return ns, n, nil
}

// newNSTurns returns an empty namespace index of ti.
func newNSTurns(ti *turnIndex) *nsTurns {
	return &nsTurns{
		text: keyword.NewIndex(ti.tok, ti.opts...),
		ids:  map[*parent]int64{}, parents: map[int64]*parent{},
		speakerTerms: ranking.SpeakerTerms{}, speakers: map[string]int{},
		episodes:   keyword.NewIndex(ti.tok, ti.opts...),
		episodeLen: map[int64]int{},
	}
}
