package pgvector

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmem/agentmem/internal/errs"
)

// DefaultTablePrefix is the prefix of the tables that hold the namespaces.
const DefaultTablePrefix = "agentmem_vec_"

// DefaultEfSearch is the HNSW search width when none is given: pgvector's
// own default (40) found 0.68 of the true ten nearest among a million
// clustered vectors where 100 found 0.83 for about 1 ms more (README),
// and it is memory/postgres's default too.
const DefaultEfSearch = 100

// maxEfSearch is pgvector's upper bound on hnsw.ef_search.
const maxEfSearch = 1000

type config struct {
	namespace      string
	prefix         string
	exact          bool
	efSearch       int
	m              int
	efConstruction int
}

func defaults() config {
	return config{prefix: DefaultTablePrefix, efSearch: DefaultEfSearch, m: 16, efConstruction: 64}
}

// An Option configures [New].
type Option func(*config) error

// WithNamespace sets the namespace the database serves: its table. The
// default is "default".
func WithNamespace(ns string) Option {
	return func(c *config) error {
		c.namespace = ns
		return nil
	}
}

var prefixRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,39}$`)

// WithTablePrefix sets the prefix of the table names (lower-case letters,
// digits and '_', at most 40 bytes, not starting with a digit). The default
// is [DefaultTablePrefix].
func WithTablePrefix(p string) Option {
	return func(c *config) error {
		if !prefixRE.MatchString(p) {
			return fmt.Errorf("%w: pgvector: table prefix %q: want lower-case letters, digits and '_', at most 40 bytes, not starting with a digit", errs.InvalidArgument, p)
		}
		c.prefix = p
		return nil
	}
}

// WithExact selects exact search: no index, a scan of the whole table per
// query.
func WithExact() Option {
	return func(c *config) error {
		c.exact = true
		return nil
	}
}

func intRange(name string, v, lo, hi int) error {
	if v < lo || v > hi {
		return fmt.Errorf("%w: pgvector: %s %d out of range [%d, %d]", errs.InvalidArgument, name, v, lo, hi)
	}
	return nil
}

// WithEfSearch sets the HNSW search width (1–1000, default
// DefaultEfSearch); each search uses max(ef, k).
func WithEfSearch(ef int) Option {
	return func(c *config) error {
		c.efSearch = ef
		return intRange("ef_search", ef, 1, maxEfSearch)
	}
}

// WithM sets the HNSW graph degree (2–100, default 16), used when the index
// is built.
func WithM(m int) Option {
	return func(c *config) error {
		c.m = m
		return intRange("m", m, 2, 100)
	}
}

// WithEfConstruction sets the HNSW build width (4–1000, default 64), used
// when the index is built.
func WithEfConstruction(ef int) Option {
	return func(c *config) error {
		c.efConstruction = ef
		return intRange("ef_construction", ef, 4, 1000)
	}
}

// TableName returns the table that holds namespace ns under prefix:
// prefix + ns when ns is made of lower-case letters, digits and '_' and the
// result fits; otherwise the namespace is folded to those characters,
// shortened, and followed by '_' and 8 hex digits of its SHA-256, so that two
// namespaces never share a table. The empty namespace is "default".
func TableName(prefix, ns string) string {
	if ns == "" {
		ns = "default"
	}
	var b strings.Builder
	clean := true
	for _, r := range ns {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r - 'A' + 'a')
			clean = false
		default:
			b.WriteByte('_')
			clean = false
		}
	}
	// 63 is PostgreSQL's identifier limit; keep room for the index suffix.
	const maxLen = 63 - len(indexSuffix)
	name := prefix + b.String()
	if clean && len(name) <= maxLen {
		return name
	}
	sum := sha256.Sum256([]byte(ns))
	tag := "_" + hex.EncodeToString(sum[:4])
	body := b.String()
	if keep := maxLen - len(prefix) - len(tag); len(body) > keep {
		body = body[:keep]
	}
	return prefix + body + tag
}

const indexSuffix = "_hnsw"

// spec options: the agentmem parameters of a DSN. The rest is pgx's.
var specOptions = []string{"table_prefix", "exact", "ef_search", "m", "ef_construction"}

// parseSpec parses a registry argument (a DSN with agentmem options) into a
// pool config and the options.
func parseSpec(arg string) (*pgxpool.Config, []Option, error) {
	pc, err := pgxpool.ParseConfig(arg)
	if err != nil {
		// pgx redacts the password from its message.
		return nil, nil, fmt.Errorf("%w: pgvector: bad DSN: %v (want pgvector:postgres://user@host/db?… or pgvector:host=… dbname=…)", errs.InvalidArgument, err)
	}
	var opts []Option
	params := pc.ConnConfig.RuntimeParams
	for _, k := range specOptions {
		v, ok := params[k]
		if !ok {
			continue
		}
		delete(params, k)
		switch k {
		case "table_prefix":
			opts = append(opts, WithTablePrefix(v))
		case "exact":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, nil, fmt.Errorf("%w: pgvector: exact=%q: want 1 or 0", errs.InvalidArgument, v)
			}
			if b {
				opts = append(opts, WithExact())
			}
		default:
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, nil, fmt.Errorf("%w: pgvector: %s=%q: want an integer", errs.InvalidArgument, k, v)
			}
			switch k {
			case "ef_search":
				opts = append(opts, WithEfSearch(n))
			case "m":
				opts = append(opts, WithM(n))
			case "ef_construction":
				opts = append(opts, WithEfConstruction(n))
			}
		}
	}
	return pc, opts, nil
}

// redactedDSN describes where a pool connects, without the password.
func redactedDSN(pc *pgxpool.Config) string {
	c := pc.ConnConfig
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s", c.Host, c.Port, c.User, c.Database)
}

// RedactedDSN describes where a pool connects (host, port, user, database)
// without the password, for error messages.
func RedactedDSN(pc *pgxpool.Config) string { return redactedDSN(pc) }
