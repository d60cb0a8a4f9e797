package inmem_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/inmem"
	"github.com/agentmem/agentmem/vdb/vdbtest"
)

func TestConformance(t *testing.T) {
	vdbtest.Run(t, func(t *testing.T, dim int) vdb.VectorDatabase {
		db, err := inmem.New(dim)
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		return db
	})
}
