package longterm

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmem/agentmem/chunk"
	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/internal/parallel"
	"github.com/agentmem/agentmem/internal/recordid"
	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory/engine"
	"github.com/agentmem/agentmem/memory/internal/fact"
)

// prepareAll prepares every record and embeds its chunks (embedChunks),
// and returns the function that hands back the vectors' buffers once
// nothing refers to them. A batch is split into contiguous runs of about
// the same text prepared in parallel (chunking is a record's own
// business). An embedder that computes in process (an
// embed.IntoEmbedder) embeds each run as soon as it is prepared, on the
// same goroutine: one fork and join a batch instead of two, and the
// runs' mix of both costs balances better. Another embedder (a model
// server) gets the whole batch's chunks once all are prepared, in calls
// of embedBatch texts. The error is that of the first record that fails
// to prepare, else the embedder's.
func (m *Memory) prepareAll(ctx context.Context, recs []Record) ([]prepared, func(), error) {
	preps := make([]prepared, len(recs))
	errs := make([]error, len(recs))
	_, inline := m.emb.(embed.IntoEmbedder)
	// Indexed by a run's first record: its buffer's release, and the
	// embedder's error.
	var releases []func()
	var embedErrs []error
	if inline {
		releases, embedErrs = make([]func(), len(recs)), make([]error, len(recs))
	}
	parallel.Parts(len(recs), func(i int) int { return len(recs[i].Text) }, parallelTurns, func(lo, hi int) {
		failed := false
		for i := lo; i < hi; i++ {
			r := recs[i]
			errs[i] = m.prepare(ctx, &r, &preps[i])
			failed = failed || errs[i] != nil
		}
		if inline && !failed {
			releases[lo], embedErrs[lo] = m.embedChunks(ctx, preps[lo:hi])
		}
	})
	release := func() {
		for _, r := range releases {
			if r != nil {
				r()
			}
		}
	}
	for i, err := range errs {
		if err != nil {
			release()
			if len(recs) > 1 {
				return nil, noRelease, fmt.Errorf("record %d: %w", i, err)
			}
			return nil, noRelease, err
		}
	}
	if inline {
		for _, err := range embedErrs {
			if err != nil {
				release()
				return nil, noRelease, err
			}
		}
		return preps, release, nil
	}
	release, err := m.embedChunks(ctx, preps)
	if err != nil {
		return nil, noRelease, err
	}
	return preps, release, nil
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
