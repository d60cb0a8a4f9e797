package keyword

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAmerican(t *testing.T) {
	t.Parallel()

	for in, want := range map[string]string{
		"colour": "color", "colours": "colors", "colourful": "colorful", "favourite": "favorite",
		"neighbourhood": "neighborhood", "behavioural": "behavioral", "labourer": "laborer",
		"organise": "organize", "organised": "organized", "organisation": "organization",
		"realising": "realizing", "visualisations": "visualizations", "prioritise": "prioritize",
		"centre": "center", "grey": "gray", "mum": "mom", "programme": "program", "analysed": "analyzed",
		// As they are: American already, or no British spelling of the rule.
		"color": "color", "organize": "organize", "tour": "tour", "tourism": "tourism",
		"exercise": "exercise", "advise": "advise", "surprised": "surprised", "promise": "promise",
		"organism": "organism", "criticism": "criticism", "specialist": "specialist", "realistic": "realistic",
		"analyses": "analyses", "our": "our", "hour": "hour", "yours": "yours",
	} {
		assert.Equal(t, want, american(in), in)
	}
}

// TestWordTables: stemWord reads the tables only for words of three
// letters or more, a–z, after its stem cache: so must their every key and
// word be.
func TestWordTables(t *testing.T) {
	t.Parallel()

	plain := func(w string) bool {
		for i := 0; i < len(w); i++ {
			if w[i] < 'a' || w[i] > 'z' {
				return false
			}
		}
		return len(w) >= 3
	}
	for _, table := range []map[string]string{irregular, britishWords, ourStems} {
		for k, v := range table {
			assert.True(t, plain(k) && plain(v), "%s → %s", k, v)
		}
	}
	for s := range izeStems {
		assert.True(t, plain(s), s)
	}
}
