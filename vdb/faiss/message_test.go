package faiss

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFaissMessage(t *testing.T) {
	for in, want := range map[string]string{
		`Error in std::unique_ptr<faiss::Index> faiss::{anonymous}::index_factory_sub(int, std::string, faiss::MetricType) at /build/faiss-1.7.3/faiss/index_factory.cpp:879: could not parse index string Flat,Flat`: "could not parse index string Flat,Flat",
		"Error in virtual void faiss::IndexIVF::add_with_ids(faiss::Index::idx_t, const float*, const idx_t*) at faiss/IndexIVF.cpp:123: Error: 'is_trained' failed":                                                  "Error: 'is_trained' failed",
		"out of memory": "out of memory",
		" plain text\n": "plain text",
	} {
		assert.Equal(t, want, faissMessage(in))
	}
}
