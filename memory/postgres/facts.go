package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/agentmem/agentmem/internal/errs"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/internal/fact"
)

var _ memory.Facts = (*Memory)(nil)

// factColumns are a record's validity, versions and count, from records
// r, in the order factScan reads them.
const factColumns = `r.valid_from, r.valid_until, r.supersedes, r.superseded_by, r.seen, r.last_seen`

// factScan receives factColumns.
type factScan struct {
	from, until, last pgtype.Timestamptz
	sup, by           string
	seen              int32
}

func (f *factScan) dest() []any { return []any{&f.from, &f.until, &f.sup, &f.by, &f.seen, &f.last} }

// into sets r's validity, versions and count from f.
func (f *factScan) into(r *memory.Record) {
	at := func(t pgtype.Timestamptz) time.Time {
		if !t.Valid {
			return time.Time{}
		}
		return t.Time.UTC()
	}
	r.ValidFrom, r.ValidUntil, r.LastSeen = at(f.from), at(f.until), at(f.last)
	r.Supersedes, r.SupersededBy, r.Seen = f.sup, f.by, int(f.seen)
}

// nullTime is t for a nullable timestamptz column: NULL when zero.
func nullTime(t time.Time) pgtype.Timestamptz {
	return pgtype.Timestamptz{Time: t, Valid: !t.IsZero()}
}

// Remember stores recs as AddBatch does and says what it did with each: a
// record without an ID whose normalised text (memory.NormalText) a current
// record of its namespace holds already is not stored again; its outcome
// names that record, whose seen count goes up. The check and the write are one
// transaction under the namespace's lock, so concurrent writers of one
// text store it once. Records written before the schema's version 7 have
// no text key and are not found as duplicates. See memory.Facts.
func (m *Memory) Remember(ctx context.Context, recs ...memory.Record) ([]memory.Outcome, error) {
	preps, err := m.addBatch(ctx, recs)
	if err != nil {
		return nil, err
	}
	outs := make([]memory.Outcome, len(preps))
	for i := range preps {
		outs[i] = preps[i].outcome()
	}
	return outs, nil
}

// near finds the near-duplicates of the facts among preps (fact.Near) and
// sets what each merges into (engine.NearMerge) and reports
// (prepared.similar); with engine.NearRefuse a near-duplicate is an
// error.
func (m *Memory) near(ctx context.Context, preps []prepared) error {
	recs := make([]memory.Record, len(preps))
	for i := range preps {
		recs[i] = preps[i].rec
	}
	sims, into, err := fact.Near(ctx, m.opts.engine, m, recs, func(i int) bool { return preps[i].dedup },
		m.keywordText, func(i int) []float32 { return fact.WholeVector(preps[i].rec.Text, preps[i].chunks, preps[i].vecs) })
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	for i := range sims {
		preps[i].similar, preps[i].nearOf = sims[i], into[i]
	}
	return nil
}

// Supersede stores rec as the new version of the record old, closes old
// at rec's ValidFrom (its Time, or now, when zero) and links them, in one
// transaction that checks, under the namespace's lock, that old is still
// current: a missing old is memory.ErrNotFound, one superseded already
// memory.ErrSuperseded, and nothing is changed. See memory.Facts.
func (m *Memory) Supersede(ctx context.Context, old string, rec memory.Record) (memory.Outcome, error) {
	if old == "" {
		return memory.Outcome{}, fmt.Errorf("postgres: %w: supersede: no id", errs.InvalidArgument)
	}
	if rec.Supersedes != "" && rec.Supersedes != old {
		return memory.Outcome{}, fmt.Errorf("postgres: %w: supersede %q: the record says it supersedes %q", errs.InvalidArgument, old, rec.Supersedes)
	}
	if err := m.check(ctx); err != nil {
		return memory.Outcome{}, err
	}
	if rec.Namespace == "" {
		var ns string
		err := m.pool.QueryRow(ctx, `SELECT n.name FROM records r JOIN namespaces n ON n.id = r.ns WHERE r.id = $1`, old).Scan(&ns)
		switch {
		case err == pgx.ErrNoRows:
			return memory.Outcome{}, fmt.Errorf("postgres: supersede: %w: %q", errs.NotFound, old)
		case err != nil:
			return memory.Outcome{}, m.wrap(ctx, "supersede", err)
		}
		rec.Namespace = ns
	}
	rec.Supersedes = old
	preps, err := m.addBatch(ctx, []memory.Record{rec})
	if err != nil {
		return memory.Outcome{}, err
	}
	return preps[0].outcome(), nil
}

// History returns the versions of the chain the record id belongs to,
// oldest first, in one statement: it follows supersedes back and
// superseded_by forward. A version that was forgotten ends the chain
// there.
func (m *Memory) History(ctx context.Context, id string) ([]memory.Record, error) {
	if err := m.check(ctx); err != nil {
		return nil, err
	}
	rows, err := m.pool.Query(ctx, `
WITH RECURSIVE back(id, depth) AS (
	SELECT id, 0 FROM records WHERE id = $1
	UNION
	SELECT p.id, b.depth - 1 FROM back b JOIN records r ON r.id = b.id JOIN records p ON p.id = r.supersedes WHERE b.depth > -10000
), fwd(id, depth) AS (
	SELECT id, 0 FROM records WHERE id = $1
	UNION
	SELECT s.id, f.depth + 1 FROM fwd f JOIN records r ON r.id = f.id JOIN records s ON s.id = r.superseded_by WHERE f.depth < 10000
), chain AS (SELECT id, depth FROM back UNION SELECT id, depth FROM fwd)
SELECT `+recordColumns+` FROM chain c JOIN records r ON r.id = c.id JOIN namespaces n ON n.id = r.ns ORDER BY c.depth`, id)
	if err != nil {
		return nil, m.wrap(ctx, "history", err)
	}
	defer rows.Close()
	var out []memory.Record
	for rows.Next() {
		var r memory.Record
		if err := scanRecord(rows, &r); err != nil {
			return nil, m.wrap(ctx, "history", err)
		}
		if slices.ContainsFunc(out, func(o memory.Record) bool { return o.ID == r.ID }) {
			continue // a cycle (which writes never make) ends the chain
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, m.wrap(ctx, "history", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("postgres: history: %w: %q", errs.NotFound, id)
	}
	return out, nil
}

// outcome is what writing p did.
func (p *prepared) outcome() memory.Outcome {
	if p.dupOf != "" {
		return memory.Outcome{ID: p.dupOf, Duplicate: true, Similar: p.similar}
	}
	return memory.Outcome{ID: p.rec.ID, Superseded: p.rec.Supersedes, Similar: p.similar}
}

// resolve decides, in the writing transaction with the namespaces locked,
// which of batch are duplicates (dupOf) and checks that the records they
// supersede are current; it returns the records to store. olds are the
// stored records the batch replaces by id, whose versions and counts a
// record carries over (fact.CarryOver).
func (m *Memory) resolve(ctx context.Context, tx pgx.Tx, batch []*prepared, olds []oldRec) ([]*prepared, error) {
	byID := make(map[string]*memory.Record, len(olds))
	for i := range olds {
		byID[olds[i].id] = &olds[i].facts
	}
	var sups []string
	for _, p := range batch {
		p.dupOf = ""
		if o := byID[p.rec.ID]; o != nil {
			fact.CarryOver(&p.rec, o)
		}
		if p.rec.Supersedes != "" {
			sups = append(sups, p.rec.Supersedes)
		}
	}
	supersededByThis := map[string]string{}
	if len(sups) > 0 {
		found, err := readOld(ctx, tx, sups)
		if err != nil {
			return nil, m.wrap(ctx, "supersede: read", err)
		}
		cur := map[string]*oldRec{}
		for i := range found {
			cur[found[i].id] = &found[i]
		}
		for _, p := range batch {
			old := p.rec.Supersedes
			if old == "" {
				continue
			}
			o := cur[old]
			switch {
			case o == nil:
				return nil, fmt.Errorf("postgres: supersede: %w: %q", errs.NotFound, old)
			case o.ns != p.rec.Namespace:
				return nil, fmt.Errorf("postgres: %w: record %q is in namespace %q, the record it supersedes (%q) in %q",
					errs.InvalidArgument, p.rec.ID, p.rec.Namespace, old, o.ns)
			case o.facts.SupersededBy != "" && o.facts.SupersededBy != p.rec.ID:
				return nil, fmt.Errorf("postgres: supersede %q: %w by %q", old, errs.Superseded, o.facts.SupersededBy)
			case supersededByThis[old] != "" && supersededByThis[old] != p.rec.ID:
				return nil, fmt.Errorf("postgres: supersede %q: %w by %q", old, errs.Superseded, supersededByThis[old])
			case byID[p.rec.ID] != nil && o.facts.SupersededBy != p.rec.ID:
				return nil, fmt.Errorf("postgres: %w: supersede %q: the new version's id %q is another record's", errs.InvalidArgument, old, p.rec.ID)
			}
			supersededByThis[old] = p.rec.ID
		}
	}
	now := time.Now().UTC()
	stored := make([]*prepared, 0, len(batch))
	batchTexts := map[[2]any]*prepared{}
	for _, p := range batch {
		if !p.dedup || p.rec.Supersedes != "" {
			stored = append(stored, p)
			continue
		}
		key, norm := fact.Key(p.rec.Text)
		if q := batchTexts[[2]any{p.rec.Namespace, norm}]; q != nil {
			p.dupOf = q.rec.ID
			continue
		}
		rows, err := tx.Query(ctx, `SELECT r.id, r.text FROM records r JOIN namespaces n ON n.id = r.ns
			WHERE n.name = $1 AND r.text_key = $2 AND r.superseded_by = '' AND coalesce(r.valid_from, r.time) <= $3
			AND (r.valid_until IS NULL OR r.valid_until > $3) ORDER BY r.seq`, p.rec.Namespace, key, now)
		if err != nil {
			return nil, m.wrap(ctx, "add: duplicates", err)
		}
		texts, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ ID, Text string }])
		if err != nil {
			return nil, m.wrap(ctx, "add: duplicates", err)
		}
		for _, t := range texts {
			if supersededByThis[t.ID] == "" && memory.NormalText(t.Text) == norm {
				p.dupOf = t.ID
				break
			}
		}
		if p.dupOf != "" {
			continue
		}
		if p.nearOf != "" && supersededByThis[p.nearOf] == "" {
			// A near-duplicate to merge into (engine.NearMerge), if it is
			// still current.
			var n int
			err := tx.QueryRow(ctx, `SELECT count(*) FROM records r JOIN namespaces n ON n.id = r.ns WHERE r.id = $1 AND n.name = $2
				AND r.superseded_by = '' AND coalesce(r.valid_from, r.time) <= $3 AND (r.valid_until IS NULL OR r.valid_until > $3)`,
				p.nearOf, p.rec.Namespace, now).Scan(&n)
			if err != nil {
				return nil, m.wrap(ctx, "add: near-duplicate", err)
			}
			if n > 0 {
				p.dupOf = p.nearOf
				continue
			}
		}
		batchTexts[[2]any{p.rec.Namespace, norm}] = p
		stored = append(stored, p)
	}
	return stored, nil
}

// applyFacts writes what the stored records of batch do to others: each
// closes the record it supersedes, and each duplicate counts its
// original as seen again.
func (m *Memory) applyFacts(ctx context.Context, tx pgx.Tx, batch []*prepared, nss map[string]*nsRow) error {
	now := time.Now().UTC()
	for _, p := range batch {
		switch {
		case p.dupOf != "":
			if _, err := tx.Exec(ctx, `UPDATE records SET seen = seen + 1, last_seen = greatest(last_seen, $2) WHERE id = $1`, p.dupOf, now); err != nil {
				return m.wrap(ctx, "add: count a duplicate", err)
			}
		case p.rec.Supersedes != "":
			var was pgtype.Timestamptz
			err := tx.QueryRow(ctx, `UPDATE records r SET valid_until = CASE WHEN o.valid_until IS NULL OR $2 < o.valid_until THEN $2 ELSE o.valid_until END,
				superseded_by = $3 FROM records o WHERE r.seq = o.seq AND r.id = $1 RETURNING o.valid_until`,
				p.rec.Supersedes, p.rec.Since(), p.rec.ID).Scan(&was)
			if err != nil {
				return m.wrap(ctx, "supersede: close the old version", err)
			}
			if _, err := tx.Exec(ctx, `UPDATE chunks c SET valid_until = r.valid_until FROM records r WHERE r.id = $1 AND c.seq = r.seq`, p.rec.Supersedes); err != nil {
				return m.wrap(ctx, "supersede: close the old version's chunks", err)
			}
			if !was.Valid {
				nss[p.rec.Namespace].ended++
			}
		}
	}
	return nil
}
