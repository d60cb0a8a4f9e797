package longterm

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/agentmem/agentmem/memory"
)

// List returns the stored records that match opts, oldest first (by Time,
// then by id), and how many match in total before opts.Offset and
// opts.Limit. It implements memory.Lister.
func (m *Memory) List(ctx context.Context, opts memory.ListOptions) ([]Record, int, error) {
	if opts.Offset < 0 || opts.Limit < 0 {
		return nil, 0, fmt.Errorf("longterm: %w: offset %d, limit %d", ErrInvalidQuery, opts.Offset, opts.Limit)
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	m.mu.RLock()
	if m.closed {
		m.mu.RUnlock()
		return nil, 0, ErrClosed
	}
	var match []*parent
	for _, p := range m.parents {
		r := &p.rec
		if opts.Namespace != "" && r.Namespace != opts.Namespace {
			continue
		}
		if (!opts.From.IsZero() && r.Time.Before(opts.From)) || (!opts.To.IsZero() && !r.Time.Before(opts.To)) {
			continue
		}
		match = append(match, p)
	}
	slices.SortFunc(match, func(a, b *parent) int {
		if c := a.rec.Time.Compare(b.rec.Time); c != 0 {
			return c
		}
		return strings.Compare(a.rec.ID, b.rec.ID)
	})
	total := len(match)
	match = match[min(opts.Offset, total):]
	if opts.Limit > 0 {
		match = match[:min(opts.Limit, len(match))]
	}
	out := make([]Record, len(match))
	for i, p := range match {
		out[i] = p.rec
		out[i].Tags = slices.Clone(p.rec.Tags)
	}
	m.mu.RUnlock()
	return out, total, nil
}

// Info describes a memory: what built it and how much it holds.
type Info struct {
	Kind     string `json:"kind"`     // "long", or "short" for memory/short
	Embedder string `json:"embedder"` // the embedder's Name
	Dim      int    `json:"dim"`
	Backend  string `json:"backend"` // the vector backend spec
	Dir      string `json:"store,omitempty"`
	Records  int    `json:"records"`
	Chunks   int    `json:"chunks"`
	Vectors  int    `json:"vectors"`
	// TopK and MinScore are the defaults of Search and of a Query that
	// leaves K or MinScore zero (WithTopK, WithMinScore).
	TopK     int     `json:"top_k"`
	MinScore float32 `json:"min_score"`
}

// Info returns what built the memory and how much it holds.
func (m *Memory) Info() Info {
	m.mu.RLock()
	defer m.mu.RUnlock()
	nvec := 0
	for _, db := range m.vecs {
		nvec += db.Len()
	}
	return Info{
		Kind: m.opts.kind, Embedder: m.emb.Name(), Dim: m.dim, Backend: m.opts.backend, Dir: m.dir,
		Records: len(m.parents), Chunks: len(m.children), Vectors: nvec,
		TopK: m.opts.topK, MinScore: m.opts.minScore,
	}
}

// HoldsNamespace reports whether namespace ns holds any record
// (memory.NamespaceHolder), from the keyword path's index of it.
func (m *Memory) HoldsNamespace(ctx context.Context, ns string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return false, ErrClosed
	}
	return len(m.turnIdx().get(ns, m).parents) > 0, nil
}
