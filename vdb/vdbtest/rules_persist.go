package vdbtest

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/internal/testvec"
	"github.com/agentmem/agentmem/vdb"
)

func (s *suite) testSaveLoadRoundTrip(t *testing.T) {
	ctx := t.Context()
	const dim, n = 24, 300
	db := s.newDB(t, dim)
	path := filepath.Join(t.TempDir(), "db.vdb")
	if _, ok := db.(vdb.Persister); !ok {
		err := vdb.Save(ctx, db, path)
		assert.ErrorIs(t, err, errors.ErrUnsupported, "rule: vdb.Save of a backend without Persister fails with errors.ErrUnsupported")
		err = vdb.Load(ctx, db, path)
		assert.ErrorIs(t, err, errors.ErrUnsupported, "rule: vdb.Load into a backend without Persister fails with errors.ErrUnsupported")
		return
	}
	r := rand.New(rand.NewPCG(1, 2))
	vs := randVecs(r, n, dim)
	require.NoError(t, db.Add(ctx, testvec.IDs(5, n), vs))
	if !s.cfg.noDelete {
		_, err := db.Delete(ctx, 5, 100, 304)
		require.NoError(t, err)
	}
	require.NoError(t, vdb.Save(ctx, db, path))
	queries := append(randVecs(r, 10, dim), vs[10], vs[200])
	want := make([][]vdb.Result, len(queries))
	for i, q := range queries {
		var err error
		want[i], err = db.Search(ctx, q, 12)
		require.NoError(t, err)
	}

	// Load into a fresh database that already holds something: Load replaces.
	fresh := s.newDB(t, dim)
	require.NoError(t, fresh.Add(ctx, []int64{1_000_000}, randVecs(r, 1, dim)))
	require.NoError(t, vdb.Load(ctx, fresh, path), "rule: what vdb.Save wrote, vdb.Load reads")
	assert.Equal(t, db.Len(), fresh.Len(), "rule: a loaded database holds what was saved, and only that")
	for i, q := range queries {
		got, err := fresh.Search(ctx, q, 12)
		require.NoError(t, err)
		assert.Equal(t, want[i], got, "rule: a loaded database answers exactly as the saved one (query %d)", i)
	}
	if !s.cfg.noDelete {
		n, err := fresh.Delete(ctx, 1_000_000)
		require.NoError(t, err)
		assert.Equal(t, 0, n, "rule: Load replaces the database's contents")
	}
	// The loaded database is usable: adds and searches.
	require.NoError(t, fresh.Add(ctx, []int64{2_000_000}, vs[:1]))

	// An empty database round-trips too.
	emptyPath := filepath.Join(t.TempDir(), "empty.vdb")
	require.NoError(t, vdb.Save(ctx, s.newDB(t, dim), emptyPath))
	e := s.newDB(t, dim)
	require.NoError(t, vdb.Load(ctx, e, emptyPath))
	assert.Equal(t, 0, e.Len(), "rule: an empty database round-trips")

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	tryLoad := func(t *testing.T, b []byte, d int) error {
		t.Helper()
		p := filepath.Join(t.TempDir(), "bad.vdb")
		require.NoError(t, os.WriteFile(p, b, 0o600))
		target := s.newDB(t, d)
		require.NoError(t, target.Add(ctx, []int64{42}, randVecs(r, 1, d)))
		err := vdb.Load(ctx, target, p)
		if err != nil {
			assert.Equal(t, 1, target.Len(), "rule: a failed Load leaves the database unchanged")
		}
		return err
	}
	t.Run("Truncated", func(t *testing.T) {
		for _, cut := range []int{0, 3, 10, len(data) / 2, len(data) - 1} {
			err := tryLoad(t, data[:cut], dim)
			assert.ErrorIs(t, err, vdb.ErrCorrupt, "rule: loading a truncated stream (%d of %d bytes) fails with ErrCorrupt", cut, len(data))
		}
	})
	t.Run("FlippedByte", func(t *testing.T) {
		for _, at := range []int{len(data) / 3, len(data) / 2, len(data) - 1} {
			b := slices.Clone(data)
			b[at] ^= 0x10
			err := tryLoad(t, b, dim)
			assert.ErrorIs(t, err, vdb.ErrCorrupt, "rule: loading a stream with a flipped byte (at %d of %d) fails with ErrCorrupt", at, len(data))
		}
	})
	t.Run("OtherDim", func(t *testing.T) {
		err := tryLoad(t, data, dim+1)
		assert.ErrorIs(t, err, vdb.ErrDimension, "rule: loading a stream of another dimension fails with ErrDimension")
	})
	t.Run("NewerVersion", func(t *testing.T) {
		off := s.cfg.versionOffset
		require.Greater(t, len(data), off+4)
		b := slices.Clone(data)
		v := binary.LittleEndian.Uint32(b[off:])
		binary.LittleEndian.PutUint32(b[off:], v+1000)
		err := tryLoad(t, b, dim)
		assert.ErrorIs(t, err, vdb.ErrVersion, "rule: loading a stream from a newer format version fails with ErrVersion (checked before the checksum)")
	})
	t.Run("BadMagic", func(t *testing.T) {
		b := slices.Clone(data)
		b[0] ^= 0xff
		err := tryLoad(t, b, dim)
		assert.ErrorIs(t, err, vdb.ErrCorrupt, "rule: loading a stream with an unknown magic fails with ErrCorrupt (only a newer version is ErrVersion)")
		assert.NotErrorIs(t, err, vdb.ErrVersion, "rule: a stream with an unknown magic is damaged, not from a newer version")
	})
}
