package longterm

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/agentmem/agentmem/chunk"
	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/memory/engine"
	"github.com/agentmem/agentmem/vdb"
)

// kindShort is the kind memory/short records in a manifest (it imports
// this package, so its constant cannot be used here).
const kindShort = "short"

// InferKind tells from the files of the store directory dir, without its
// manifest, which kind of store it is, so that a store whose manifest is
// lost is repaired as what it was. A record indexed as more than one chunk
// (or as a chunk that is not its whole text), or a snapshot that keeps a
// keyword index, makes it long-term ([KindLong]): a short-term store does
// neither. A record indexed whole that the long-term chunker (with its
// default settings) splits makes it short-term ("short"). When the files
// tell neither — no record, or only records too short to split — kind is
// "". why says what told. It reads every intact record of the log and the
// snapshot's records, and does not lock the store.
func InferKind(ctx context.Context, dir string) (kind, why string, err error) {
	var recs []*addRecord
	data, err := os.ReadFile(filepath.Join(dir, logFileName))
	switch {
	case err == nil:
		for _, f := range logFrames(data, 0).frames {
			typ, body, err := decodeRecord(f.payload)
			if err != nil || !isAdd(typ) {
				continue
			}
			if a, err := decodeAdd(typ, body); err == nil {
				recs = append(recs, a)
			}
		}
	case !errors.Is(err, os.ErrNotExist):
		return "", "", fmt.Errorf("longterm: infer kind: %w", err)
	}
	probe := &Memory{dir: dir, parents: map[string]*parent{}, children: map[int64]childRef{}}
	if meta, _, err := probe.readSnapMeta(); err == nil && meta != nil {
		if meta.Turns != "" {
			return KindLong, fmt.Sprintf("its snapshot keeps a keyword index (%s), which only a long-term store has", meta.Turns), nil
		}
		if probe.loadParents(filepath.Join(dir, meta.Parents)) == nil {
			for _, p := range probe.parents {
				recs = append(recs, &addRecord{rec: p.rec, children: p.children})
			}
		}
	}
	for _, a := range recs {
		if !indexedWhole(a) {
			return KindLong, fmt.Sprintf("record %q is indexed as %d chunks, as only a long-term store indexes a record", a.rec.ID, len(a.children)), nil
		}
	}
	for _, a := range recs {
		if err := ctx.Err(); err != nil {
			return "", "", err
		}
		chunks, err := chunk.SplitContext(ctx, a.rec.Text, &chunk.Options{MaxBytes: -1})
		if err != nil {
			continue
		}
		n := 0
		for _, c := range chunks {
			if engine.HasWord(c.Text) {
				n++
			}
		}
		if n > 1 {
			return kindShort, fmt.Sprintf("record %q is indexed whole, as only a short-term store indexes a record of %d chunks", a.rec.ID, n), nil
		}
	}
	return "", fmt.Sprintf("none of its %d records tells: each is one short chunk", len(recs)), nil
}

// indexedWhole reports whether a record is indexed as one chunk that is its
// whole text, as a short-term store indexes every record.
func indexedWhole(a *addRecord) bool {
	return len(a.children) == 1 && a.children[0].start == 0 && a.children[0].end == len(a.rec.Text)
}

// logFrames reads the frames of a whole log file as salvageFrames does,
// with the format its header names or, without a usable header, the one
// that finds more frames. dim 0 keeps records of any dimension.
func logFrames(data []byte, dim int) salvaged {
	if len(data) >= logHeaderSize && string(data[:6]) == logMagic {
		switch v := binary.LittleEndian.Uint16(data[6:]); v {
		case logVersion, logVersion1:
			return salvageFrames(data, v, dim)
		}
	}
	s2, s1 := salvageFrames(data, logVersion, dim), salvageFrames(data, logVersion1, dim)
	if len(s1.frames) > len(s2.frames) {
		return s1
	}
	return s2
}

// vectorDim returns the dimension of most of the intact records' vectors
// in the log data, and how many records have it (0, 0 without any).
func vectorDim(data []byte) (dim, n int) {
	count := map[int]int{}
	for _, f := range logFrames(data, 0).frames {
		if typ, body, err := decodeRecord(f.payload); err == nil && isAdd(typ) {
			if a, err := decodeAdd(typ, body); err == nil {
				count[a.dim]++
			}
		}
	}
	for d, c := range count {
		if c > n || (c == n && d < dim) {
			dim, n = d, c
		}
	}
	return dim, n
}

// checkRepairEmbedder refuses a repair with an embedder that cannot have
// built the vectors the log holds (its dimension is not theirs), before
// anything is written: a repair with it would drop every record as
// damaged. The manifest's embedder is what a repair uses unless the caller
// states another, so a manifest that names the wrong one is fixed by
// stating the right one.
func (m *Memory) checkRepairEmbedder(dir string, data []byte, got Manifest, gotErr error) error {
	vdim, n := vectorDim(data)
	if n == 0 || vdim == m.dim {
		return nil
	}
	wrong := ""
	if gotErr == nil && got.Embedder == m.emb.Name() {
		wrong = fmt.Sprintf(" (its manifest names %s (dim %d): the manifest is wrong)", got.Embedder, got.Dim)
	}
	return fmt.Errorf("%w: the %d records in %s have vectors of dim %d, but %s makes vectors of dim %d%s: repair with the embedder that built them",
		ErrEmbedderMismatch, n, filepath.Join(dir, logFileName), vdim, m.emb.Name(), m.dim, wrong)
}

// restoreFromSnapshot returns the log payloads of the records the old
// snapshot holds that the salvaged log (payloads) neither adds nor forgets
// — the log lost them (deleted, cut short, replaced) — in their old log
// order, with their chunks re-embedded (the log carried their vectors, the
// snapshot's vector files belong to a backend) and their chunk ids after
// every id the log uses. It returns their ids too.
func (m *Memory) restoreFromSnapshot(ctx context.Context, old map[string]*parent, payloads [][]byte) ([][]byte, []string, error) {
	mentioned := map[string]bool{}
	next := int64(0)
	for _, p := range payloads {
		typ, body, err := decodeRecord(p)
		if err != nil {
			continue
		}
		if typ == recForget {
			if id, err := decodeForget(body); err == nil {
				mentioned[id] = true
			}
			continue
		}
		if a, err := decodeAdd(typ, body); err == nil {
			mentioned[a.rec.ID] = true
			for _, c := range a.children {
				next = max(next, c.id+1)
			}
		}
	}
	var lost []*parent
	for id, p := range old {
		if !mentioned[id] {
			lost = append(lost, p)
		}
		for _, c := range p.children {
			next = max(next, c.id+1)
		}
	}
	if len(lost) == 0 {
		return nil, nil, nil
	}
	slices.SortFunc(lost, func(a, b *parent) int { return cmp.Or(cmp.Compare(a.off, b.off), cmp.Compare(a.rec.ID, b.rec.ID)) })
	var texts []string
	for _, p := range lost {
		header := m.header(&p.rec)
		for _, c := range p.children {
			texts = append(texts, header+c.text)
		}
	}
	vecs, err := embed.EmbedAll(ctx, m.emb, texts, embedBatch)
	if err != nil {
		return nil, nil, fmt.Errorf("longterm: repair: re-embed the snapshot's records: %w", err)
	}
	out := make([][]byte, 0, len(lost))
	ids := make([]string, 0, len(lost))
	k := 0
	for _, p := range lost {
		children := slices.Clone(p.children)
		for i := range children {
			children[i].id = next
			next++
		}
		pv := vecs[k : k+len(children)]
		k += len(children)
		for _, v := range pv {
			if err := vdb.CheckVector(v, m.dim); err != nil {
				return nil, nil, fmt.Errorf("longterm: repair: embedder %s: %w", m.emb.Name(), err)
			}
		}
		out = append(out, encodeAdd(nil, &p.rec, children, m.dim, pv))
		ids = append(ids, p.rec.ID)
	}
	return out, ids, nil
}
