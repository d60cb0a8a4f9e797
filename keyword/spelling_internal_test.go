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
