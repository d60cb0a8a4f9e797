// Package vdbtest is the conformance suite for [vdb.VectorDatabase]
// backends, in the style of nettest.TestConn and slogtest.Run: a backend's
// test calls [Run] with a constructor, and the suite runs named subtests,
// each against a fresh, empty database. Failure messages name the rule of the
// vdb contract that was broken.
//
//	func TestConformance(t *testing.T) {
//		vdbtest.Run(t, func(t *testing.T, dim int) vdb.VectorDatabase {
//			db, err := inmem.New(dim)
//			require.NoError(t, err)
//			t.Cleanup(func() { db.Close() })
//			return db
//		})
//	}
//
// Persistence is checked through [vdb.Save] and [vdb.Load] when the backend
// implements [vdb.Persister]. The suite assumes the stream starts with an
// 8-byte magic followed by a little-endian uint32 format version (see
// [VersionOffset] for other layouts), so that it can forge a stream from a
// newer version; a stream whose magic is damaged must fail with
// [vdb.ErrCorrupt], and only one from a newer version with [vdb.ErrVersion].
//
// [RunSpec] runs the suite on a backend opened through the registry
// ([vdb.Open]) by its spec.
package vdbtest

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/vdb"
)

// Open returns a new, empty database of dimension dim for one subtest. It
// should fail the test (t.Fatal) if the database cannot be made, register the
// database's Close with t.Cleanup, and put any files under t.TempDir(). The
// suite may call Open several times in one subtest (for example to load a
// saved database into a fresh one).
type Open func(t *testing.T, dim int) vdb.VectorDatabase

// An Option adapts the suite to a backend's documented limits.
type Option func(*config)

type config struct {
	minRecall     float64 // 0: exact backend
	noDelete      bool
	versionOffset int
}

// Approximate declares an approximate (ANN) backend: results are compared
// with the brute-force oracle by recall@k, which must be at least minRecall
// (for example 0.9), instead of by exact equality. Scores of the results that
// are returned must still be the true cosine similarities.
func Approximate(minRecall float64) Option {
	return func(c *config) { c.minRecall = minRecall }
}

// NoDelete declares a backend that documents that it cannot delete (such as
// a Faiss HNSW index). The Delete subtests are skipped; Delete must instead
// return an error wrapping errors.ErrUnsupported, and adding an ID that is
// already present may fail the same way (with nothing changed) rather than
// replace.
func NoDelete() Option {
	return func(c *config) { c.noDelete = true }
}

// VersionOffset tells the suite where the little-endian uint32 format version
// sits in an exported stream. The default is 8, just after an 8-byte magic.
func VersionOffset(n int) Option {
	return func(c *config) { c.versionOffset = n }
}

// OpenSpec returns an [Open] that makes each database with [vdb.Open] from
// spec (such as "inmem" or "faiss:HNSW32,Flat"), in the namespace
// "vdbtest", and closes it when the subtest ends. The backend's package must
// be imported (for its registration) by the test.
func OpenSpec(spec string) Open {
	return func(t *testing.T, dim int) vdb.VectorDatabase {
		t.Helper()
		db, err := vdb.Open(t.Context(), spec, vdb.Config{Dim: dim, Namespace: "vdbtest"})
		require.NoError(t, err, "vdb.Open(%q)", spec)
		t.Cleanup(func() { db.Close() })
		return db
	}
}

// RunSpec runs the conformance suite against the backend registered under
// spec's name, opened through the registry as a program opens it:
//
//	import _ "github.com/agentmem/agentmem/vdb/inmem"
//
//	func TestConformance(t *testing.T) { vdbtest.RunSpec(t, "inmem") }
func RunSpec(t *testing.T, spec string, opts ...Option) {
	t.Helper()
	Run(t, OpenSpec(spec), opts...)
}

// Run runs the conformance suite against the databases open returns, as
// subtests named after the rule they check: SearchEmpty, AddEmpty,
// AddSameIDReplaces, AddDuplicateInBatch, AddSearchExact, MatchesBruteForce
// (against a seeded float64 oracle), KLargerThanLen, DeleteUnknownIsNoop,
// Delete, DimensionMismatch, InvalidVector, InvalidK, InvalidID,
// AddBatchIsAtomic, ResultsDoNotAlias, TiesByID, UseAfterClose,
// ConcurrentAddSearch (meaningful under -race), ContextCancelled, MinScore
// (through [vdb.SearchMinScore]), SearchBatch (through [vdb.SearchBatch]) and
// SaveLoadRoundTrip (through [vdb.Save] and [vdb.Load]). Run a single rule
// with -run 'TestConformance/TiesByID'.
func Run(t *testing.T, open Open, opts ...Option) {
	t.Helper()
	c := &config{versionOffset: 8}
	for _, o := range opts {
		o(c)
	}
	s := &suite{open: open, cfg: c}
	tests := []struct {
		name string
		fn   func(*testing.T)
	}{
		{"SearchEmpty", s.testSearchEmpty},
		{"AddEmpty", s.testAddEmpty},
		{"AddSameIDReplaces", s.testAddSameIDReplaces},
		{"AddDuplicateInBatch", s.testAddDuplicateInBatch},
		{"AddSearchExact", s.testAddSearchExact},
		{"MatchesBruteForce", s.testMatchesBruteForce},
		{"KLargerThanLen", s.testKLargerThanLen},
		{"DeleteUnknownIsNoop", s.testDeleteUnknownIsNoop},
		{"Delete", s.testDelete},
		{"DimensionMismatch", s.testDimensionMismatch},
		{"InvalidVector", s.testInvalidVector},
		{"InvalidK", s.testInvalidK},
		{"InvalidID", s.testInvalidID},
		{"AddBatchIsAtomic", s.testAddBatchIsAtomic},
		{"ResultsDoNotAlias", s.testResultsDoNotAlias},
		{"TiesByID", s.testTiesByID},
		{"UseAfterClose", s.testUseAfterClose},
		{"ConcurrentAddSearch", s.testConcurrentAddSearch},
		{"ContextCancelled", s.testContextCancelled},
		{"MinScore", s.testMinScore},
		{"SearchBatch", s.testSearchBatch},
		{"SaveLoadRoundTrip", s.testSaveLoadRoundTrip},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.fn)
	}
}

// scoreTol is how far a backend's float32 score may drift from the oracle's
// float64 cosine.
const scoreTol = 1e-4

type suite struct {
	open Open
	cfg  *config
}

func (s *suite) exact() bool { return s.cfg.minRecall == 0 }

// newDB opens a database and checks the rules for a fresh one.
func (s *suite) newDB(t *testing.T, dim int) vdb.VectorDatabase {
	t.Helper()
	db := s.open(t, dim)
	require.NotNil(t, db, "Open must return a database")
	require.Equal(t, dim, db.Dim(), "rule: Dim() must return the dimension the database was opened with")
	require.Equal(t, 0, db.Len(), "rule: Open must return an empty database")
	return db
}

// start is the common beginning of a test: its context, a fresh database
// of dimension dim and a random source with a fixed seed.
func (s *suite) start(t *testing.T, dim int) (context.Context, vdb.VectorDatabase, *rand.Rand) {
	t.Helper()
	return t.Context(), s.newDB(t, dim), rand.New(rand.NewPCG(1, 2))
}
