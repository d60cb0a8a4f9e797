package longterm

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmem/agentmem/chunk"
	"github.com/agentmem/agentmem/internal/parallel"
	"github.com/agentmem/agentmem/internal/recordid"
	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory/engine"
	"github.com/agentmem/agentmem/memory/internal/fact"
)

// prepareAll prepares every record; a batch is split into contiguous parts
// of about the same text prepared in parallel (chunking is a record's own business). The
// error is that of the first record that fails.
func (m *Memory) prepareAll(ctx context.Context, recs []Record) ([]prepared, error) {
	preps := make([]prepared, len(recs))
	errs := make([]error, len(recs))
	parallel.Parts(len(recs), func(i int) int { return len(recs[i].Text) }, parallelTurns, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r := recs[i]
			errs[i] = m.prepare(ctx, &r, &preps[i])
		}
	})
	for i, err := range errs {
		if err != nil {
			if len(recs) > 1 {
				return nil, fmt.Errorf("record %d: %w", i, err)
			}
			return nil, err
		}
	}
	return preps, nil
}

// prepare validates rec, fills in defaults and splits it into chunks (one
// chunk, the whole text, with WithWholeRecords). Splitting checks ctx, so a
// long text can be cancelled; its size was checked before (checkSize).
func (m *Memory) prepare(ctx context.Context, rec *Record, out *prepared) error {
	for _, s := range append([]string{rec.ID, rec.Text, rec.Namespace, rec.Speaker}, rec.Tags...) {
		if !utf8.ValidString(s) {
			return fmt.Errorf("%w in record %q", ErrInvalidUTF8, strings.ToValidUTF8(rec.ID, "\uFFFD"))
		}
	}
	if !engine.HasWord(rec.Text) {
		if strings.TrimSpace(rec.Text) == "" {
			return fmt.Errorf("%w (record %q)", ErrEmptyText, rec.ID)
		}
		return fmt.Errorf("%w: record %q has no letter or digit to index", ErrEmptyText, rec.ID)
	}
	if rec.Namespace == "" {
		rec.Namespace = DefaultNamespace
	}
	if rec.Time.IsZero() {
		rec.Time = time.Now().UTC()
	}
	if err := fact.Check(rec); err != nil {
		return err
	}
	if rec.ID == "" {
		out.dedup = true
		rec.ID = recordid.New()
	}
	rec.Tags = slices.Clone(rec.Tags)
	out.rec = *rec
	if ti := m.turnIdx(); ti.built(rec.Namespace) {
		c := keyword.Count(ti.tok.Tokens(m.header(&out.rec) + out.rec.Text))
		out.terms = &c
	}
	if m.opts.wholeRecord {
		out.chunks = []chunk.Chunk{{Text: rec.Text, Start: 0, End: len(rec.Text)}}
		return nil
	}
	co := chunk.Options{MaxBytes: -1} // the record's size limit is WithMaxRecordBytes'
	if m.opts.chunkOpts != nil {
		co.MinRunes, co.MaxRunes = m.opts.chunkOpts.MinRunes, m.opts.chunkOpts.MaxRunes
	}
	chunks, err := chunk.SplitContext(ctx, rec.Text, &co)
	if err != nil {
		return err
	}
	for _, c := range chunks {
		if engine.HasWord(c.Text) {
			out.chunks = append(out.chunks, c)
		}
	}
	if len(out.chunks) == 0 {
		// Chunking dropped nothing with words in it, so this cannot happen
		// unless chunk changes; index the whole text then.
		out.chunks = []chunk.Chunk{{Text: strings.TrimSpace(rec.Text), Start: 0, End: len(rec.Text)}}
	}
	return nil
}
