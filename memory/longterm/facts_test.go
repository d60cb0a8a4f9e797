package longterm

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/engine"
)

func manifestFormat(t *testing.T, dir string) int {
	t.Helper()
	var m struct{ Format int }
	b, err := os.ReadFile(filepath.Join(dir, manifestFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &m))
	return m.Format
}

// TestFacts_FormatUpgrade: a store stays format 1 (readable by the
// previous release) until its first record with validity or versions,
// which makes it format 2 and keeps the format 1 manifest beside it.
func TestFacts_FormatUpgrade(t *testing.T) {
	ctx := t.Context()
	emb, err := hash.New(64)
	require.NoError(t, err)
	dir := t.TempDir()
	m, err := Open(ctx, dir, emb)
	require.NoError(t, err)
	_, err = m.Add(ctx, Record{ID: "a", Text: "Dana lives in Paris."})
	require.NoError(t, err)
	require.NoError(t, m.Close())
	assert.Equal(t, 1, manifestFormat(t, dir), "plain records keep format 1")
	assert.NoFileExists(t, filepath.Join(dir, manifestFormat1))
	before, err := os.ReadFile(filepath.Join(dir, manifestFile))
	require.NoError(t, err)

	m, err = Open(ctx, dir, emb)
	require.NoError(t, err)
	assert.Equal(t, 1, manifestFormat(t, dir), "opening a format 1 store leaves it format 1")
	_, err = m.Supersede(ctx, "a", Record{Text: "Dana lives in Berlin."})
	require.NoError(t, err)
	assert.Equal(t, 2, manifestFormat(t, dir), "the first record with versions makes the store format 2")
	kept, err := os.ReadFile(filepath.Join(dir, manifestFormat1))
	require.NoError(t, err)
	assert.Equal(t, before, kept, "the format 1 manifest is kept as it was")
	require.NoError(t, m.Close())

	m, err = Open(ctx, dir, emb)
	require.NoError(t, err)
	defer m.Close()
	h, err := m.History(ctx, "a")
	require.NoError(t, err)
	require.Len(t, h, 2)
	assert.Equal(t, h[1].ID, h[0].SupersededBy)
}

// TestFacts_CompactKeepsState: compaction drops the frames that closed a
// record (a forgotten successor's) and counted it (recSeen); the record's
// own frame then says it.
func TestFacts_CompactKeepsState(t *testing.T) {
	ctx := t.Context()
	emb, err := hash.New(64)
	require.NoError(t, err)
	dir := t.TempDir()
	m, err := Open(ctx, dir, emb)
	require.NoError(t, err)
	outs, err := m.Remember(ctx, Record{Text: "Dana lives in Paris.", Time: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)},
		Record{Text: "dana lives in paris"})
	require.NoError(t, err)
	old, dup := outs[0], outs[1]
	require.True(t, dup.Duplicate, "a duplicate of an earlier record of the batch")
	require.Equal(t, old.ID, dup.ID)
	next, err := m.Supersede(ctx, old.ID, Record{Text: "Dana lives in Berlin.", Time: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)})
	require.NoError(t, err)
	require.NoError(t, m.Forget(ctx, next.ID))
	require.NoError(t, m.Compact(ctx))
	require.NoError(t, m.Close())
	// Without the snapshot, the log alone must say it.
	require.NoError(t, os.Remove(filepath.Join(dir, snapMetaFile)))
	m, err = Open(ctx, dir, emb)
	require.NoError(t, err)
	defer m.Close()
	got, ok := m.Get(old.ID)
	require.True(t, ok)
	assert.Equal(t, next.ID, got.SupersededBy, "closed by a successor that was forgotten since")
	assert.True(t, got.ValidUntil.Equal(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)), "%v", got.ValidUntil)
	assert.Equal(t, 1, got.Seen, "seen again once")
	assert.Equal(t, 1, m.Len(), "the duplicate was not stored")
	hits, err := m.Query(ctx, Query{Text: "where does Dana live", MinRelevance: -1})
	require.NoError(t, err)
	assert.Empty(t, hits, "the closed record is not current")
}

// factsKillEnv selects the writer mode of TestFactsKill9Helper: the value
// is the store directory.
const factsKillEnv = "LONGTERM_FACTS_KILL9_DIR"

// TestFactsKill9Helper is not a test on its own: run by TestFactsKill9 in
// a child process, it grows chains of versions (each Supersede of a
// chain's current version) and writes duplicates, printing "ack ID" after
// each acknowledged version, until it is killed.
func TestFactsKill9Helper(t *testing.T) {
	dir := os.Getenv(factsKillEnv)
	if dir == "" {
		t.Skip("helper process for TestFactsKill9")
	}
	emb, err := hash.New(64)
	if err != nil {
		panic(err)
	}
	m, err := Open(t.Context(), dir, emb, WithSnapshotEvery(16))
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(3)
	}
	out := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		chain := fmt.Sprintf("chain%d", i%7)
		cur := chain
		if h, err := m.History(t.Context(), chain); err == nil {
			cur = h[len(h)-1].ID
			id := fmt.Sprintf("%s-%d-%d", chain, os.Getpid(), i)
			_, err = m.Supersede(t.Context(), cur, Record{ID: id, Text: fmt.Sprintf("Fact %s is now at version %d.", chain, i)})
			if err != nil {
				fmt.Println("supersede:", err)
				os.Exit(4)
			}
			fmt.Fprintln(out, "ack", id)
		} else {
			if _, err := m.Add(t.Context(), Record{ID: chain, Text: fmt.Sprintf("Fact %s starts.", chain)}); err != nil {
				fmt.Println("add:", err)
				os.Exit(4)
			}
			fmt.Fprintln(out, "ack", chain)
		}
		if _, err := m.Remember(t.Context(), Record{Text: "A fact said again and again."}); err != nil {
			fmt.Println("remember:", err)
			os.Exit(4)
		}
		out.Flush()
	}
}

// TestFactsKill9 kills a process that supersedes with SIGKILL at several
// points and checks after each that every acknowledged version is stored
// and that every chain has exactly one current version.
func TestFactsKill9(t *testing.T) {
	n := killRounds(t, "TestFactsKill9Helper", factsKillEnv, []int{4, 19, 33, 2, 47, 9, 28, 13},
		func(m *Memory, round int, acked map[string]bool) {
			for c := range 7 {
				h, err := m.History(t.Context(), fmt.Sprintf("chain%d", c))
				if err != nil {
					require.ErrorIs(t, err, memory.ErrNotFound)
					continue
				}
				current := 0
				for i, r := range h {
					if r.SupersededBy == "" {
						current++
					}
					if i > 0 {
						assert.Equal(t, h[i-1].ID, r.Supersedes, "round %d: a chain is linked both ways", round)
					}
				}
				assert.Equal(t, 1, current, "round %d: chain%d has one current version: %+v", round, c, h)
			}
		})
	t.Logf("%d acknowledged versions survived 8 kills", n)
}

// TestFacts_NearPolicies: a near-duplicate is stored and reported (keep),
// merged into the stored record (merge) or refused (refuse); off looks
// for none.
func TestFacts_NearPolicies(t *testing.T) {
	ctx := t.Context()
	emb, err := hash.New(256)
	require.NoError(t, err)
	first := Record{Text: "Dana now lives in Paris.", Speaker: "Dana"}
	near := Record{Text: "Dana lives in Paris now.", Speaker: "Dana"}
	for _, p := range []engine.NearPolicy{engine.NearKeep, engine.NearMerge, engine.NearRefuse, engine.NearOff} {
		t.Run(p.String(), func(t *testing.T) {
			m, err := New(ctx, emb, WithEngine(engine.WithNearDuplicates(engine.DefaultNearScore, p)))
			require.NoError(t, err)
			outs, err := m.Remember(ctx, first)
			require.NoError(t, err)
			id := outs[0].ID
			outs, err = m.Remember(ctx, near)
			switch p {
			case engine.NearKeep:
				require.NoError(t, err)
				assert.False(t, outs[0].Duplicate)
				require.Len(t, outs[0].Similar, 1)
				assert.Equal(t, id, outs[0].Similar[0].ID)
				assert.Equal(t, 2, m.Len())
			case engine.NearMerge:
				require.NoError(t, err)
				assert.True(t, outs[0].Duplicate)
				assert.Equal(t, id, outs[0].ID)
				assert.Equal(t, 1, m.Len())
				got, _ := m.Get(id)
				assert.Equal(t, 1, got.Seen)
			case engine.NearRefuse:
				require.ErrorIs(t, err, memory.ErrDuplicate)
				assert.Contains(t, err.Error(), id)
				assert.Equal(t, 1, m.Len())
			case engine.NearOff:
				require.NoError(t, err)
				assert.Empty(t, outs[0].Similar)
				assert.Equal(t, 2, m.Len())
			}
		})
	}
	_, err = New(ctx, emb, WithEngine(engine.WithNearDuplicates(1.5, engine.NearKeep)))
	assert.ErrorIs(t, err, memory.ErrInvalidArgument)
}

// TestFacts_RepairKeepsFormat: repairing a store whose log holds records
// with versions, after its manifest was lost, writes a format 2 manifest,
// and the versions are kept.
func TestFacts_RepairKeepsFormat(t *testing.T) {
	ctx := t.Context()
	emb, err := hash.New(64)
	require.NoError(t, err)
	dir := t.TempDir()
	m, err := Open(ctx, dir, emb)
	require.NoError(t, err)
	_, err = m.Add(ctx, Record{ID: "a", Text: "Dana lives in Paris."})
	require.NoError(t, err)
	_, err = m.Supersede(ctx, "a", Record{ID: "b", Text: "Dana lives in Berlin."})
	require.NoError(t, err)
	crash(m)
	require.NoError(t, os.Remove(filepath.Join(dir, manifestFile)))
	_, err = Repair(ctx, dir, emb, WithLogger(discardLogger), WithKind(KindLong))
	require.NoError(t, err)
	assert.Equal(t, formatFacts, manifestFormat(t, dir))
	m, err = Open(ctx, dir, emb)
	require.NoError(t, err)
	defer m.Close()
	h, err := m.History(ctx, "b")
	require.NoError(t, err)
	assert.Equal(t, "b", h[0].SupersededBy)
}

// TestFacts_NearReusesTheVector: looking for a one-sentence fact's
// near-duplicates embeds nothing more than storing it does (its chunk's
// vector is the whole text's).
func TestFacts_NearReusesTheVector(t *testing.T) {
	emb := newCounting(t, 64)
	m, err := New(t.Context(), emb)
	require.NoError(t, err)
	_, err = m.Remember(t.Context(), Record{Text: "Dana lives in Paris."})
	require.NoError(t, err)
	before := emb.Texts()
	outs, err := m.Remember(t.Context(), Record{Text: "Dana lives in Paris now."})
	require.NoError(t, err)
	assert.NotEmpty(t, outs[0].Similar, "the first is a near-duplicate")
	assert.Equal(t, before+1, emb.Texts(), "one text embedded: the fact's, used for its near-duplicates too")
}
