package longterm

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed/hash"
)

// encodedVectors encodes one record with vecs and decodes it back.
func encodedVectors(t *testing.T, vecs [][]float32) (payload []byte, got *addRecord) {
	t.Helper()
	rec := &Record{ID: "r1", Namespace: "ns", Speaker: "Ann", Text: "hello world", Tags: []string{"a"},
		Time: time.Unix(1700000000, 5).UTC()}
	children := make([]logChild, len(vecs))
	for i := range children {
		children[i] = logChild{id: int64(10 + i), start: 0, end: 5, text: "hello"}
	}
	dim := len(vecs[0])
	payload = encodeAdd(nil, rec, children, dim, vecs)
	typ, body, err := decodeRecord(payload)
	require.NoError(t, err)
	require.True(t, isAdd(typ))
	got, err = decodeAdd(typ, body)
	require.NoError(t, err)
	assert.Equal(t, *rec, got.rec)
	assert.Equal(t, children, got.children)
	require.Equal(t, dim, got.dim)
	require.Len(t, got.vecs, len(vecs)*dim)
	for i, v := range vecs {
		for j, x := range v {
			require.Equal(t, math.Float32bits(x), math.Float32bits(got.vecs[i*dim+j]), "vector %d entry %d", i, j)
		}
	}
	return payload, got
}

func TestEncodeAddSparseVectorsRoundTrip(t *testing.T) {
	emb, err := hash.New(hash.DefaultDim)
	require.NoError(t, err)
	vecs, err := emb.Embed(t.Context(), []string{"the flight LH 401 leaves at 7", "花生过敏", "x"})
	require.NoError(t, err)
	payload, _ := encodedVectors(t, vecs)
	assert.Equal(t, recAddSparse, payload[0], "the hash embedder's vectors are mostly zero")
	t.Logf("3 hash:512 vectors: %d-byte payload (dense vectors alone: %d bytes)", len(payload), 3*hash.DefaultDim*4)
	// The vectors' part is a small fraction of the dense 3×2 KB.
	assert.Less(t, len(payload), 3*hash.DefaultDim*4/4, "sparse payload of %d bytes", len(payload))
}

func TestEncodeAddKeepsSignedZeroAndEdges(t *testing.T) {
	v := make([]float32, 300)
	v[0] = float32(math.Copysign(0, -1)) // -0 is not +0: kept
	v[1] = math.SmallestNonzeroFloat32
	v[128] = -1.5
	v[299] = math.MaxFloat32
	w := make([]float32, 300)
	w[299] = 1
	payload, got := encodedVectors(t, [][]float32{v, w})
	assert.Equal(t, recAddSparse, payload[0])
	assert.True(t, math.Signbit(float64(got.vecs[0])))
}

func TestEncodeAddDenseVectorsStayInTheOldFormat(t *testing.T) {
	v := make([]float32, 64)
	for i := range v {
		v[i] = float32(i) - 31.5 // no zero
	}
	payload, _ := encodedVectors(t, [][]float32{v})
	require.Equal(t, recAdd, payload[0])
	// recAdd: the vectors are the payload's last dim*4 bytes, float32 LE.
	tail := payload[len(payload)-len(v)*4:]
	for i, x := range v {
		assert.Equal(t, math.Float32bits(x), binary.LittleEndian.Uint32(tail[4*i:]))
	}
}

// A record whose first vector is sparse and the rest dense enough to make
// more than half of all entries non-zero is written dense, like one that
// is dense from the start; and the code AddBatch encodes ahead (appendAdd)
// makes the same payload as encodeAdd.
func TestEncodeAddTurnsDenseAfterASparseVector(t *testing.T) {
	sparse := make([]float32, 64)
	sparse[7] = 0.5
	dense := make([]float32, 64)
	for i := range dense {
		dense[i] = float32(i + 1)
	}
	for name, vecs := range map[string][][]float32{"dense": {sparse, dense}, "sparse": {sparse, sparse}} {
		t.Run(name, func(t *testing.T) {
			payload, _ := encodedVectors(t, vecs)
			want := recAddSparse
			if name == "dense" {
				want = recAdd
			}
			assert.Equal(t, want, payload[0])
			rec := &Record{ID: "r1", Namespace: "ns", Speaker: "Ann", Text: "hello world", Tags: []string{"a"},
				Time: time.Unix(1700000000, 5).UTC()}
			children := []logChild{{id: 10, start: 0, end: 5, text: "hello"}, {id: 11, start: 0, end: 5, text: "hello"}}
			code := encodeVectors([]byte("unrelated prefix"), 64, vecs)
			code.b = code.b[len("unrelated prefix"):]
			assert.Equal(t, payload, appendAdd(nil, rec, children, code))
		})
	}
}

func TestDecodeAddSparseRejectsDamage(t *testing.T) {
	v := make([]float32, 16)
	v[3], v[9] = 0.5, -0.25
	rec := &Record{ID: "r", Namespace: "ns", Text: "hello"}
	children := []logChild{{id: 1, start: 0, end: 5, text: "hello"}}
	payload := encodeAdd(nil, rec, children, 16, [][]float32{v})
	require.Equal(t, recAddSparse, payload[0])
	// The vectors are the tail: count 2, gap 3, 4 bytes, gap 5, 4 bytes.
	vecAt := len(payload) - 11
	require.Equal(t, byte(2), payload[vecAt])
	cases := map[string][]byte{
		"truncated":      payload[:len(payload)-1],
		"trailing bytes": append(append([]byte(nil), payload...), 0),
		"index past dim": func() []byte {
			p := append([]byte(nil), payload...)
			p[vecAt+6] = 12 // second entry at 3+1+12 = 16
			return p
		}(),
		"count past the record": func() []byte {
			p := append([]byte(nil), payload...)
			p[vecAt] = 100
			return p
		}(),
	}
	for name, p := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := decodeAdd(p[0], p[1:])
			require.ErrorIs(t, err, ErrCorrupt)
		})
	}
}

// A store written with sparse records replays them from its log alone
// (no snapshot) into the same search results.
func TestSparseRecordsReplayFromTheLog(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	emb, err := hash.New(hash.DefaultDim)
	require.NoError(t, err)
	m, err := Open(ctx, dir, emb)
	require.NoError(t, err)
	texts := []string{"my flight LH 401 leaves Munich at 7am", "I am allergic to peanuts", "北京明天下雨", "the staging password is hunter2"}
	for _, text := range texts {
		_, err := m.Add(ctx, Record{Text: text})
		require.NoError(t, err)
	}
	before, err := m.Query(ctx, Query{Text: "when does my flight leave", K: 4})
	require.NoError(t, err)
	require.NotEmpty(t, before)
	crash(m)

	b, err := os.ReadFile(filepath.Join(dir, logFileName))
	require.NoError(t, err)
	_, frames := splitLog(t, b)
	require.Len(t, frames, len(texts))
	for _, f := range frames {
		assert.Equal(t, recAddSparse, f[frameHeader], "record type")
	}

	m, err = Open(ctx, dir, emb)
	require.NoError(t, err)
	defer m.Close()
	after, err := m.Query(ctx, Query{Text: "when does my flight leave", K: 4})
	require.NoError(t, err)
	assert.Equal(t, before, after)
}
