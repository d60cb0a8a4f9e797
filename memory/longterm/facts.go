package longterm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/agentmem/agentmem/internal/atomicfile"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/internal/fact"
)

var _ memory.Facts = (*Memory)(nil)

// Remember stores recs as AddBatch does and says what it did with each: a
// record without an ID whose normalised text (memory.NormalText) a current
// record of its namespace holds already is not stored again; its outcome
// names that record, whose Seen count goes up (a small log record). A
// record with an ID is stored as Add stores it. See memory.Facts.
func (m *Memory) Remember(ctx context.Context, recs ...Record) ([]memory.Outcome, error) {
	return m.write(ctx, recs)
}

// Supersede stores rec as the new version of the record old, closes old
// at rec's ValidFrom (rec's Time, or now, when zero) and links them, in
// one log record: a crash keeps both changes or neither. A missing old is
// ErrNotFound, one superseded already memory.ErrSuperseded, checked when
// the write commits; nothing is changed then. See memory.Facts.
func (m *Memory) Supersede(ctx context.Context, old string, rec Record) (memory.Outcome, error) {
	if old == "" {
		return memory.Outcome{}, fmt.Errorf("longterm: %w: supersede: no id", memory.ErrInvalidArgument)
	}
	if rec.Supersedes != "" && rec.Supersedes != old {
		return memory.Outcome{}, fmt.Errorf("longterm: %w: supersede %q: the record says it supersedes %q", memory.ErrInvalidArgument, old, rec.Supersedes)
	}
	prev, ok := m.Get(old)
	if !ok {
		if err := m.readable(); err != nil {
			return memory.Outcome{}, err
		}
		return memory.Outcome{}, fmt.Errorf("longterm: supersede: %w: %q", ErrNotFound, old)
	}
	if rec.Namespace == "" {
		rec.Namespace = prev.Namespace
	}
	rec.Supersedes = old
	outs, err := m.write(ctx, []Record{rec})
	if err != nil {
		return memory.Outcome{}, err
	}
	return outs[0], nil
}

// History returns the versions of the chain the record id belongs to,
// oldest first: it follows Supersedes back and SupersededBy forward. A
// version that was forgotten ends the chain there.
func (m *Memory) History(ctx context.Context, id string) ([]Record, error) {
	if err := m.readable(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	p := m.parents[id]
	if p == nil {
		return nil, fmt.Errorf("longterm: history: %w: %q", ErrNotFound, id)
	}
	seen := map[string]bool{id: true}
	var back []Record
	for q := m.parents[p.rec.Supersedes]; q != nil && !seen[q.rec.ID]; q = m.parents[q.rec.Supersedes] {
		seen[q.rec.ID] = true
		back = append(back, q.rec)
	}
	slices.Reverse(back)
	out := append(back, p.rec)
	for q := m.parents[p.rec.SupersededBy]; q != nil && !seen[q.rec.ID]; q = m.parents[q.rec.SupersededBy] {
		seen[q.rec.ID] = true
		out = append(out, q.rec)
	}
	for i := range out {
		out[i].Tags = slices.Clone(out[i].Tags)
	}
	return out, nil
}

// readable returns ErrClosed after Close.
func (m *Memory) readable() error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return ErrClosed
	}
	return nil
}

// write is AddBatch with each record's outcome, near-duplicates found
// (engine.Similar) and handled as the engine's near-duplicate policy says.
func (m *Memory) write(ctx context.Context, recs []Record) ([]memory.Outcome, error) {
	req, err := m.addBatch(ctx, recs)
	if err != nil {
		return nil, err
	}
	outs := make([]memory.Outcome, len(req.ids))
	for i, id := range req.ids {
		p := &req.preps[i]
		outs[i] = memory.Outcome{ID: id, Duplicate: p.dupOf != "", Superseded: p.rec.Supersedes, Similar: p.similar}
	}
	return outs, nil
}

// near finds the near-duplicates of the facts among preps (fact.Near) and
// sets what each merges into (engine.NearMerge) and reports
// (prepared.similar); with engine.NearRefuse a near-duplicate is an
// error.
func (m *Memory) near(ctx context.Context, preps []prepared) error {
	recs := make([]Record, len(preps))
	for i := range preps {
		recs[i] = preps[i].rec
	}
	sims, into, err := fact.Near(ctx, m.opts.engine, m, recs, func(i int) bool { return preps[i].dedup },
		func(r *Record) string { return m.header(r) + r.Text }, func(i int) []float32 { return fact.WholeVector(preps[i].rec.Text, preps[i].chunks, preps[i].vecs) })
	if err != nil {
		return fmt.Errorf("longterm: %w", err)
	}
	for i := range sims {
		preps[i].similar, preps[i].nearOf = sims[i], into[i]
	}
	return nil
}

// dupKey is a namespace and the hash of a normalised text: the key of the
// index of texts that Remember reads.
type dupKey struct {
	ns string
	h  uint64
}

func textKey(ns, text string) (dupKey, string) {
	k, n := fact.Key(text)
	return dupKey{ns, uint64(k)}, n
}

// facts is what a memory keeps of its records' validity and versions
// beside them, to answer searches and writes without reading every
// record. It is guarded as the parents are.
type facts struct {
	// ended is how many records have a ValidUntil; latest is the latest
	// Since of any record applied: a search at a moment after latest, in
	// a store where ended is 0, reads every record, so it needs no filter.
	ended  int
	latest time.Time
	// texts indexes every record by namespace and normalised text, made
	// by the first write that may be a duplicate (nil until then).
	texts map[dupKey][]*parent
}

// needsFilter reports whether a search at asOf, not of history, must
// leave records out for their validity.
func (f *facts) needsFilter(asOf time.Time) bool {
	return f.ended > 0 || f.latest.After(asOf)
}

// added notes p, a record just put in m.parents (replacing none): its
// validity, its text if the text index is made, and the record it closes.
// m.mu must be held for writing (or m not yet shared).
func (m *Memory) added(p *parent) {
	if m.nsRecords == nil {
		m.nsRecords = map[string]int{}
	}
	m.nsRecords[p.rec.Namespace]++
	f := &m.facts
	if !p.rec.ValidUntil.IsZero() {
		f.ended++
	}
	if s := p.rec.Since(); s.After(f.latest) {
		f.latest = s
	}
	if f.texts != nil {
		k, _ := textKey(p.rec.Namespace, p.rec.Text)
		f.texts[k] = append(f.texts[k], p)
	}
	if p.rec.Supersedes == "" {
		return
	}
	if old := m.parents[p.rec.Supersedes]; old != nil && (old.rec.SupersededBy == "" || old.rec.SupersededBy == p.rec.ID) {
		if old.rec.ValidUntil.IsZero() {
			f.ended++
		}
		old.rec.ValidUntil = fact.Close(old.rec.ValidUntil, p.rec.Since())
		old.rec.SupersededBy = p.rec.ID
	}
}

// removed notes that p left m.parents. m.mu must be held for writing.
func (m *Memory) removed(p *parent) {
	if m.nsRecords[p.rec.Namespace]--; m.nsRecords[p.rec.Namespace] <= 0 {
		delete(m.nsRecords, p.rec.Namespace)
	}
	f := &m.facts
	if !p.rec.ValidUntil.IsZero() {
		f.ended--
	}
	if f.texts != nil {
		k, _ := textKey(p.rec.Namespace, p.rec.Text)
		ps := slices.DeleteFunc(f.texts[k], func(q *parent) bool { return q == p })
		if len(ps) == 0 {
			delete(f.texts, k)
		} else {
			f.texts[k] = ps
		}
	}
}

// seen notes that id's text was written again at t. m.mu must be held for
// writing.
func (m *Memory) seen(id string, t time.Time) {
	if p := m.parents[id]; p != nil {
		p.rec.Seen++
		if t.After(p.rec.LastSeen) {
			p.rec.LastSeen = t
		}
	}
}

// resolver decides, for the records of one group commit, which are
// duplicates and whether the records they supersede are still current. It
// remembers the batch's own records, which are not in m.parents yet. m.wmu
// must be held: no other writer changes m.parents meanwhile.
type resolver struct {
	m      *Memory
	now    time.Time
	texts  map[dupKey][]*prepared // the batch's records that may be duplicated
	closes map[string]string      // old id → the batch's record that supersedes it
}

// resolve checks one AddBatch call's records: a record that supersedes
// another must find it current (and in its namespace); a record without an
// ID (prepared.dedup) whose text a current record of its namespace holds
// is a duplicate of that one (prepared.dupOf). An error fails the call,
// which then changes nothing.
func (r *resolver) resolve(preps []prepared) error {
	m := r.m
	for i := range preps {
		p := &preps[i]
		p.dupOf = ""
		if old := p.rec.Supersedes; old != "" {
			o := m.parents[old]
			switch {
			case o == nil:
				return fmt.Errorf("longterm: supersede: %w: %q", ErrNotFound, old)
			case o.rec.Namespace != p.rec.Namespace:
				return fmt.Errorf("longterm: %w: record %q is in namespace %q, the record it supersedes (%q) in %q",
					memory.ErrInvalidArgument, p.rec.ID, p.rec.Namespace, old, o.rec.Namespace)
			case o.rec.SupersededBy != "" && o.rec.SupersededBy != p.rec.ID:
				return fmt.Errorf("longterm: supersede %q: %w by %q", old, memory.ErrSuperseded, o.rec.SupersededBy)
			case r.closes[old] != "" && r.closes[old] != p.rec.ID:
				return fmt.Errorf("longterm: supersede %q: %w by %q", old, memory.ErrSuperseded, r.closes[old])
			case m.parents[p.rec.ID] != nil && o.rec.SupersededBy != p.rec.ID:
				return fmt.Errorf("longterm: %w: supersede %q: the new version's id %q is another record's", memory.ErrInvalidArgument, old, p.rec.ID)
			}
			if r.closes == nil {
				r.closes = map[string]string{}
			}
			r.closes[old] = p.rec.ID
			continue
		}
		if !p.dedup {
			continue
		}
		if m.facts.texts == nil {
			m.mu.Lock()
			m.facts.texts = make(map[dupKey][]*parent)
			for _, q := range m.parents {
				k, _ := textKey(q.rec.Namespace, q.rec.Text)
				m.facts.texts[k] = append(m.facts.texts[k], q)
			}
			m.mu.Unlock()
		}
		k, norm := textKey(p.rec.Namespace, p.rec.Text)
		for _, q := range m.facts.texts[k] {
			if q.rec.SupersededBy == "" && r.closes[q.rec.ID] == "" && q.rec.Current(r.now) &&
				memory.NormalText(q.rec.Text) == norm {
				p.dupOf = q.rec.ID
				break
			}
		}
		if p.dupOf != "" {
			continue
		}
		// A near-duplicate to merge into (engine.NearMerge), if it is
		// still current.
		if q := m.parents[p.nearOf]; p.nearOf != "" && q != nil && q.rec.SupersededBy == "" && r.closes[q.rec.ID] == "" && q.rec.Current(r.now) {
			p.dupOf = q.rec.ID
			continue
		}
		for _, q := range r.texts[k] {
			if memory.NormalText(q.rec.Text) == norm {
				p.dupOf = q.rec.ID
				break
			}
		}
		if p.dupOf != "" {
			continue
		}
		if r.texts == nil {
			r.texts = map[dupKey][]*prepared{}
		}
		r.texts[k] = append(r.texts[k], p)
	}
	return nil
}

// manifestFormat1 is where the manifest of a format 1 store is kept when
// its first record with validity or versions makes it format 2.
const manifestFormat1 = "manifest.json.format1"

// upgradeFormat makes the store format 2 before the first record that
// format 1 cannot read is logged: the manifest is copied beside itself
// (manifestFormat1) and rewritten with format 2, so that the previous
// release refuses the store with a version error instead of reading it
// wrong. m.wmu must be held.
func (m *Memory) upgradeFormat() error {
	if m.dir == "" || m.format >= formatFacts {
		return nil
	}
	path := filepath.Join(m.dir, manifestFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("longterm: upgrade to format %d: %w", formatFacts, err)
	}
	if err := atomicfile.WriteBytes(filepath.Join(m.dir, manifestFormat1), b); err != nil {
		return fmt.Errorf("longterm: upgrade to format %d: keep the manifest: %w", formatFacts, err)
	}
	man, err := ReadManifest(m.dir)
	if err != nil {
		return err
	}
	man.Format = formatFacts
	if err := writeManifest(m.dir, man); err != nil {
		return err
	}
	m.format = formatFacts
	m.opts.logger.Info("longterm: store upgraded to format 2 (records with validity and versions); the previous manifest is kept",
		"dir", m.dir, "backup", manifestFormat1)
	return nil
}
