package faiss_test

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/faiss"
)

// TestReadHeaderErrors holds in every build: the header is pure Go. Only a
// newer format version is ErrVersion; any other bad start is ErrCorrupt.
func TestReadHeaderErrors(t *testing.T) {
	withVersion := func(v uint32) *bytes.Reader {
		return bytes.NewReader(binary.LittleEndian.AppendUint32([]byte("AMFAISS\x00"), v))
	}
	for _, tc := range []struct {
		name   string
		stream *bytes.Reader
		want   error
		text   string
	}{
		{"BadMagic", bytes.NewReader([]byte("not a faiss stream at all")), vdb.ErrCorrupt, `faiss: import: not a Faiss index stream of agentmem (magic "not a fa")`},
		{"Short", bytes.NewReader([]byte("AMF")), vdb.ErrCorrupt, "faiss: import: stream ends in the magic"},
		{"NewerVersion", withVersion(7), vdb.ErrVersion, "faiss: import: format version 7, this build reads 1 (upgrade agentmem)"},
		{"VersionZero", withVersion(0), vdb.ErrCorrupt, "faiss: import: format version 0 was never written"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := faiss.ReadHeader(tc.stream)
			require.ErrorIs(t, err, tc.want)
			assert.True(t, strings.HasPrefix(err.Error(), tc.text), "got %q", err)
			if tc.want == vdb.ErrCorrupt {
				assert.NotErrorIs(t, err, vdb.ErrVersion)
			}
		})
	}
}
