package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/longterm"
	"github.com/agentmem/agentmem/memory/postgres"
)

// Memory is what [OpenURL] returns: a memory in a store directory (*Store,
// of either kind) or in PostgreSQL (*Postgres, long-term). It is what a
// server needs (server.Store), what the CLI's commands need, and Close.
type Memory interface {
	memory.Records
	memory.Querier
	memory.Lister
	Len() int
	Close() error
	// Kind is the store's memory kind (a PostgreSQL store is long-term).
	Kind() Kind
	// Stats describes the store: where it is, what built it, how much it
	// holds.
	Stats() Stats
}

var (
	_ Memory = (*Store)(nil)
	_ Memory = (*Postgres)(nil)
)

// Stats describes an open store.
type Stats struct {
	Store    string // the directory, or the URL without its password ([Redact])
	Kind     Kind
	Records  int
	Chunks   int // what the records are indexed as (a long-term store's sentences)
	Vectors  int
	Embedder string // an embed.Open spec
	Dim      int
	// Backend is the vector backend spec (without a password), or
	// "postgres" for a PostgreSQL store.
	Backend string
	// Schema and SchemaVersion are a PostgreSQL store's schema and its
	// version (migrations applied).
	Schema        string
	SchemaVersion int
	// TopK and MinScore are the defaults of a search that gives neither.
	TopK     int
	MinScore float32
}

// Stats describes the store (Memory.Stats).
func (s *Store) Stats() Stats {
	in := s.Info()
	return Stats{
		Store: in.Dir, Kind: s.kind, Records: in.Records, Chunks: in.Chunks, Vectors: in.Vectors,
		Embedder: in.Embedder, Dim: in.Dim, Backend: Redact(in.Backend), TopK: in.TopK, MinScore: in.MinScore,
	}
}

// Postgres is a long-term memory in PostgreSQL (package memory/postgres)
// as [OpenURL] opens it: the memory, and what the store knows of it.
type Postgres struct {
	*postgres.Memory
	target   string // the URL without its password
	embedder string
	dim      int
}

// Kind returns Long: a PostgreSQL store is long-term.
func (p *Postgres) Kind() Kind { return Long }

// Stats describes the store (Memory.Stats); Records and Chunks are 0 when
// the server cannot be reached (StatsContext tells that apart).
func (p *Postgres) Stats() Stats {
	chunks := p.Chunks()
	return p.stats(p.Len(), chunks)
}

// StatsContext is Stats, with the counts read in one statement: a server
// that cannot be reached is an error wrapping memory.ErrUnavailable, not
// a store of 0 records.
func (p *Postgres) StatsContext(ctx context.Context) (Stats, error) {
	records, chunks, err := p.Counts(ctx)
	if err != nil {
		return Stats{}, err
	}
	return p.stats(records, chunks), nil
}

func (p *Postgres) stats(records, chunks int) Stats {
	return Stats{
		Store: p.target, Kind: Long, Records: records, Chunks: chunks, Vectors: chunks,
		Embedder: p.embedder, Dim: p.dim, Backend: "postgres", Schema: p.Schema(), SchemaVersion: postgres.SchemaVersion,
	}
}

// IsURL reports whether target is a PostgreSQL store URL (postgres:// or
// postgresql://) rather than a store directory.
func IsURL(target string) bool { return postgres.IsURL(target) }

// OpenURL is the store opener: it opens the store target names, a
// PostgreSQL store for a postgres:// (or postgresql://) URL (package
// memory/postgres; schema=NAME in the URL picks the store inside the
// database), otherwise the store directory, as [Open]. Any other URL
// (mysql://, s3://, …) is an error wrapping memory.ErrInvalidArgument
// ([CheckTarget]); nothing is created for it.
//
// A PostgreSQL store is long-term (a Kind of short is an error wrapping
// memory.ErrInvalidArgument) and keeps no backend spec (cfg.Backend and
// cfg.Long are ignored); its embedder is the one its manifest records
// unless cfg.Embedder names another, which is an error wrapping
// memory.ErrEmbedderMismatch for an existing store. Create makes a missing
// store unless ReadOnly is set. No error holds the URL's password
// ([Redact]).
func OpenURL(ctx context.Context, target string, cfg Config) (Memory, error) {
	if err := CheckTarget(target); err != nil {
		return nil, err
	}
	if !IsURL(target) {
		st, err := Open(ctx, target, cfg)
		if err != nil {
			return nil, err
		}
		return st, nil
	}
	p, _, err := openPostgres(ctx, target, cfg)
	if err != nil {
		return nil, redactError(err, target)
	}
	return p, nil
}

// openPostgres opens the PostgreSQL store at url as OpenURL does, and
// returns the manifest it read before opening (the zero Manifest for a
// store it created).
func openPostgres(ctx context.Context, url string, cfg Config) (*Postgres, postgres.Manifest, error) {
	if cfg.Kind != "" && cfg.Kind != Long {
		return nil, postgres.Manifest{}, fmt.Errorf("store: %w: a PostgreSQL store is long-term, not %s-term", memory.ErrInvalidArgument, cfg.Kind)
	}
	create := cfg.Create && !cfg.ReadOnly
	spec := cfg.Embedder
	man, err := postgres.ReadManifest(ctx, url)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if !create {
			return nil, man, err
		}
		if spec == "" {
			spec = DefaultEmbedder
		}
	case err != nil:
		return nil, man, fmt.Errorf("store: %w", err)
	case spec == "":
		spec = man.Embedder
	}
	emb, err := embed.Open(spec)
	if err != nil {
		return nil, man, fmt.Errorf("store: %w", err)
	}
	dim, err := embed.Dimension(ctx, emb)
	if err != nil {
		return nil, man, fmt.Errorf("store: %w", err)
	}
	opts := []postgres.Option{postgres.WithLogger(cfg.Logger)}
	if create {
		opts = append(opts, postgres.WithCreate())
	}
	if cfg.TopK != 0 {
		opts = append(opts, postgres.WithTopK(cfg.TopK))
	}
	if cfg.MinScore != 0 {
		opts = append(opts, postgres.WithMinScore(cfg.MinScore))
	}
	if cfg.OneShot {
		opts = append(opts, postgres.WithoutBackgroundReads())
	}
	m, err := postgres.Open(ctx, url, emb, opts...)
	if err != nil {
		return nil, man, err
	}
	return &Postgres{Memory: m, target: Redact(url), embedder: emb.Name(), dim: dim}, man, nil
}

// VerifyReport is what [Verify] found. A store directory's report is
// longterm's; a PostgreSQL store's has Dir (the URL without its password),
// Opened (it opened: Records counts its memories), Records, Problems and
// Warnings of it, and the fields below.
type VerifyReport struct {
	longterm.VerifyReport
	Schema        string `json:"schema,omitempty"`
	SchemaVersion int    `json:"schema_version,omitempty"`
	Embedder      string `json:"embedder,omitempty"`
	Dim           int    `json:"dim,omitempty"`
	// Tokenizer names the keyword tokenizer that cut the records' terms
	// (postgres.Manifest.Tokenizer), after the open.
	Tokenizer string `json:"tokenizer,omitempty"`
	Chunks    int    `json:"chunks,omitempty"`
}

// verifyPostgres checks the PostgreSQL store at url: its schema version
// and its manifest (an embedder this build opens, of the recorded
// dimension, and the one cfg.Embedder names, if any), then opens it as a
// reader does (which migrates an older schema), counts its records and
// chunks and checks its rows (postgres.Memory.Verify: statistics against
// postings and records, orphan rows). Damage is listed in Problems and
// makes the error wrap memory.ErrCorrupt, memory.ErrVersion or
// memory.ErrEmbedderMismatch; a missing store or a server that cannot be
// reached is an error alone.
func verifyPostgres(ctx context.Context, url string, cfg Config) (VerifyReport, error) {
	rep := VerifyReport{VerifyReport: longterm.VerifyReport{Dir: Redact(url)}}
	damage := func(err error) (VerifyReport, error) {
		err = redactError(err, url)
		rep.Problems = append(rep.Problems, err.Error())
		return rep, err
	}
	man, err := postgres.ReadManifest(ctx, url)
	if err != nil {
		return rep, redactError(fmt.Errorf("store: %w", err), url)
	}
	rep.Schema, rep.SchemaVersion, rep.Embedder, rep.Dim = man.Schema, man.Version, man.Embedder, man.Dim
	switch {
	case man.Version > postgres.SchemaVersion:
		return damage(fmt.Errorf("store: %w: schema %q is at version %d, this build knows %d (upgrade agentmem)",
			memory.ErrVersion, man.Schema, man.Version, postgres.SchemaVersion))
	case man.Embedder == "" || man.Dim <= 0:
		return damage(fmt.Errorf("store: %w: schema %q's manifest names embedder %q of dimension %d",
			memory.ErrCorrupt, man.Schema, man.Embedder, man.Dim))
	case cfg.Embedder != "" && cfg.Embedder != man.Embedder:
		return damage(fmt.Errorf("store: %w: schema %q was built with embedder %s, not %s",
			memory.ErrEmbedderMismatch, man.Schema, man.Embedder, cfg.Embedder))
	}
	cfg.Create, cfg.ReadOnly, cfg.Embedder = false, true, ""
	p, _, err := openPostgres(ctx, url, cfg)
	switch {
	case errors.Is(err, embed.ErrBadSpec):
		return damage(fmt.Errorf("store: %w: schema %q's manifest names embedder %q: %v", memory.ErrCorrupt, man.Schema, man.Embedder, err))
	case errors.Is(err, memory.ErrEmbedderMismatch):
		return damage(err) // the manifest's dimension is not its embedder's
	}
	if err != nil {
		return rep, redactError(err, url)
	}
	defer p.Close()
	rep.Opened = true
	if man.Version < postgres.SchemaVersion {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("schema %q was at version %d; opening it migrated it to %d", man.Schema, man.Version, postgres.SchemaVersion))
		rep.SchemaVersion = postgres.SchemaVersion
	}
	opened, err := postgres.ReadManifest(ctx, url)
	if err != nil {
		return rep, redactError(fmt.Errorf("store: %w", err), url)
	}
	rep.Tokenizer = opened.Tokenizer
	if man.Tokenizer != opened.Tokenizer {
		was := "no tokenizer recorded"
		if man.Tokenizer != "" {
			was = "tokenizer " + man.Tokenizer
		}
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("schema %q's terms were cut by %s; opening cut them again with %s", man.Schema, was, opened.Tokenizer))
	}
	if rep.Records, rep.Chunks, err = p.Counts(ctx); err != nil {
		return rep, redactError(fmt.Errorf("store: %w", err), url)
	}
	problems, err := p.Verify(ctx)
	if err != nil {
		return rep, redactError(fmt.Errorf("store: %w", err), url)
	}
	if len(problems) > 0 {
		rep.Problems = append(rep.Problems, problems...)
		more := ""
		if len(problems) > 1 {
			more = fmt.Sprintf(" (and %d more)", len(problems)-1)
		}
		return rep, fmt.Errorf("store: %w: schema %q: %s%s", memory.ErrCorrupt, man.Schema, problems[0], more)
	}
	return rep, nil
}
