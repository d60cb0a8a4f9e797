package keyword_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentmem/agentmem/keyword"
)

// TestTerms: the distinct terms of groups, whole forms and parts, in the
// order they first occur.
func TestTerms(t *testing.T) {
	t.Parallel()
	groups := []keyword.QueryGroup{
		{Main: []string{"nw-20417", "nw20417"}, Parts: []string{"nw", "20417"}},
		{Main: []string{"20417"}},
		{Main: []string{"ticket"}},
	}
	assert.Equal(t, []string{"nw-20417", "nw20417", "nw", "20417", "ticket"}, keyword.Terms(groups))
	assert.Empty(t, keyword.Terms(nil))
}
