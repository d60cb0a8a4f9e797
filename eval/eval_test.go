package eval_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/eval"
	"github.com/agentmem/agentmem/internal/errs"
	"github.com/agentmem/agentmem/memory/longterm"
	_ "github.com/agentmem/agentmem/vdb/inmem" // registers the default backend
)

func writeSet(t *testing.T, turns, questions string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "turns.jsonl"), []byte(turns), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "questions.jsonl"), []byte(questions), 0o644))
	return dir
}

const smallTurns = `{"conv":"a","session":1,"date":"2024-03-01","id":"1","speaker":"Ann","text":"My dentist appointment is on Friday at nine."}
{"conv":"a","session":1,"date":"2024-03-01","id":"2","speaker":"Bob","text":"Good luck with the dentist."}
{"conv":"a","session":2,"date":"2024-03-05","id":"3","speaker":"Ann","text":"Where should we eat tonight?"}
{"conv":"a","session":2,"date":"2024-03-05","id":"4","speaker":"Bob","text":"The dentist said my teeth are fine."}
{"conv":"b","session":1,"date":"1:56 pm on 8 May, 2023","id":"1","speaker":"Cy","text":"The parking code is 4471."}
`

func TestRun_AskedAtSeesOnlyEarlierTurns(t *testing.T) {
	// q1 is asked at turn 3: turn 4 mentions the dentist too but is not in
	// memory yet, so BM25 and every mode can return only turns 1 and 2.
	dir := writeSet(t, smallTurns,
		`{"qid":"q1","conv":"a","question":"When is the dentist appointment?","evidence":["1"],"category":1,"asked_at":"3"}
{"qid":"q2","conv":"b","question":"What is the parking code?","evidence":["1"],"category":"codes"}
{"qid":"q3","conv":"b","question":"no evidence","evidence":[],"category":"codes"}
`)
	d, err := eval.Load(dir)
	require.NoError(t, err)
	emb, err := hash.New(64)
	require.NoError(t, err)
	rep, err := eval.Run(t.Context(), d, eval.Config{Embedder: emb, PerQuestion: true})
	require.NoError(t, err)
	assert.Equal(t, 2, rep.Questions)
	assert.Equal(t, 1, rep.Probes, "a question without evidence is a probe: the right answer is nothing")
	assert.Equal(t, 1, rep.AskedAt)
	require.Len(t, rep.Modes, 4)
	assert.Equal(t, eval.BM25Mode, rep.Modes[3].Mode)
	for _, q := range rep.PerQuestion {
		for mode, top := range q.Top {
			if q.QID == "q1" {
				assert.NotContains(t, top, "3", mode)
				assert.NotContains(t, top, "4", mode)
				assert.Contains(t, top, "1", mode)
			}
		}
	}
	// Both questions are answerable lexically: every mode finds them.
	for _, m := range rep.Modes {
		assert.InDelta(t, 1.0, m.Overall.Recall[10], 1e-9, m.Mode)
	}
	assert.InDelta(t, 1.0, rep.Ceiling[1], 1e-9)
	require.Len(t, rep.PerQuestion, 3, "probes are reported with their questions")
	var out bytes.Buffer
	require.NoError(t, eval.Print(&out, rep))
	for _, want := range []string{"hybrid", "bm25", "recall ceiling", "codes", "asked_at"} {
		assert.Contains(t, out.String(), want)
	}
}

// A turn that shares a picture is found by what the picture shows: the
// caption is remembered with the turn, by every mode and by the reference
// BM25 alike, unless NoCaptions leaves it out.
func TestRun_ImageCaptionIsRemembered(t *testing.T) {
	dir := writeSet(t, `{"conv":"a","session":1,"date":"2023-05-08","id":"1","speaker":"Mel","text":"Look what I finished last weekend!","image_caption":"a photo of a painting of a sunset over a lake"}
{"conv":"a","session":1,"date":"2023-05-08","id":"2","speaker":"Cal","text":"Wow, that is beautiful."}
{"conv":"a","session":1,"date":"2023-05-08","id":"3","speaker":"Mel","text":"Thanks! We went camping by the lake in June.","image_caption":"  "}
`, `{"qid":"q1","conv":"a","question":"Did Mel paint a sunset?","evidence":["1"],"category":1}
`)
	d, err := eval.Load(dir)
	require.NoError(t, err)
	assert.Equal(t, "Look what I finished last weekend! [image: a photo of a painting of a sunset over a lake]", d.Turns[0].Content())
	assert.Equal(t, d.Turns[2].Text, d.Turns[2].Content(), "a blank caption adds nothing")
	emb, err := hash.New(64)
	require.NoError(t, err)

	rep, err := eval.Run(t.Context(), d, eval.Config{Embedder: emb})
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Captions)
	for _, m := range rep.Modes {
		assert.InDelta(t, 1.0, m.Overall.Recall[1], 1e-9, m.Mode)
	}
	var out bytes.Buffer
	require.NoError(t, eval.Print(&out, rep))
	assert.Contains(t, out.String(), "image caption (1 turns)")

	rep, err = eval.Run(t.Context(), d, eval.Config{Embedder: emb, NoCaptions: true, Modes: []longterm.Mode{longterm.KeywordOnly}})
	require.NoError(t, err)
	assert.Zero(t, rep.Captions)
	for _, m := range rep.Modes {
		assert.Zero(t, m.Overall.Recall[1], "without its caption the turn shares no word with the question: %s", m.Mode)
	}
}

func TestLoad_BadData(t *testing.T) {
	for name, c := range map[string][2]string{
		"unknown evidence": {smallTurns, `{"qid":"q","conv":"a","question":"x","evidence":["9"]}`},
		"unknown conv":     {smallTurns, `{"qid":"q","conv":"z","question":"x","evidence":["1"]}`},
		"unknown asked_at": {smallTurns, `{"qid":"q","conv":"a","question":"x","evidence":["1"],"asked_at":"9"}`},
		"evidence after":   {smallTurns, `{"qid":"q","conv":"a","question":"x","evidence":["3"],"asked_at":"2"}`},
		"duplicate id":     {smallTurns + `{"conv":"a","id":"1","text":"again"}`, `{"qid":"q","conv":"a","question":"x","evidence":["1"]}`},
		"missing id":       {`{"conv":"a","text":"no id"}`, ``},
	} {
		_, err := eval.Load(writeSet(t, c[0], c[1]))
		assert.ErrorIs(t, err, errs.InvalidArgument, name)
	}
	_, err := eval.Load(writeSet(t, smallTurns, "{broken\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "questions.jsonl:1")
}

func TestParseDate(t *testing.T) {
	for in, want := range map[string]string{
		"2025-12-19":                "2025-12-19T00:00:00Z",
		"2025-12-15 (Monday)":       "2025-12-15T00:00:00Z",
		"1:56 pm on 8 May, 2023":    "2023-05-08T13:56:00Z",
		"10:02 am on 3 March, 2024": "2024-03-03T10:02:00Z",
		"2024-03-03T10:02:00Z":      "2024-03-03T10:02:00Z",
	} {
		got, err := eval.ParseDate(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got.Format("2006-01-02T15:04:05Z07:00"), in)
	}
	_, err := eval.ParseDate("the day after the party")
	assert.ErrorIs(t, err, errs.InvalidArgument)
}

func TestNormalizeEvidenceAndCategory(t *testing.T) {
	assert.Equal(t, []string{"D1:3", "D8:6", "D9:17"}, eval.NormalizeEvidence([]string{" D1:3 ", "D8:6; D9:17", "D1:3", ""}))
	assert.Empty(t, eval.NormalizeEvidence([]string{" ", ";"}))
	for raw, want := range map[string]string{`2`: "2", `"temporal"`: "temporal", ``: "-", `null`: "-", `""`: "-"} {
		assert.Equal(t, want, eval.CategoryLabel([]byte(raw)), raw)
	}
}

// The bundled development set: hybrid must beat each single path and the
// BM25 floor of the same run.
func TestRun_BundledSet(t *testing.T) {
	d, err := eval.Load("../testdata/eval")
	require.NoError(t, err)
	emb, err := hash.New(512)
	require.NoError(t, err)
	modes := []longterm.Mode{longterm.Hybrid, longterm.VectorOnly, longterm.KeywordOnly}
	// The ranking: every hit that matched, hybrid first.
	all, err := eval.Run(t.Context(), d, eval.Config{Embedder: emb, Modes: modes, MinRelevance: -1})
	require.NoError(t, err)
	var sb strings.Builder
	require.NoError(t, eval.Print(&sb, all))
	t.Log("\n" + sb.String())
	h := all.Modes[0].Overall.Recall[10]
	for _, m := range all.Modes[1:] {
		assert.GreaterOrEqual(t, h, m.Overall.Recall[10], "hybrid recall@10 vs %s", m.Mode)
	}
	// The default minimum relevance keeps 95% of it, and asked in another
	// conversation (eval.CrossProbes), hybrid and keyword questions
	// surface a hit at most a fifth of the time (vector: a cosine says
	// little on its own about whether a conversation holds the answer).
	def, err := eval.Run(t.Context(), eval.CrossProbes(d), eval.Config{Embedder: emb, Modes: modes})
	require.NoError(t, err)
	require.Equal(t, def.Questions, def.Probes)
	for i, m := range def.Modes {
		assert.GreaterOrEqual(t, m.Overall.Recall[10], 0.95*all.Modes[i].Overall.Recall[10], "%s recall@10 with the default minimum relevance", m.Mode)
		if m.Mode != "vector" && m.Mode != eval.BM25Mode {
			assert.LessOrEqual(t, m.FalseSurface, 0.2, "%s: probes that surfaced a hit", m.Mode)
		}
	}
}

// CrossProbes asks every question again in the next conversation, at the
// same share of it, with no evidence.
func TestCrossProbes(t *testing.T) {
	d, err := eval.Load(writeSet(t, smallTurns,
		`{"qid":"q1","conv":"a","question":"When is the dentist appointment?","evidence":["1"],"asked_at":"3"}
{"qid":"q2","conv":"b","question":"What is the parking code?","evidence":["1"]}
`))
	require.NoError(t, err)
	p := eval.CrossProbes(d)
	require.Len(t, p.Questions, 4)
	assert.Equal(t, d.Questions, p.Questions[:2], "the questions first, as they were")
	q1, q2 := p.Questions[2], p.Questions[3]
	assert.Equal(t, "probe:q1@b", q1.QID)
	assert.Equal(t, "b", q1.Conv)
	assert.Empty(t, q1.AskedAt, "asked at half of a (turn 3 of 4); b has one turn, and a probe is asked after at least one: after the whole of b")
	assert.Empty(t, q1.Evidence)
	assert.JSONEq(t, `"probe"`, string(q1.Category))
	assert.Equal(t, "probe:q2@a", q2.QID)
	assert.Equal(t, "a", q2.Conv)
	assert.Empty(t, q2.AskedAt, "q2 is asked after the whole of b: its probe after the whole of a")
	assert.Len(t, eval.CrossProbes(&eval.Dataset{Turns: d.Turns[:4], Questions: d.Questions[:1]}).Questions, 1, "one conversation: no probes")
}

// The MemoryBank dev set (testdata/memorybank, English, and its Chinese
// originals in zh/): every question is asked at its own turn, after the
// history, and hybrid stays at or above the BM25 floor of the same run.
func TestRun_MemoryBank(t *testing.T) {
	for _, c := range []struct {
		dir, tokenizer string
		questions      int
	}{
		{"../testdata/memorybank", "word", 99},
		{"../testdata/memorybank/zh", "bigram", 100},
	} {
		t.Run(filepath.Base(c.dir), func(t *testing.T) {
			d, err := eval.Load(c.dir)
			require.NoError(t, err)
			assert.Len(t, d.Turns, 1232)
			assert.Len(t, d.Questions, 100)
			emb, err := hash.New(512)
			require.NoError(t, err)
			rep, err := eval.Run(t.Context(), d, eval.Config{Embedder: emb, Modes: []longterm.Mode{longterm.Hybrid}, BM25Tokenizer: c.tokenizer, Sweep: true})
			require.NoError(t, err)
			// The default minimum relevance keeps 95% of what hybrid finds
			// (the sweep's first point keeps every hit).
			assert.GreaterOrEqual(t, rep.Modes[0].Overall.Recall[10], 0.95*rep.Modes[0].Sweep[0].Recall[10], "recall@10 with the default minimum relevance")
			assert.Equal(t, 15, rep.Conversations)
			assert.Equal(t, c.questions, rep.Questions, "questions with evidence")
			assert.Equal(t, 100, rep.AskedAt, "every question asked at its own turn")
			require.Len(t, rep.Modes, 2)
			hybrid, bm25 := rep.Modes[0], rep.Modes[1]
			require.Equal(t, eval.BM25Mode, bm25.Mode)
			for _, k := range []int{1, 5, 10} {
				assert.GreaterOrEqual(t, hybrid.Overall.Recall[k], bm25.Overall.Recall[k], "hybrid recall@%d vs BM25", k)
			}
		})
	}
}

// A probe (a question without evidence: the right answer is nothing) that
// shares a word with a stored turn surfaces a hit in BM25, and the sweep
// reports recall and the false-surface rate from "everything" (threshold
// 0) to "nothing" (relevance 1).
func TestRun_ProbesAndSweep(t *testing.T) {
	dir := writeSet(t, smallTurns,
		`{"qid":"q1","conv":"a","question":"When is the dentist appointment?","evidence":["1"]}
{"qid":"p1","conv":"a","question":"Where do we eat the parking dinner?","evidence":[]}
{"qid":"p2","conv":"b","question":"Which dentist did Ann see?","evidence":[]}
`)
	d, err := eval.Load(dir)
	require.NoError(t, err)
	emb, err := hash.New(64)
	require.NoError(t, err)
	rep, err := eval.Run(t.Context(), d, eval.Config{Embedder: emb, Sweep: true, Samples: true})
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Questions)
	assert.Equal(t, 2, rep.Probes)
	bm25 := rep.Modes[len(rep.Modes)-1]
	require.Equal(t, eval.BM25Mode, bm25.Mode)
	assert.InDelta(t, 0.5, bm25.FalseSurface, 1e-9, "p1 shares 'eat' with turn 3; p2 shares nothing with conv b")
	for _, m := range rep.Modes {
		require.NotEmpty(t, m.Sweep, m.Mode)
		first, last := m.Sweep[0], m.Sweep[len(m.Sweep)-1]
		assert.Zero(t, first.Threshold, m.Mode)
		assert.InDelta(t, 1.0, first.Recall[10], 1e-9, "%s: at threshold 0 every hit is kept", m.Mode)
		assert.GreaterOrEqual(t, first.FalseSurface, m.FalseSurface, m.Mode)
		for _, p := range m.Sweep[1:] {
			assert.LessOrEqual(t, p.FalseSurface, first.FalseSurface, "%s: a higher threshold surfaces no more", m.Mode)
		}
		if m.Mode != eval.BM25Mode {
			assert.Zero(t, last.FalseSurface, m.Mode)
		}
	}
	require.NotEmpty(t, rep.Samples)
	evidence := 0
	for _, s := range rep.Samples {
		if s.Evidence {
			evidence++
			assert.False(t, s.Probe)
		}
	}
	assert.Positive(t, evidence)
}
