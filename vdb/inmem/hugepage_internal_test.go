package inmem

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHugePagePolicy checks which arrays are advised for huge pages: the
// float32 rows a search streams (all of them without codes, those below
// codesMin rows with int8 codes, column codes or not).
func TestHugePagePolicy(t *testing.T) {
	plain, err := New(64)
	require.NoError(t, err)
	assert.True(t, plain.hugeFloats(0))
	assert.True(t, plain.hugeFloats(10*codesMinRows))

	codes, err := New(64, WithCodes(Int8))
	require.NoError(t, err)
	assert.True(t, codes.hugeFloats(0))
	assert.True(t, codes.hugeFloats(codesMinRows-1))
	assert.False(t, codes.hugeFloats(codesMinRows))

	cols, err := New(64, WithCodes(Int8), WithColumns())
	require.NoError(t, err)
	assert.True(t, cols.hugeFloats(0))
	assert.False(t, cols.hugeFloats(codesMinRows))

	always, err := New(64, WithCodes(Int8), WithCodesAlways())
	require.NoError(t, err)
	assert.False(t, always.hugeFloats(0))
}
