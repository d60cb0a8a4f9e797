package inmem

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/vdb"
)

// TestImport_CountTheStreamDoesNotBack: a header whose checksum holds but
// whose count claims 2³⁶ vectors, followed by a few bytes, is a truncated
// stream (vdb.ErrCorrupt), read without allocating what the count claims:
// before, Import made the claimed slices first and the process died out
// of memory.
func TestImport_CountTheStreamDoesNotBack(t *testing.T) {
	const dim = 4
	var h [headerSize]byte
	copy(h[:8], magic)
	binary.LittleEndian.PutUint32(h[8:], version)
	binary.LittleEndian.PutUint32(h[12:], dim)
	binary.LittleEndian.PutUint64(h[16:], 1<<36)
	binary.LittleEndian.PutUint32(h[24:], crc32.Checksum(h[:24], castagnoli))
	stream := append(h[:], make([]byte, 64)...)
	db, err := New(dim)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	err = db.Import(t.Context(), bytes.NewReader(stream))
	require.ErrorIs(t, err, vdb.ErrCorrupt)
	assert.Contains(t, err.Error(), "truncated")
	assert.Zero(t, db.Len(), "nothing imported")
}
