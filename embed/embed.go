// Package embed turns text into vectors for agentmem.
//
// An [Embedder] is batch-first and names itself, so that a store can record
// which embedder built it and refuse another. [Open] builds one from a spec
// string such as "hash:512" (the offline default, package embed/hash) or
// "ollama:nomic-embed-text" (an Ollama server, package embed/ollama).
//
// Embedders register themselves, database/sql style: a driver package calls
// [Register] from its init function, and a program offers a scheme by
// importing the driver, usually for its side effect alone:
//
//	import _ "github.com/agentmem/agentmem/embed/hash"
//
// Package embed itself links no driver (and so no HTTP client).
package embed

import (
	"context"
	"fmt"
	"strings"

	"errors"

	"github.com/agentmem/agentmem/internal/errs"
	"github.com/agentmem/agentmem/internal/registry"
)

// An Embedder turns texts into vectors. Implementations are safe for
// concurrent use by multiple goroutines.
type Embedder interface {
	// Embed returns one vector per text, in order, each of length Dim().
	// An empty or whitespace-only text is an error wrapping ErrEmptyText.
	// The returned slices belong to the caller.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Dim returns the length of the vectors Embed returns, or 0 while it is
	// not yet known (an Ollama embedder learns it from its first answer; see
	// [Dimension]).
	Dim() int
	// Name identifies the embedder and its configuration, e.g. "hash:512" or
	// "ollama:nomic-embed-text". Two embedders with the same Name produce
	// vectors that can be compared with each other.
	Name() string
}

// QueryEmbedder is an optional interface for embedders whose models embed
// search queries differently from stored documents (e.g. with a
// "search_query: " prefix). Search paths use EmbedQuery when it is there.
type QueryEmbedder interface {
	EmbedQuery(ctx context.Context, texts []string) ([][]float32, error)
}

// An IntoEmbedder is an Embedder that can also write its vectors into
// memory the caller provides. A caller that copies the vectors on, as a
// vector index does, then reuses one buffer instead of allocating every
// batch's; [EmbedAllInto] uses it when the embedder has it.
type IntoEmbedder interface {
	Embedder
	// EmbedInto embeds texts as Embed does and writes text i's vector to
	// dst[i*Dim() : (i+1)*Dim()]. len(dst) must be len(texts)*Dim(); what
	// dst held before is overwritten.
	EmbedInto(ctx context.Context, dst []float32, texts []string) error
}

// Errors returned by embedders; test them with errors.Is. ErrEmptyText and
// ErrDimension are agentmem's shared sentinels (the same values as
// memory.ErrEmptyText and vdb.ErrDimension).
var (
	// ErrEmptyText: a text to embed is empty or only white space.
	ErrEmptyText = errs.EmptyInput
	// ErrUnknownScheme: Open was given a spec whose scheme is not registered.
	ErrUnknownScheme = errors.New("embed: unknown scheme")
	// ErrBadSpec: Open was given a spec it cannot parse (e.g. "hash:abc").
	ErrBadSpec = errors.New("embed: malformed spec")
	// ErrDimension: a model answered with a vector of another length than
	// before, or than a store expects.
	ErrDimension = errs.Dimension
	// ErrModelNotFound: the model server does not have the model (the error
	// says how to pull it).
	ErrModelNotFound = errors.New("embed: model not found")
	// ErrUnreachable: the model server did not answer (the error names its
	// address).
	ErrUnreachable = errors.New("embed: server unreachable")
)

// An Opener builds an embedder from the part of a spec after "scheme:".
type Opener func(arg string) (Embedder, error)

var openers = registry.New[Opener]("embed", "scheme")

// Register makes an embedder scheme available to Open. It panics if open is
// nil or the scheme is already registered: both are programming errors made
// at init time.
func Register(scheme string, open Opener) {
	if open == nil {
		panic("embed: Register opener is nil")
	}
	openers.Register(scheme, open)
}

// Schemes returns the registered schemes, sorted.
func Schemes() []string { return openers.Names() }

// Open builds an embedder from a spec "scheme:arg", e.g. "hash:512",
// "hash" (default dimension) or "ollama:nomic-embed-text". It does not
// contact any server.
func Open(spec string) (Embedder, error) {
	scheme, arg, _ := strings.Cut(strings.TrimSpace(spec), ":")
	open, ok := openers.Get(scheme)
	if !ok {
		return nil, fmt.Errorf("%w %q in spec %q (registered: %s; forgotten import?)", ErrUnknownScheme, scheme, spec, strings.Join(Schemes(), ", "))
	}
	e, err := open(arg)
	if err != nil {
		return nil, fmt.Errorf("embed: open %q: %w", spec, err)
	}
	return e, nil
}

// Dimension returns e's dimension, embedding a short probe text when e does
// not know it yet.
func Dimension(ctx context.Context, e Embedder) (int, error) {
	if d := e.Dim(); d > 0 {
		return d, nil
	}
	v, err := e.Embed(ctx, []string{"dimension probe"})
	if err != nil {
		return 0, fmt.Errorf("embed: learn dimension of %s: %w", e.Name(), err)
	}
	if len(v) != 1 || len(v[0]) == 0 {
		return 0, fmt.Errorf("%w: %s answered with no vector", ErrDimension, e.Name())
	}
	return len(v[0]), nil
}

// EmbedQuery embeds one search query with e: through its [QueryEmbedder]
// when it has one (a model that embeds queries differently from documents),
// otherwise through Embed. An answer without exactly one vector is an error.
func EmbedQuery(ctx context.Context, e Embedder, query string) ([]float32, error) {
	var (
		v   [][]float32
		err error
	)
	if qe, ok := e.(QueryEmbedder); ok {
		v, err = qe.EmbedQuery(ctx, []string{query})
	} else {
		v, err = e.Embed(ctx, []string{query})
	}
	if err != nil {
		return nil, err
	}
	if len(v) != 1 {
		return nil, fmt.Errorf("embed: embedder %s returned %d vectors for 1 query", e.Name(), len(v))
	}
	return v[0], nil
}

// EmbedAllInto is [EmbedAll] writing the vectors into buf when e is an
// [IntoEmbedder] that knows its dimension and buf has room for them all
// (len(buf) ≥ len(texts)·Dim()): the vectors returned are then slices of
// buf, valid until the caller reuses it. Otherwise it is EmbedAll, and buf
// is left alone.
func EmbedAllInto(ctx context.Context, e Embedder, buf []float32, texts []string, batch int) ([][]float32, error) {
	ie, ok := e.(IntoEmbedder)
	d := e.Dim()
	if !ok || d <= 0 || len(buf) < len(texts)*d {
		return EmbedAll(ctx, e, texts, batch)
	}
	if batch <= 0 {
		batch = max(len(texts), 1)
	}
	for start := 0; start < len(texts); start += batch {
		end := min(start+batch, len(texts))
		if err := ie.EmbedInto(ctx, buf[start*d:end*d], texts[start:end]); err != nil {
			return nil, fmt.Errorf("embed: %w", err)
		}
	}
	vecs := make([][]float32, len(texts))
	for i := range vecs {
		vecs[i] = buf[i*d : (i+1)*d : (i+1)*d]
	}
	return vecs, nil
}

// EmbedAll embeds texts (documents, not queries) in calls of at most batch
// texts each (batch ≤ 0: one call) and checks that the embedder returned
// one vector per text. Errors are "embed: …", wrapping the embedder's.
func EmbedAll(ctx context.Context, e Embedder, texts []string, batch int) ([][]float32, error) {
	if batch <= 0 {
		batch = max(len(texts), 1)
	}
	vecs := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += batch {
		v, err := e.Embed(ctx, texts[start:min(start+batch, len(texts))])
		if err != nil {
			return nil, fmt.Errorf("embed: %w", err)
		}
		vecs = append(vecs, v...)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embed: embedder %s returned %d vectors for %d texts", e.Name(), len(vecs), len(texts))
	}
	return vecs, nil
}
