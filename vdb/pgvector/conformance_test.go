package pgvector_test

import (
	"testing"

	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/vdbtest"
)

func TestConformanceExact(t *testing.T) {
	needPG(t)
	vdbtest.Run(t, func(t *testing.T, dim int) vdb.VectorDatabase {
		return openSpec(t, dim, uniqueNS(), "exact", "1")
	})
}

// TestConformanceHNSW runs the suite on the HNSW index with pgvector's
// default build and search widths. The suite's tables are small (≤ 600
// rows), where the planner may prefer a scan; TestHNSWIndexIsUsed checks
// that larger tables go through the index.
func TestConformanceHNSW(t *testing.T) {
	needPG(t)
	vdbtest.Run(t, func(t *testing.T, dim int) vdb.VectorDatabase {
		return openSpec(t, dim, uniqueNS())
	}, vdbtest.Approximate(0.9))
}
