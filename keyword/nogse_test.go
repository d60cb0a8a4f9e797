//go:build nogse

package keyword_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/keyword"
)

func TestNoGSE(t *testing.T) {
	_, err := keyword.NewTokenizer(keyword.WithCJK(keyword.Segmenter))
	require.ErrorIs(t, err, errors.ErrUnsupported)
	assert.Contains(t, err.Error(), "without -tags nogse")
	assert.NoError(t, keyword.Preload(), "nothing to load")
}
