package memorytest

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed"
	_ "github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/longterm"
	_ "github.com/agentmem/agentmem/vdb/inmem"
)

// embedder is the offline hash embedder the suite's own tests use.
var embedder = func() embed.Embedder {
	emb, err := embed.Open("hash:64")
	if err != nil {
		panic(err)
	}
	return emb
}()

// openLongterm opens a longterm memory in memory.
func openLongterm(t *testing.T) *longterm.Memory {
	t.Helper()
	m, err := longterm.New(t.Context(), embedder)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	return m
}

// TestMemorytestLongterm runs the suite on memory/longterm in memory.
func TestMemorytestLongterm(t *testing.T) {
	Run(t, func(t *testing.T) Subject { return Subject{Memory: openLongterm(t)} })
}

// bare is a memory that implements memory.Memory and nothing more.
type bare struct{ m memory.Memory }

func (b bare) Update(ctx context.Context, s string) error { return b.m.Update(ctx, s) }
func (b bare) Search(ctx context.Context, q string) ([]memory.Hit, error) {
	return b.m.Search(ctx, q)
}

// TestMemorytestBareMemory checks that the rules of memory.Memory pass on
// a memory that implements nothing else, and that the others are skipped
// saying which interface the memory lacks.
func TestMemorytestBareMemory(t *testing.T) {
	open := func(t *testing.T) Subject { return Subject{Memory: bare{openLongterm(t)}} }
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			rec := checkRule(t, r.name, open)
			report := rec.report()
			switch r.name {
			case "SearchEmpty", "UpdateSearch", "UpdateEmptyText", "QueryTextRepaired", "Concurrent", "ContextCancelled":
				assert.False(t, rec.failed || rec.skipped, "rule %s on a bare memory.Memory:\n%s", r.name, report)
			case "CloseIdempotent", "UseAfterClose", "CloseWhileBusy":
				assert.True(t, rec.skipped && strings.Contains(report, "io.Closer"), "rule %s on a memory without Close:\n%s", r.name, report)
			case "Reopen":
				assert.True(t, rec.skipped && strings.Contains(report, "Reopen"), "rule %s on a memory without Reopen:\n%s", r.name, report)
			case "FactsDuplicates", "FactsNearDuplicates", "FactsSupersede", "FactsConflict", "FactsValidity", "FactsReopen":
				assert.True(t, rec.skipped && strings.Contains(report, "memory.Facts"), "rule %s on a bare memory.Memory:\n%s", r.name, report)
			default:
				assert.True(t, rec.skipped && strings.Contains(report, "memory.Records"), "rule %s on a bare memory.Memory:\n%s", r.name, report)
			}
		})
	}
}

// TestMemorytestNoNamespaces checks that NoNamespaces skips the
// Namespaces rule, saying so.
func TestMemorytestNoNamespaces(t *testing.T) {
	rec := checkRule(t, "Namespaces", openBroken(nil), NoNamespaces())
	assert.True(t, rec.skipped && strings.Contains(rec.report(), "NoNamespaces"), rec.report())
}

// TestMemorytestKnownFailure checks what a KnownFailure comes to: a skip
// that names the reason while the rule fails, an error once it passes.
func TestMemorytestKnownFailure(t *testing.T) {
	failing := checkRule(t, "Forget", openBroken(func(b *broken) {
		b.forget = func(context.Context, string) error { return nil }
	}))
	msg, skip := failing.verdict("Forget", "issue 1")
	assert.True(t, skip, "a known failure that fails is skipped")
	assert.Contains(t, msg, "known failure: issue 1")
	assert.Contains(t, msg, "rule: Get does not find a forgotten record")

	passing := checkRule(t, "Forget", openBroken(nil))
	msg, skip = passing.verdict("Forget", "issue 1")
	assert.False(t, skip, "a known failure that passes is an error")
	assert.Contains(t, msg, `remove KnownFailure("Forget", "issue 1")`)
}
