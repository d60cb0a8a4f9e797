package pgvector_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/vdb/pgvector"
)

// TestOpenHidesPassword: no error of Open holds the DSN's password, also
// when an unescaped "@" in it makes the driver take its end for the host.
func TestOpenHidesPassword(t *testing.T) {
	for _, dsn := range []string{
		"postgres://agent:xy@hunter22@127.0.0.1:1/memory?connect_timeout=2",
		"postgres://agent:hunter22@127.0.0.1:badport/memory",
		"host=127.0.0.1 port=1 user=agent password=hunter22 dbname=memory connect_timeout=2",
	} {
		_, err := pgvector.Open(t.Context(), dsn, 8)
		require.Error(t, err, dsn)
		assert.NotContains(t, err.Error(), "hunter22", dsn)
	}
}
