package longterm

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/internal/parallel"
	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory/internal/fact"
	"github.com/agentmem/agentmem/semantic"
	"github.com/agentmem/agentmem/vdb"
)

// applyAll applies one AddBatch call's records to the indexes. If one
// fails, the ones before it are undone (records they replaced are restored
// from their log frames) and the error is returned: the call then changed
// nothing in the indexes.
func (m *Memory) applyAll(ctx context.Context, adds []*addRecord, offs []int64, next int64, preps []prepared) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ids, ok := m.applyNew(ctx, adds, offs, preps); ok {
		m.nextChild = max(m.nextChild, next)
		m.applied += len(adds)
		return ids, nil
	}
	ids := make([]string, len(adds))
	replaced := make([]*parent, len(adds))
	for i, a := range adds {
		replaced[i] = m.parents[a.rec.ID]
		if err := m.apply(ctx, a, preps[i].vecs, offs[i]); err != nil {
			err = fmt.Errorf("longterm: index record %q: %w", a.rec.ID, err)
			if uerr := m.undo(ctx, adds[:i+1], replaced[:i+1]); uerr != nil {
				err = fmt.Errorf("%w; undoing the batch's earlier records failed: %v", err, uerr)
			}
			return nil, err
		}
		ids[i] = a.rec.ID
	}
	m.nextChild = max(m.nextChild, next)
	m.applied += len(adds)
	return ids, nil
}

// parallelTurns is the text size of a batch from which applyNew indexes
// its keyword part on goroutines of its own, beside the vector adds, and
// the least text for which prepareAll gives a goroutine a share (the
// log's codes have parallelCodes): about 50 µs of work, against a few µs
// to start a goroutine.
const parallelTurns = 1 << 10

// applyNew is applyAll's fast path for the common batch, records with new
// ids: each namespace's vectors go to its index in one Add (not one per
// record), while the keyword index takes the records, in order, on
// another goroutine when the batch is large. It reports false, having
// changed nothing, when the batch replaces records or an index refuses
// it; applyAll then applies the records one by one, which undoes and
// names the failing record. m.mu must be held for writing.
func (m *Memory) applyNew(ctx context.Context, adds []*addRecord, offs []int64, preps []prepared) ([]string, bool) {
	type nsAdd struct {
		ns   string
		ids  []int64
		vecs [][]float32
	}
	var groups []nsAdd
	seen := make(map[string]struct{}, len(adds))
	size := 0
	for i, a := range adds {
		if _, dup := seen[a.rec.ID]; dup {
			return nil, false
		}
		if _, old := m.parents[a.rec.ID]; old {
			return nil, false
		}
		seen[a.rec.ID] = struct{}{}
		size += len(a.rec.Text)
		g := slices.IndexFunc(groups, func(g nsAdd) bool { return g.ns == a.rec.Namespace })
		if g < 0 {
			groups = append(groups, nsAdd{ns: a.rec.Namespace})
			g = len(groups) - 1
		}
		for _, c := range a.children {
			groups[g].ids = append(groups[g].ids, c.id)
		}
		groups[g].vecs = append(groups[g].vecs, preps[i].vecs...)
	}
	ps := make([]*parent, len(adds))
	for i, a := range adds {
		ps[i] = &parent{rec: a.rec, children: a.children, off: offs[i]}
	}
	var done *parallel.Group
	ti := m.turnIdx()
	indexTurns := func() {
		headers := make([]string, len(ps))
		terms := make([]*keyword.Counts, len(ps))
		for i, p := range ps {
			headers[i], terms[i] = m.header(&p.rec), preps[i].terms
		}
		ti.addedAll(ps, headers, terms, size >= parallelTurns)
	}
	if size >= parallelTurns {
		done = new(parallel.Group)
		done.Go(indexTurns)
	}
	for gi, g := range groups {
		db, err := m.namespaceDB(ctx, g.ns)
		if err == nil {
			err = db.Add(ctx, g.ids, g.vecs)
		}
		if err == nil {
			continue
		}
		// Take back what this call added, so that applyAll starts from
		// where it was.
		if done != nil {
			done.Wait()
			for i := len(ps) - 1; i >= 0; i-- {
				ti.removed(ps[i], m.header(&ps[i].rec))
			}
		}
		for _, g := range groups[:gi+1] {
			if db := m.vecs[g.ns]; db != nil {
				_, _ = db.Delete(ctx, g.ids...)
			}
		}
		return nil, false
	}
	ids := make([]string, len(adds))
	for i, p := range ps {
		for j, c := range p.children {
			m.children[c.id] = childRef{p: p, i: j}
		}
		m.parents[p.rec.ID] = p
		m.added(p)
		ids[i] = p.rec.ID
	}
	if done != nil {
		done.Wait()
	} else {
		indexTurns()
	}
	return ids, true
}

// undo takes the records adds out of the indexes, last first, and puts
// back the records they replaced. m.mu must be held for writing.
func (m *Memory) undo(ctx context.Context, adds []*addRecord, replaced []*parent) error {
	var errs []error
	for i := len(adds) - 1; i >= 0; i-- {
		id := adds[i].rec.ID
		if p := m.parents[id]; p != nil && p != replaced[i] {
			if err := m.remove(ctx, p); err != nil {
				errs = append(errs, err)
			}
		}
		old := replaced[i]
		if old == nil || m.parents[id] == old {
			continue
		}
		if err := m.restore(ctx, old); err != nil {
			errs = append(errs, fmt.Errorf("restore %q: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// restore re-applies a parent from its log frame (which carries its
// vectors). m.mu must be held for writing.
func (m *Memory) restore(ctx context.Context, p *parent) error {
	if m.log == nil || p.off < 0 {
		return errors.New("no log to restore it from")
	}
	payload, err := m.log.readFrame(p.off)
	if err != nil {
		return err
	}
	typ, body, err := decodeRecord(payload)
	if err != nil {
		return err
	}
	if !isAdd(typ) {
		return fmt.Errorf("%w: frame at %d is not an add", ErrCorrupt, p.off)
	}
	a, err := decodeAdd(typ, body)
	if err != nil {
		return err
	}
	vecs := make([][]float32, len(a.children))
	for i := range vecs {
		vecs[i] = a.vecs[i*a.dim : (i+1)*a.dim : (i+1)*a.dim]
	}
	return m.apply(ctx, a, vecs, p.off)
}

// apply adds a record (replacing one with the same id) to the in-memory
// indexes. m.mu must be held for writing.
func (m *Memory) apply(ctx context.Context, a *addRecord, vecs [][]float32, off int64) error {
	rec := a.rec
	if old, ok := m.parents[a.rec.ID]; ok {
		fact.CarryOver(&rec, &old.rec)
		if err := m.remove(ctx, old); err != nil {
			return err
		}
	}
	p := &parent{rec: rec, children: a.children, off: off}
	db, err := m.namespaceDB(ctx, p.rec.Namespace)
	if err != nil {
		return err
	}
	ids := make([]int64, len(p.children))
	for i, c := range p.children {
		ids[i] = c.id
	}
	if err := db.Add(ctx, ids, vecs); err != nil {
		return err
	}
	header := m.header(&p.rec)
	for i, c := range p.children {
		m.children[c.id] = childRef{p: p, i: i}
		if c.id >= m.nextChild {
			m.nextChild = c.id + 1
		}
	}
	m.parents[p.rec.ID] = p
	m.added(p)
	m.turnIdx().added(p, header, nil)
	return nil
}

// header returns the text indexed before each of r's children.
func (m *Memory) header(r *Record) string {
	if m.opts.header == nil {
		return ""
	}
	return m.opts.header(*r)
}

// remove deletes a parent and its children from the indexes. m.mu must be
// held for writing.
func (m *Memory) remove(ctx context.Context, p *parent) error {
	ids := make([]int64, len(p.children))
	for i, c := range p.children {
		ids[i] = c.id
	}
	if db := m.vecs[p.rec.Namespace]; db != nil {
		if _, err := db.Delete(ctx, ids...); err != nil {
			return err
		}
	}
	for _, id := range ids {
		delete(m.children, id)
	}
	delete(m.parents, p.rec.ID)
	m.removed(p)
	m.turnIdx().removed(p, m.header(&p.rec))
	return nil
}

// namespaceDB returns the vector index of namespace ns, opening it through
// the backend registry on first use. m.mu must be held for writing.
func (m *Memory) namespaceDB(ctx context.Context, ns string) (*semantic.Vectors, error) {
	if db := m.vecs[ns]; db != nil {
		return db, nil
	}
	db, err := semantic.OpenVectors(ctx, vectorSpec(m.opts, embed.KindOf(m.emb)), vdb.Config{Dim: m.dim, Namespace: ns})
	if err != nil {
		return nil, fmt.Errorf("longterm: namespace %q: %w", ns, err)
	}
	m.vecs[ns] = db
	return db, nil
}

// vectorSpec is the spec a namespace's vector index is opened with for the
// memory's backend spec and its embedder's kind: the default "inmem" keeps
// int8 codes ("inmem:int8", see DefaultBackend), by columns too for a
// lexical embedder (",cols": its queries touch a few percent of the
// dimensions, and a search reads only theirs; inmem.WithColumns) and,
// from o.annMin vectors, an approximate index (WithANN:
// "inmem:int8,ivf=MIN,nprobe=P"); any other spec is itself.
func vectorSpec(o options, kind embed.Kind) string {
	if o.backend != DefaultBackend {
		return o.backend
	}
	spec := "inmem:int8"
	if kind == embed.Lexical {
		spec += ",cols"
	}
	if o.annMin > 0 {
		spec += fmt.Sprintf(",ivf=%d,nprobe=%d", o.annMin, o.annProbes)
	}
	return spec
}
