package embedtest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCountingCountsTexts(t *testing.T) {
	c := CountingHash(t, 32)
	assert.Equal(t, "hash:32", c.Name())
	vs, err := c.Embed(t.Context(), []string{"one", "two"})
	require.NoError(t, err)
	assert.Len(t, vs, 2)
	_, err = c.Embed(t.Context(), []string{"three"})
	require.NoError(t, err)
	assert.Equal(t, int64(3), c.Texts())
}
