package engine

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/agentmem/agentmem/memory"
)

// NearPolicy says what a store of facts (memory.Facts) does with a record
// written without an ID that a current record of its namespace, said by
// the same speaker, nearly repeats: the cosine of their texts is at least
// the near-duplicate score (WithNearDuplicates). An exact duplicate (the
// same normalised text) is never stored twice, whatever the policy.
type NearPolicy int

const (
	// NearKeep stores the record and reports its near-duplicates
	// (memory.Outcome.Similar). The default.
	NearKeep NearPolicy = iota
	// NearMerge stores nothing and counts the most similar record as said
	// again, as an exact duplicate is (memory.Outcome.Duplicate).
	NearMerge
	// NearRefuse refuses the write with an error wrapping
	// memory.ErrDuplicate that names the near-duplicate.
	NearRefuse
	// NearOff looks for no near-duplicates (a write costs no search).
	NearOff
)

// String returns "keep", "merge", "refuse" or "off".
func (p NearPolicy) String() string {
	switch p {
	case NearKeep:
		return "keep"
	case NearMerge:
		return "merge"
	case NearRefuse:
		return "refuse"
	case NearOff:
		return "off"
	}
	return fmt.Sprintf("NearPolicy(%d)", int(p))
}

// DefaultNearScore is the cosine from which a record is a near-duplicate
// of another (WithNearDuplicates): with the offline hash embedder, which
// compares spelling, texts that differ in a word or two of a sentence
// ("Dana lives in Paris now." and "Dana now lives in Paris."); with a
// model embedder, texts that say the same in other words.
const DefaultNearScore = 0.92

// maxSimilar is how many near-duplicates a write reports.
const maxSimilar = 5

// WithNearDuplicates sets the cosine from which a record written without
// an ID is a near-duplicate of a current record of its namespace said by
// the same speaker (in (0, 1]; default DefaultNearScore), and what a
// store of facts does with it (default NearKeep).
func WithNearDuplicates(minScore float64, p NearPolicy) Option {
	return func(c *config) error {
		if !(minScore > 0 && minScore <= 1) {
			return fmt.Errorf("near-duplicate score %v, want (0, 1]", minScore)
		}
		if p < NearKeep || p > NearOff {
			return fmt.Errorf("near-duplicate policy %d", p)
		}
		c.nearScore, c.nearPolicy = minScore, p
		return nil
	}
}

// NearPolicy returns what the engine's store does with near-duplicates
// (WithNearDuplicates).
func (e *Engine) NearPolicy() NearPolicy { return e.cfg.nearPolicy }

// Similar returns rec's near-duplicates in st: the current records of
// rec's namespace said by rec's speaker whose best chunk's cosine to text
// (rec's text as the store embeds it, with its header) is at least the
// engine's near-duplicate score, most similar first, at most 5; records
// with the same normalised text as rec (exact duplicates, which the store
// finds itself) are left out. vec, when not nil, is text's vector (the
// store embedded it already); otherwise Similar embeds text. With NearOff
// it returns nil.
func Similar[K comparable](ctx context.Context, e *Engine, st Store[K], rec memory.Record, text string, vec []float32) ([]memory.Similar, error) {
	if e.cfg.nearPolicy == NearOff {
		return nil, nil
	}
	if vec == nil {
		vecs, err := e.emb.Embed(ctx, []string{text})
		if err != nil {
			return nil, fmt.Errorf("embed: %w", err)
		}
		vec = vecs[0]
	}
	scope := Scope{Namespace: cmp.Or(rec.Namespace, "default"), AsOf: time.Now()}
	src, err := view(ctx, st, scope.Namespace)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	chunks, _, err := src.Vectors(ctx, scope, vec, 4*maxSimilar, float32(e.cfg.nearScore))
	if err != nil || len(chunks) == 0 {
		return nil, err
	}
	var keys []K
	best := map[K]float64{}
	for _, c := range chunks {
		if _, ok := best[c.Record]; !ok {
			keys = append(keys, c.Record)
			best[c.Record] = c.Score
		}
	}
	docs, err := src.Docs(ctx, keys)
	if err != nil {
		return nil, err
	}
	norm := memory.NormalText(rec.Text)
	var out []memory.Similar
	for i, d := range docs {
		r := &d.Record
		if r.ID == "" || r.Speaker != rec.Speaker || r.SupersededBy != "" || memory.NormalText(r.Text) == norm {
			continue
		}
		out = append(out, memory.Similar{ID: r.ID, Text: r.Text, Score: float32(best[keys[i]])})
	}
	slices.SortStableFunc(out, func(a, b memory.Similar) int { return cmp.Compare(b.Score, a.Score) })
	return out[:min(len(out), maxSimilar)], nil
}
