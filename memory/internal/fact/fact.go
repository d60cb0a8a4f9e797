// Package fact holds what every store of facts that change (memory.Facts)
// does alike with a record's validity and versions: the checks of a
// write, what a record written again under its id keeps of the stored
// one, and the key of a text for finding its duplicates.
package fact

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/agentmem/agentmem/chunk"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/engine"
)

// Check checks a record's validity and versions as a writer gives them:
// the store sets SupersededBy, Seen and LastSeen, a record ends after it
// starts and supersedes another record.
func Check(rec *memory.Record) error {
	switch {
	case rec.SupersededBy != "":
		return fmt.Errorf("%w: record %q: SupersededBy is set by the store (supersede the record instead)", memory.ErrInvalidArgument, rec.ID)
	case rec.Seen != 0 || !rec.LastSeen.IsZero():
		return fmt.Errorf("%w: record %q: Seen and LastSeen are set by the store", memory.ErrInvalidArgument, rec.ID)
	case !rec.ValidUntil.IsZero() && !rec.ValidUntil.After(rec.Since()):
		return fmt.Errorf("%w: record %q: ValidUntil %s is not after ValidFrom %s", memory.ErrInvalidArgument, rec.ID,
			rec.ValidUntil.Format(time.RFC3339), rec.Since().Format(time.RFC3339))
	case rec.Supersedes != "" && rec.Supersedes == rec.ID:
		return fmt.Errorf("%w: record %q supersedes itself", memory.ErrInvalidArgument, rec.ID)
	}
	return nil
}

// CarryOver gives rec, which replaces the stored old (same id), old's
// versions and counts where rec has none: a record written again by id (a
// retried write) stays superseded, if it was, and keeps its count.
func CarryOver(rec, old *memory.Record) {
	if rec.SupersededBy == "" && old.SupersededBy != "" {
		rec.SupersededBy = old.SupersededBy
		if rec.ValidUntil.IsZero() {
			rec.ValidUntil = old.ValidUntil
		}
	}
	if rec.Supersedes == "" {
		rec.Supersedes = old.Supersedes
	}
	if rec.Seen == 0 {
		rec.Seen, rec.LastSeen = old.Seen, old.LastSeen
	}
}

// Close returns when a record that held from since until until (zero:
// open) ends once a successor starts at next: next, or its own end if
// that is earlier.
func Close(until, next time.Time) time.Time {
	if until.IsZero() || next.Before(until) {
		return next
	}
	return until
}

// Key returns the key of text for finding duplicates: the 64-bit FNV-1a
// hash of its normal form (memory.NormalText), which a store may keep; and
// the normal form, to compare the texts a key finds.
func Key(text string) (int64, string) {
	n := memory.NormalText(text)
	h := fnv.New64a()
	h.Write([]byte(n))
	return int64(h.Sum64()), n
}

// Near finds the near-duplicates of each of recs (validated, with their
// defaults) that is a fact (isFact: written without an ID) and supersedes
// no other, in st by e (engine.Similar, over text(rec): the record as the
// store embeds it, whose vector vec(i) is when the store has it, nil
// otherwise), and applies e's policy: it returns each record's
// near-duplicates (for its outcome) and, with engine.NearMerge, the id of
// the one each merges into ("" for none); with engine.NearRefuse, an
// error wrapping memory.ErrDuplicate for the first record that has one.
func Near[K comparable](ctx context.Context, e *engine.Engine, st engine.Store[K], recs []memory.Record, isFact func(i int) bool,
	text func(*memory.Record) string, vec func(i int) []float32) (sims [][]memory.Similar, into []string, err error) {
	policy := e.NearPolicy()
	if policy == engine.NearOff {
		return nil, nil, nil
	}
	sims, into = make([][]memory.Similar, len(recs)), make([]string, len(recs))
	// The facts, searched together (engine.SimilarBatch).
	var idx []int
	var facts []memory.Record
	var texts []string
	var vecs [][]float32
	for i := range recs {
		r := &recs[i]
		if !isFact(i) || r.Supersedes != "" {
			continue
		}
		idx = append(idx, i)
		facts = append(facts, *r)
		texts = append(texts, text(r))
		vecs = append(vecs, vec(i))
	}
	found, err := engine.SimilarBatch(ctx, e, st, facts, texts, vecs)
	if err != nil {
		return nil, nil, fmt.Errorf("near-duplicates: %w", err)
	}
	for j, i := range idx {
		r, s := &recs[i], found[j]
		sims[i] = s
		if len(s) == 0 {
			continue
		}
		switch policy {
		case engine.NearMerge:
			into[i] = s[0].ID
		case engine.NearRefuse:
			return nil, nil, fmt.Errorf("%w: record %d (%q) says nearly what %q says (cosine %.2f): %q", memory.ErrDuplicate, i, r.Text, s[0].ID, s[0].Score, s[0].Text)
		}
	}
	return sims, into, nil
}

// WholeVector returns the vector of a record's whole text (with its
// header) from its chunks and their vectors: its only chunk's, when that
// chunk is the whole text; nil otherwise.
func WholeVector(text string, chunks []chunk.Chunk, vecs [][]float32) []float32 {
	if len(chunks) == 1 && len(vecs) == 1 && chunks[0].Text == text {
		return vecs[0]
	}
	return nil
}
