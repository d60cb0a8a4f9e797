package ranking

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/keyword"
)

func TestNewerFirst(t *testing.T) {
	tok, err := keyword.NewTokenizer()
	require.NoError(t, err)
	jan := time.Date(2026, 1, 12, 9, 0, 0, 0, time.UTC)
	may := time.Date(2026, 5, 2, 9, 0, 0, 0, time.UTC)
	terms := func(q string) map[string]bool {
		m := map[string]bool{}
		for _, t := range tok.Tokens(WithoutQuestionWords(q)) {
			m[t] = true
		}
		return m
	}
	manager := terms("Who is my manager?")
	tom := Statement{Source: "dana/user", From: jan, Score: 0.83, Text: "My manager is Tom."}
	ingrid := Statement{Source: "dana/user", From: may, Score: 0.78, Text: "My manager is Ingrid now."}
	for _, c := range []struct {
		name    string
		hits    []Statement
		order   []int
		earlier [][]int
	}{
		{"a later version first", []Statement{tom, ingrid}, []int{1, 0}, [][]int{nil, {0}}},
		{"already first", []Statement{ingrid, tom}, []int{0, 1}, nil},
		{"another speaker's", []Statement{tom, with(ingrid, func(s *Statement) { s.Source = "dana/assistant" })}, []int{0, 1}, nil},
		{"said before", []Statement{tom, with(ingrid, func(s *Statement) { s.From = jan.Add(-time.Hour) })}, []int{0, 1}, nil},
		{"said at the same moment", []Statement{tom, with(ingrid, func(s *Statement) { s.From = jan })}, []int{0, 1}, nil},
		{"scores under the ratio", []Statement{tom, with(ingrid, func(s *Statement) { s.Score = 0.6 })}, []int{0, 1}, nil},
		{"holds other words of the query", []Statement{tom, with(ingrid, func(s *Statement) { s.Text = "Ingrid is my new boss." })}, []int{0, 1}, nil},
		{"shares the query's words, little else", []Statement{tom, with(ingrid, func(s *Statement) {
			s.Text = "The offsite is in Lisbon: my manager is giving the opening talk on budgets, hiring and the roadmap."
		})}, []int{0, 1}, nil},
		{"too long to be one statement", []Statement{tom, with(ingrid, func(s *Statement) {
			s.Text = "My manager is Ingrid now." + strings.Repeat(" And so on.", 30)
		})}, []int{0, 1}, nil},
		{"the query quotes the earlier", []Statement{
			with(tom, func(s *Statement) { s.Text = "Is my manager?" }),
			with(ingrid, func(s *Statement) { s.Text = "Is my manager now?" }),
		}, []int{0, 1}, nil},
		{"a correction that shares little else", []Statement{tom, with(ingrid, func(s *Statement) {
			s.Text = "I no longer report to Tom since the reorganisation in April; my manager is Ingrid."
		})}, []int{1, 0}, [][]int{nil, {0}}},
		{"a correction that holds some of the earlier's words of the query", []Statement{
			with(tom, func(s *Statement) { s.Text = "My manager is Tom, in the Lisbon office." }),
			with(ingrid, func(s *Statement) { s.Text = "The manager role went to Ingrid instead." }),
		}, []int{1, 0}, [][]int{nil, {0}}},
		{"a correction that holds a word of the query the earlier does not", []Statement{
			with(tom, func(s *Statement) { s.Text = "Tom runs the Lisbon office." }),
			with(ingrid, func(s *Statement) { s.Text = "My manager moved to Porto instead." }),
		}, []int{0, 1}, nil},
		{"a correction under the ratio", []Statement{tom, with(ingrid, func(s *Statement) {
			s.Text, s.Score = "I no longer report to Tom; my manager is Ingrid.", 0.6
		})}, []int{0, 1}, nil},
		{"a chain, newest first", []Statement{
			tom,
			with(ingrid, func(s *Statement) { s.From, s.Score = jan.AddDate(0, 1, 0), 0.8 }),
			with(ingrid, func(s *Statement) { s.Text, s.Score = "My manager is Omar now.", 0.7 }),
		}, []int{2, 1, 0}, [][]int{nil, {0}, {1, 0}}},
		{"no passing a hit that scores far more", []Statement{
			{Source: "dana/user", From: jan, Score: 1, Text: "My manager Tom is great."},
			tom,
			with(ingrid, func(s *Statement) { s.Score = 0.7 }),
		}, []int{0, 2, 1}, [][]int{nil, nil, {1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			order, earlier := NewerFirst(tok, manager, c.hits)
			assert.Equal(t, c.order, order)
			assert.Equal(t, c.earlier, earlier)
		})
	}
}

func with(s Statement, change func(*Statement)) Statement {
	change(&s)
	return s
}

// TestNewerFirst_FirstDoNotDependOnK: ordering the hits that score at
// least NewerScoreRatio of the k-th gives the same first k as ordering
// them all.
func TestNewerFirst_FirstDoNotDependOnK(t *testing.T) {
	tok, err := keyword.NewTokenizer()
	require.NoError(t, err)
	words := strings.Fields("plan budget trip hotel flight manager team the is my a")
	qterms := map[string]bool{"plan": true, "trip": true, "manager": true}
	rng := rand.New(rand.NewPCG(3, 5))
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	moved := 0
	for run := range 200 {
		hits := make([]Statement, 40)
		for i := range hits {
			var b strings.Builder
			for range 2 + rng.IntN(4) {
				b.WriteString(words[rng.IntN(len(words))] + " ")
			}
			hits[i] = Statement{Source: fmt.Sprint(rng.IntN(2)), From: at.Add(time.Duration(rng.IntN(50)) * time.Hour), Score: rng.Float64(), Text: b.String()}
		}
		slices.SortFunc(hits, func(a, b Statement) int { return cmp.Compare(b.Score, a.Score) })
		all, earlier := NewerFirst(tok, qterms, hits)
		if earlier != nil {
			moved++
		}
		for _, k := range []int{1, 3, 5, 10} {
			n := k
			for n < len(hits) && hits[n].Score >= NewerScoreRatio*hits[k-1].Score {
				n++
			}
			band, _ := NewerFirst(tok, qterms, hits[:n])
			require.Equal(t, all[:k], band[:k], "run %d, k %d", run, k)
		}
	}
	assert.Greater(t, moved, 100, "runs in which a hit moved")
}

func TestCorrects(t *testing.T) {
	t.Parallel()

	for text, want := range map[string]bool{
		"Change of plans: we're going to Japan in May instead.": true,
		"I don't eat meat anymore.":                             true,
		"We no longer use MySQL.":                               true,
		"The standup is cancelled; from now on it's async.":     true,
		"The project was renamed to Mosaic.":                    true,
		"计划有变，出差改到十二月中旬了。":                                      true,
		"My manager is Tom.":                                    false,
		"Insteadly is not a word, and the moved tooth hurts.":   false,
		"I moved the couch.":                                    false,
	} {
		assert.Equal(t, want, corrects(text), text)
	}
}
