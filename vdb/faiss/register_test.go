package faiss_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/internal/errs"
	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/faiss"
)

func TestRegistered(t *testing.T) {
	assert.Contains(t, vdb.Backends(), "faiss")
}

func TestParseArg(t *testing.T) {
	for _, arg := range []string{"", "IVF1024,Flat", "HNSW32,Flat?efSearch=64", "IVF64,Flat?nprobe=8&threads=1&trainSize=2000", "?threads=1", "Flat?EFSEARCH=3"} {
		_, err := faiss.ParseArg(arg)
		assert.NoError(t, err, arg)
	}
	for _, arg := range []string{"Flat?nprobe", "Flat?nprobe=-1", "Flat?nprobe=x", "Flat?probes=4", "Flat?nprobe=4&"} {
		opts, err := faiss.ParseArg(arg)
		require.Error(t, err, arg)
		assert.Nil(t, opts, arg)
		assert.ErrorIs(t, err, errs.InvalidArgument, arg)
	}
	_, err := faiss.ParseArg("Flat?probes=4")
	assert.EqualError(t, err, `faiss: unknown option "probes" in "Flat?probes=4" (known: nprobe, efSearch, threads, trainSize): invalid argument`)
}
