package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/agent"
	"github.com/agentmem/agentmem/memory/longterm"
)

// longSearch is `search --json` on a long-term store.
type longSearch struct {
	Reason    string    `json:"reason"`
	Tokens    int       `json:"tokens"`
	Query     string    `json:"query"`
	Mode      string    `json:"mode"`
	Namespace string    `json:"namespace"`
	Hits      []longHit `json:"hits"`
}

func searchJSON(t *testing.T, args ...string) longSearch {
	t.Helper()
	r := runCLI(t, "", append([]string{"search", "--json"}, args...)...)
	require.Equal(t, exitOK, r.code, r.stderr)
	var res longSearch
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res), r.stdout)
	return res
}

func TestCLI_LongTerm_ImportSearchStats(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "store")
	r := runCLI(t, "", "import", "--memory", "long", conversation, "--store", store)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "imported 70 memories")
	assert.Empty(t, r.stderr)
	man, err := longterm.ReadManifest(store)
	require.NoError(t, err, "a long-term store was made")
	assert.Equal(t, "hash:512", man.Embedder)

	// Without --memory the store's kind is detected.
	r = runCLI(t, "", "search", "--store", store, "LH 2043")
	require.Equal(t, exitOK, r.code, r.stderr)
	first, _, _ := strings.Cut(r.stdout, "\n\n")
	assert.Regexp(t, `^1\. relevance [01]\.\d\d  score [01]\.\d{4}  id [0-9a-f]{24}  \d{4}-\d\d-\d\d \d\d:\d\d  default  \(vector #1, keyword #1\)\n`, first)
	assert.Contains(t, first, "   Flight LH 2043 leaves Munich at 09:40.\n", "the matching sentence is a snippet")

	// The keyword path alone finds the code too; --json has the whole memory.
	res := searchJSON(t, "--store", store, "--mode", "keyword", "-k", "2", "LH 2043")
	assert.Equal(t, "keyword", res.Mode)
	require.NotEmpty(t, res.Hits)
	h := res.Hits[0]
	assert.Contains(t, h.Text, "I'm flying to Berlin on March 14")
	assert.Contains(t, h.Snippets, "Flight LH 2043 leaves Munich at 09:40.")
	assert.Equal(t, 1, h.KeywordRank)
	assert.Zero(t, h.VectorRank, "keyword mode runs no vector search")
	assert.Equal(t, longterm.DefaultNamespace, h.Namespace)

	// Chinese: the keyword path indexes character bigrams.
	r = runCLI(t, "", "search", "--store", store, "-k", "1", "花生过敏")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "我对花生过敏")
	assert.Equal(t, 1, strings.Count(r.stdout, "score "), "-k 1 prints one hit")

	requireReimportSkipsAll(t, store, 70)

	r = runCLI(t, "", "stats", "--json", "--store", store)
	require.Equal(t, exitOK, r.code, r.stderr)
	var st storeStats
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st))
	assert.Equal(t, storeStats{Store: store, Memory: "long", Memories: 70, Chunks: st.Chunks, Vectors: st.Chunks, Embedder: "hash:512", Dim: 512, Backend: "inmem"}, st)
	assert.Greater(t, st.Chunks, 70, "rounds are split into sentences")

	r = runCLI(t, "", "stats", "--store", store, "--memory", "long")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Regexp(t, `memories\s+70\n`, r.stdout)
	assert.Regexp(t, `chunks\s+\d+\n`, r.stdout)
	assert.Regexp(t, `embedder\s+hash:512 \(dim 512\)\n`, r.stdout)
	assert.Regexp(t, `backend\s+inmem\n`, r.stdout)
}

func TestCLI_LongTerm_ImportFields(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "store")
	in := `{"text": "user: my badge number is NW-20417", "id": "badge", "namespace": "mara", "speaker": "user", "time": "2026-03-01T09:30:00+01:00"}
{"text": "user: my badge number is QX-555", "namespace": "tom"}
{"text": "user: the coffee machine is on floor 3"}
`
	r := runCLI(t, in, "import", "--memory", "long", "--store", store, "--namespace", "team", "-")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "imported 3 memories from - into")

	res := searchJSON(t, "--store", store, "--namespace", "mara", "badge number")
	assert.Equal(t, "mara", res.Namespace)
	require.Len(t, res.Hits, 1, "only mara's memory")
	h := res.Hits[0]
	assert.Equal(t, "badge", h.ID)
	assert.Equal(t, "mara", h.Namespace)
	assert.Equal(t, "user", h.Speaker)
	assert.True(t, h.Time.Equal(time.Date(2026, 3, 1, 8, 30, 0, 0, time.UTC)), "%v", h.Time)

	res = searchJSON(t, "--store", store, "--namespace", "team", "--mode", "keyword", "coffee")
	require.Len(t, res.Hits, 1, "a line without a namespace goes to --namespace")
	assert.Equal(t, "team", res.Hits[0].Namespace)
	assert.Len(t, res.Hits[0].ID, 24, "an id derived from the content")

	res = searchJSON(t, "--store", store, "--namespace", "nobody", "badge")
	assert.Empty(t, res.Hits, "an unknown namespace holds nothing")

	// The same id with another text replaces the memory; the other lines
	// are already stored.
	in = strings.Replace(in, "NW-20417", "NW-30000", 1)
	r = runCLI(t, in, "import", "--json", "--store", store, "--namespace", "team", "-")
	require.Equal(t, exitOK, r.code, r.stderr)
	var imp struct{ Imported, Skipped int }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &imp))
	assert.Equal(t, 1, imp.Imported)
	assert.Equal(t, 2, imp.Skipped)
	res = searchJSON(t, "--store", store, "--mode", "keyword", "NW-30000")
	require.NotEmpty(t, res.Hits)
	assert.Equal(t, "badge", res.Hits[0].ID)
	res = searchJSON(t, "--store", store, "--mode", "keyword", "20417")
	assert.Empty(t, res.Hits, "the old text is gone")

	r = runCLI(t, "", "stats", "--json", "--store", store)
	require.Equal(t, exitOK, r.code, r.stderr)
	var st storeStats
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st))
	assert.Equal(t, 3, st.Memories)
}

// TestCLI_LongTerm_ImportIDAcrossNamespaces: an id is the store's, so a
// file that gives two conversations the same turn ids ("S1:1" in each)
// stops before anything is stored, naming both lines, instead of keeping
// only the last conversation's turns; a line whose id a stored memory has
// in another namespace stops too, and the stored memory stays where it is.
func TestCLI_LongTerm_ImportIDAcrossNamespaces(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "store")
	in := `{"text": "I adopted a cat named Miso.", "id": "S1:1", "namespace": "ann"}
{"text": "My sister lives in Porto.", "id": "S1:2", "namespace": "ann"}
{"text": "I sold my bike last week.", "id": "S1:1", "namespace": "bob"}
`
	r := runCLI(t, in, "import", "--memory", "long", "--store", store, "-")
	assert.NotEqual(t, exitOK, r.code)
	assert.Contains(t, r.stderr, `standard input:3: invalid argument: id "S1:1" is line 1's in namespace "ann", but this line's namespace is "bob"`)
	assert.Contains(t, r.stderr, `"bob/S1:1"`, "a way out")
	r = runCLI(t, "", "stats", "--json", "--store", store)
	require.Equal(t, exitOK, r.code, r.stderr)
	var st storeStats
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st))
	assert.Zero(t, st.Memories, "nothing stored")

	first, _, _ := strings.Cut(in, "\n")
	r = runCLI(t, first, "import", "--store", store, "-")
	require.Equal(t, exitOK, r.code, r.stderr)
	r = runCLI(t, strings.Replace(first, `"ann"`, `"bob"`, 1), "import", "--store", store, "-")
	assert.NotEqual(t, exitOK, r.code)
	assert.Contains(t, r.stderr, `standard input:1: invalid argument: id "S1:1" is a stored memory's in namespace "ann", but this line's namespace is "bob"`)
	assert.Contains(t, r.stderr, "agentmem forget S1:1 first")
	res := searchJSON(t, "--store", store, "--namespace", "ann", "--mode", "keyword", "Miso")
	require.Len(t, res.Hits, 1, "still ann's")
	assert.Equal(t, "S1:1", res.Hits[0].ID)
}

func TestCLI_LongTerm_Add(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "store")
	r := runCLI(t, "", "add", "--memory", "long", "--store", store, "--namespace", "ops", "user: the wifi password is tulip-42\nassistant: saved")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Regexp(t, `^added 1 memory \(id [0-9a-f]{24}\) to `, r.stdout)

	r = runCLI(t, "user: 明天北京天气怎么样\nassistant: 晴，最高 12 度\n", "add", "--json", "--store", store)
	require.Equal(t, exitOK, r.code, r.stderr)
	var added struct{ IDs []string }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &added))
	require.Len(t, added.IDs, 1)

	r = runCLI(t, "", "search", "--store", store, "北京天气")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "id "+added.IDs[0])
	assert.Contains(t, r.stdout, "   user: 明天北京天气怎么样\n")

	res := searchJSON(t, "--store", store, "--namespace", "ops", "wifi password")
	require.Len(t, res.Hits, 1)
	assert.Equal(t, "ops", res.Hits[0].Namespace)
	assert.Contains(t, res.Hits[0].Text, "tulip-42")

	r = runCLI(t, "", "search", "--store", store, "--mode", "keyword", "zebra")
	require.Equal(t, exitOK, r.code, "no match is not a failure")
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, "no memory is relevant")

	r = runCLI(t, "", "add", "--store", store, "?!")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "no letter or digit")
}

// TestCLI_LongTerm_AddSimilar: add says which stored memories a new one
// nearly repeats (memory.Outcome.Similar), and how to keep one version,
// in text and in JSON.
func TestCLI_LongTerm_AddSimilar(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "store")
	r := runCLI(t, "", "add", "--json", "--memory", "long", "--store", store, "Dana now lives in Paris near the kumquat market.")
	require.Equal(t, exitOK, r.code, r.stderr)
	var first struct{ IDs []string }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &first))
	require.Len(t, first.IDs, 1)

	r = runCLI(t, "", "add", "--store", store, "Near the kumquat market Dana lives in Paris now.")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Regexp(t, `says nearly the same as stored memory `+first.IDs[0]+` \(cosine \d\.\d\d\): Dana now lives in Paris near the kumquat market\.\n`, r.stdout)
	assert.Contains(t, r.stdout, "agentmem supersede OLD-ID TEXT")

	r = runCLI(t, "", "add", "--json", "--store", store, "Dana lives in Paris now, near the kumquat market.")
	require.Equal(t, exitOK, r.code, r.stderr)
	var added struct {
		IDs     []string
		Similar []similarMemory
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &added))
	require.Len(t, added.IDs, 1)
	require.NotEmpty(t, added.Similar)
	assert.Equal(t, added.IDs[0], added.Similar[0].Near)
	assert.True(t, slices.ContainsFunc(added.Similar, func(s similarMemory) bool { return s.ID == first.IDs[0] }),
		"the first memory among them: %+v", added.Similar)
	assert.Greater(t, added.Similar[0].Score, float32(0.9))

	r = runCLI(t, "", "add", "--store", store, "Bob keeps bees on the roof.")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "nearly the same", "a memory like no other")
}

// TestCLI_LongTerm_AddFields: add sets the id, speaker, time and tags of
// a memory, and the same id replaces it.
func TestCLI_LongTerm_AddFields(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "store")
	add := func(args ...string) cliResult {
		return runCLI(t, "", append([]string{"add", "--memory", "long", "--store", store, "--namespace", "mara"}, args...)...)
	}
	r := add("--id", "u1", "--speaker", "user", "--time", "2026-03-01T09:30:00+01:00", "--tag", "travel,flights", "--tag", "work",
		"my flight is LH 401 on Friday")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, "added 1 memory (id u1) to "+store+"\n", r.stdout)
	r = add("--id", "a1", "--speaker", "assistant", "--time", "2026-03-01", "Noted: your flight is LH 401 on Friday, and your flight home is on Sunday.")
	require.Equal(t, exitOK, r.code, r.stderr)

	r = runCLI(t, "", "get", "--json", "--store", store, "u1")
	require.Equal(t, exitOK, r.code, r.stderr)
	var got struct {
		ID, Namespace, Speaker, Text string
		Time                         time.Time
		Tags                         []string
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got), r.stdout)
	assert.Equal(t, "mara", got.Namespace)
	assert.Equal(t, "user", got.Speaker)
	assert.True(t, got.Time.Equal(time.Date(2026, 3, 1, 8, 30, 0, 0, time.UTC)), "time %v", got.Time)
	assert.Equal(t, []string{"travel", "flights", "work"}, got.Tags)

	res := searchJSON(t, "--store", store, "--namespace", "mara", "--mode", "keyword", "when is my flight?")
	require.Len(t, res.Hits, 2)
	assert.Equal(t, "u1", res.Hits[0].ID)
	assert.Equal(t, "user", res.Hits[0].Speaker)
	assert.Equal(t, "assistant", res.Hits[1].Speaker)
	// --explain says whose words the query asks about: the user's, for a
	// question in the first person; the assistant's, for one about the
	// answerer's words.
	for q, who := range map[string]string{"when is my flight?": "user", "what did you note about my flight?": "assistant"} {
		r = runCLI(t, "", "search", "--store", store, "--namespace", "mara", "--mode", "keyword", "--explain", q)
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.Contains(t, r.stdout, "the query asks about what "+who+" said", q)
	}

	// The same id replaces the memory.
	require.Equal(t, exitOK, add("--id", "u1", "--speaker", "user", "my flight is LH 402 on Saturday").code)
	r = runCLI(t, "", "get", "--store", store, "u1")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "LH 402")
	assert.NotContains(t, r.stdout, "LH 401")

	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--id", "x", "one", "two"}, "--id names one memory, but 2 segments were given"},
		{[]string{"--time", "yesterday", "hi"}, `--time "yesterday" is not an RFC 3339 time`},
	} {
		r := add(tt.args...)
		assert.Equal(t, exitUsage, r.code, r.stderr)
		assert.Contains(t, r.stderr, tt.msg)
	}
}

func TestCLI_LongTerm_StoreRemembersEmbedder(t *testing.T) {
	t.Parallel()
	checkStoreRemembersEmbedder(t, "--memory", "long")
}

func TestCLI_MemoryKindErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	short := filepath.Join(dir, "short")
	long := filepath.Join(dir, "long")
	require.Equal(t, exitOK, runCLI(t, "", "add", "--store", short, "hello short").code)
	require.Equal(t, exitOK, runCLI(t, "", "add", "--store", long, "--memory", "long", "hello long").code)

	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"long flag on short store", []string{"search", "--store", short, "--memory", "long", "hello"}, exitUsage, "--memory long, but " + short + " holds a short-term memory store"},
		{"short flag on long store", []string{"stats", "--store", long, "--memory", "short"}, exitUsage, "--memory short, but " + long + " holds a long-term memory store"},
		{"add to other kind", []string{"add", "--store", long, "--memory", "short", "x"}, exitUsage, "holds a long-term"},
		{"import into other kind", []string{"import", "--store", short, "--memory", "long", conversation}, exitUsage, "holds a short-term"},
		{"chat on other kind", []string{"chat", "--store", short, "--memory", "long", "--dry-run", "hi"}, exitUsage, "holds a short-term"},
		{"unknown kind", []string{"search", "--store", short, "--memory", "medium", "hello"}, exitUsage, `unknown --memory "medium"`},
		{"namespace on short", []string{"search", "--store", short, "--namespace", "x", "hello"}, exitUsage, "--namespace needs a long-term memory store"},
		{"mode on short", []string{"search", "--store", short, "--mode", "keyword", "hello"}, exitUsage, "--mode needs a long-term"},
		{"add namespace on short", []string{"add", "--store", short, "--namespace", "x", "hi"}, exitUsage, "--namespace needs"},
		{"add speaker on short", []string{"add", "--store", short, "--speaker", "user", "hi"}, exitUsage, "--speaker needs"},
		{"bad mode", []string{"search", "--store", long, "--mode", "fuzzy", "hello"}, exitUsage, `unknown mode "fuzzy"`},
		{"missing long store", []string{"search", "--store", filepath.Join(dir, "none"), "--memory", "long", "hello"}, exitFailure, "no memory store"},
		{"bad import time", []string{"import", "--store", long, writeFile(t, dir, "t.jsonl", `{"text":"hi","time":"yesterday"}`)}, exitFailure, `t.jsonl:1: "time" "yesterday" is not an RFC 3339 time`},
		{"bad import id type", []string{"import", "--store", long, writeFile(t, dir, "id.jsonl", `{"text":"hi","id":7}`)}, exitFailure, "id.jsonl:1: want one JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, "", tt.args...)
			assert.Equal(t, tt.code, r.code, "exit code: %s", r.stderr)
			assert.Contains(t, r.stderr, tt.msg)
		})
	}
	// A short-term store ignores the fields it does not know.
	r := runCLI(t, "", "import", "--store", short, writeFile(t, dir, "id2.jsonl", `{"text":"hi there","id":7,"time":"yesterday"}`))
	assert.Equal(t, exitOK, r.code, r.stderr)
}

func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	return p
}

func TestChatCmd_LongTerm(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	r := runCLI(t, "", "import", "--memory", "long", "--store", store, conversation)
	require.Equal(t, exitOK, r.code, r.stderr)

	// Recall comes from the long-term store, found without --memory.
	t.Setenv("OLLAMA_HOST", "http://127.0.0.1:1") // never contacted
	out, _, err := execChat(t, "", "chat", "--store", store, "--json", "--dry-run", "when does flight LH 2043 leave?")
	require.NoError(t, err)
	var p agent.Prompt
	require.NoError(t, json.Unmarshal([]byte(out), &p))
	assert.Positive(t, p.Recalled)
	out, _, err = execChat(t, "", "chat", "--store", store, "--dry-run", "when does flight LH 2043 leave?")
	require.NoError(t, err)
	assert.Contains(t, out, "Recalled from long-term memory")
	assert.Contains(t, out, "Flight LH 2043 leaves Munich at 09:40")

	// Rounds the window forgets settle into the long-term store.
	startFakeOllama(t)
	_, _, err = execChat(t, "my locker code is 7781\nsecond\nthird\n", "chat", "--store", store, "--model", "m", "--rounds", "1")
	require.NoError(t, err)
	res := searchJSON(t, "--store", store, "--mode", "keyword", "7781")
	require.NotEmpty(t, res.Hits, "the evicted round is in the store")
	assert.Contains(t, res.Hits[0].Text, "my locker code is 7781")
	assert.Equal(t, longterm.DefaultNamespace, res.Hits[0].Namespace)
}

// TestCLI_LongTerm_SearchNeighbours: --neighbours prints, and --json
// returns, the memories said just before and after each hit.
func TestCLI_LongTerm_SearchNeighbours(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "store")
	r := runCLI(t, "", "import", "--memory", "long", conversation, "--store", store)
	require.Equal(t, exitOK, r.code, r.stderr)

	all := searchJSON(t, "--store", store, "--mode", "keyword", "-k", "1", "--neighbours", "50", "LH 2043")
	require.Len(t, all.Hits, 1)
	around := len(all.Hits[0].Before) + len(all.Hits[0].After)
	require.Positive(t, around, "the flight is talked about in a conversation")

	res := searchJSON(t, "--store", store, "--mode", "keyword", "-k", "1", "--neighbours", "1", "LH 2043")
	require.Len(t, res.Hits, 1)
	h := res.Hits[0]
	assert.LessOrEqual(t, len(h.Before), 1)
	assert.LessOrEqual(t, len(h.After), 1)
	assert.Equal(t, min(len(all.Hits[0].Before), 1)+min(len(all.Hits[0].After), 1), len(h.Before)+len(h.After))
	for _, n := range append(h.Before, h.After...) {
		assert.NotEmpty(t, n.Text)
		assert.NotEqual(t, h.ID, n.ID)
	}

	r = runCLI(t, "", "search", "--store", store, "--mode", "keyword", "-k", "1", "--neighbours", "1", "LH 2043")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Regexp(t, `\n   \((before|after)\) `, r.stdout)

	r = runCLI(t, "", "search", "--store", store, "--neighbours", "51", "LH 2043")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "--neighbours must be in [0, 50]")
	short := filepath.Join(t.TempDir(), "short")
	require.Equal(t, exitOK, runCLI(t, "", "add", "--store", short, "a note").code)
	r = runCLI(t, "", "search", "--store", short, "--neighbours", "1", "note")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "--neighbours needs a long-term memory store")
}

// TestCLI_LongTerm_Relevance: a search says when no memory is relevant
// (text and --json), --min-relevance -1 shows every memory that matched
// at all, and --explain says why a memory surfaced.
func TestCLI_LongTerm_Relevance(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "store")
	r := runCLI(t, "", "import", "--memory", "long", conversation, "--store", store)
	require.Equal(t, exitOK, r.code, r.stderr)

	res := searchJSON(t, "--store", store, "-k", "3", "LH 2043")
	require.NotEmpty(t, res.Hits)
	assert.Empty(t, res.Reason)
	for _, h := range res.Hits {
		assert.Positive(t, h.Relevance, h.ID)
		assert.LessOrEqual(t, h.Relevance, float32(1), h.ID)
	}
	res = searchJSON(t, "--store", store, "--mode", "keyword", "zebra")
	assert.Empty(t, res.Hits)
	assert.Equal(t, "no memory is relevant", res.Reason)

	// A question about a place the conversation never mentions is not
	// answered by the Berlin flight it shares its other words with (the
	// README's example); --explain names what the namespace never
	// mentions.
	res = searchJSON(t, "--store", store, "When do I fly to Oslo?")
	assert.Empty(t, res.Hits)
	assert.Equal(t, "no memory is relevant", res.Reason)
	assert.NotEmpty(t, searchJSON(t, "--store", store, "When do I fly to Berlin?").Hits)
	r = runCLI(t, "", "search", "--store", store, "-k", "1", "--min-relevance", "-1", "--explain", "When do I fly to Oslo?")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "the namespace never mentions Oslo")

	all := searchJSON(t, "--store", store, "-k", "50", "--min-relevance", "-1", "what did we say about the weather")
	some := searchJSON(t, "--store", store, "-k", "50", "--min-relevance", "0.9", "what did we say about the weather")
	assert.Greater(t, len(all.Hits), len(some.Hits), "a higher minimum relevance keeps fewer memories")
	for _, h := range some.Hits {
		assert.GreaterOrEqual(t, h.Relevance, float32(0.9))
	}

	r = runCLI(t, "", "search", "--store", store, "-k", "1", "--explain", "LH 2043")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "why: found by keyword and vector")
	assert.Contains(t, r.stdout, "matched terms: ")
	assert.Regexp(t, `the namespace \(\d+ records\) holds \d+% of the query`, r.stdout)

	r = runCLI(t, "", "search", "--store", store, "--min-relevance", "2", "x")
	assert.Equal(t, exitUsage, r.code)

	budget := searchJSON(t, "--store", store, "-k", "10", "--min-relevance", "-1", "--max-tokens", "60", "flight hotel Berlin")
	require.NotEmpty(t, budget.Hits)
	assert.LessOrEqual(t, budget.Tokens, 60)
	r = runCLI(t, "", "search", "--store", store, "--max-tokens", "60", "flight hotel Berlin")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "of 60 tokens)")
	// A budget too small for any relevant memory says so (text and
	// --json), where before it said that no memory was relevant.
	res = searchJSON(t, "--store", store, "--max-tokens", "2", "flight hotel Berlin")
	assert.Empty(t, res.Hits)
	assert.Regexp(t, `^no relevant memory fits the token budget of 2: the smallest of the \d+ relevant memories takes \d+$`, res.Reason)
	r = runCLI(t, "", "search", "--store", store, "--max-tokens", "2", "flight hotel Berlin")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stderr, "no relevant memory fits the token budget of 2")
	assert.Contains(t, r.stderr, "a larger --max-tokens makes room")
	res = searchJSON(t, "--store", store, "--max-tokens", "2", "When do I fly to Oslo?")
	assert.Equal(t, "no memory is relevant", res.Reason, "nothing relevant, budget or not")
	// A namespace that holds nothing (a typo) says so.
	res = searchJSON(t, "--store", store, "--namespace", "defualt", "flight")
	assert.Equal(t, `the namespace holds no memories: "defualt"`, res.Reason)
	r = runCLI(t, "", "search", "--store", store, "--namespace", "defualt", "flight")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stderr, `namespace "defualt" holds no memories`)
}
