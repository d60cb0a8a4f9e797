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
	sims, err := SimilarBatch(ctx, e, st, []memory.Record{rec}, []string{text}, [][]float32{vec})
	if err != nil {
		return nil, err
	}
	return sims[0], nil
}

// VectorBatcher is the optional interface of a [Source] that answers
// Vectors for several query vectors of one scope in one pass over its
// vectors (a batch kernel reads each stored vector once for several
// queries): SimilarBatch asks it for a batch of writes' near-duplicates.
// Each list is what Vectors would return for its vector.
type VectorBatcher[K comparable] interface {
	VectorsBatch(ctx context.Context, scope Scope, qvecs [][]float32, n int, minScore float32) ([][]Chunk[K], error)
}

// SimilarBatch is Similar for each of recs (texts[i] and vecs[i] are
// recs[i]'s text and vector, nil to embed it), the records of one
// namespace searched together (VectorBatcher, when the store's source
// implements it).
func SimilarBatch[K comparable](ctx context.Context, e *Engine, st Store[K], recs []memory.Record, texts []string, vecs [][]float32) ([][]memory.Similar, error) {
	out := make([][]memory.Similar, len(recs))
	if e.cfg.nearPolicy == NearOff || len(recs) == 0 {
		return out, nil
	}
	// Embed the texts without a vector, in one call.
	vecs = slices.Clone(vecs)
	var missing []int
	var embed []string
	for i, v := range vecs {
		if v == nil {
			missing = append(missing, i)
			embed = append(embed, texts[i])
		}
	}
	if len(embed) > 0 {
		got, err := e.emb.Embed(ctx, embed)
		if err != nil {
			return nil, fmt.Errorf("embed: %w", err)
		}
		for j, i := range missing {
			vecs[i] = got[j]
		}
	}
	// The records by namespace, in order of first appearance.
	byNS := map[string][]int{}
	var order []string
	for i := range recs {
		ns := cmp.Or(recs[i].Namespace, "default")
		if _, ok := byNS[ns]; !ok {
			order = append(order, ns)
		}
		byNS[ns] = append(byNS[ns], i)
	}
	now := time.Now()
	for _, ns := range order {
		if err := similarIn(ctx, e, st, Scope{Namespace: ns, AsOf: now}, recs, vecs, byNS[ns], out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// similarIn sets out[i] to the near-duplicates of recs[i] for each i of
// idx, records of scope's namespace with vectors vecs[i].
func similarIn[K comparable](ctx context.Context, e *Engine, st Store[K], scope Scope, recs []memory.Record, vecs [][]float32, idx []int, out [][]memory.Similar) error {
	src, err := view(ctx, st, scope.Namespace, false)
	if err != nil {
		return err
	}
	defer src.Close()
	n, minScore := 4*maxSimilar, float32(e.cfg.nearScore)
	lists := make([][]Chunk[K], len(idx))
	if b, ok := src.(VectorBatcher[K]); ok && len(idx) > 1 {
		qvecs := make([][]float32, len(idx))
		for j, i := range idx {
			qvecs[j] = vecs[i]
		}
		if lists, err = b.VectorsBatch(ctx, scope, qvecs, n, minScore); err != nil {
			return err
		}
	} else {
		for j, i := range idx {
			if lists[j], _, err = src.Vectors(ctx, scope, vecs[i], n, minScore); err != nil {
				return err
			}
		}
	}
	for j, i := range idx {
		if out[i], err = similarOf(ctx, src, recs[i], lists[j]); err != nil {
			return err
		}
	}
	return nil
}

// similarOf returns the near-duplicates of rec among the records of
// chunks (its nearest, best first, each at least the near-duplicate
// score), read from src.
func similarOf[K comparable](ctx context.Context, src Source[K], rec memory.Record, chunks []Chunk[K]) ([]memory.Similar, error) {
	if len(chunks) == 0 {
		return nil, nil
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
