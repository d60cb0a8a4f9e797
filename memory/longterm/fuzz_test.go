package longterm

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/internal/embedtest"
)

// fuzzStore makes the store the log fuzz targets damage: six records, r2
// then forgotten, no snapshot (as a killed writer leaves it).
func fuzzStore(f *testing.F) (string, *embedtest.Counting) {
	dir := f.TempDir()
	emb := newCounting(f, 16)
	m, err := Open(f.Context(), dir, emb)
	require.NoError(f, err)
	for i := range 6 {
		_, err := m.Add(f.Context(), Record{ID: fmt.Sprint("r", i), Text: fmt.Sprintf("record %d. code X-%d", i, i), Tags: []string{"t"}})
		require.NoError(f, err)
	}
	require.NoError(f, m.Forget(f.Context(), "r2"))
	crash(m)
	return dir, emb
}

// FuzzOpenDamagedLog cuts a valid log at a random byte and flips another:
// Open must either succeed with a prefix of the records (a torn tail
// repaired) or fail with ErrCorrupt, and never panic.
func FuzzOpenDamagedLog(f *testing.F) {
	dir, emb := fuzzStore(f)
	valid := mustRead(f, logPath(dir))

	f.Add(uint32(len(valid)), uint32(0), byte(0))
	f.Add(uint32(len(valid)-3), uint32(0), byte(0))
	f.Add(uint32(len(valid)), uint32(40), byte(1))
	f.Fuzz(func(t *testing.T, cut, at uint32, flip byte) {
		data := append([]byte(nil), valid[:int(cut)%(len(valid)+1)]...)
		if len(data) > 0 {
			data[int(at)%len(data)] ^= flip
		}
		d := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(d, manifestFile), mustRead(t, filepath.Join(dir, manifestFile)), 0o644))
		require.NoError(t, os.WriteFile(logPath(d), data, 0o644))
		m, err := Open(t.Context(), d, emb, WithLogger(discardLogger))
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
				t.Fatalf("error is neither ErrCorrupt nor ErrVersion: %v", err)
			}
			return
		}
		defer crash(m) // no snapshot: keep iterations fast
		// Whatever was kept is a prefix of what was written: r0..rN in order,
		// minus r2 once its forget record is in.
		for i := range 6 {
			if _, ok := m.Get(fmt.Sprint("r", i)); !ok && i != 2 {
				for j := i + 1; j < 6; j++ {
					_, later := m.Get(fmt.Sprint("r", j))
					require.False(t, later, "r%d kept but r%d lost: not a prefix", j, i)
				}
				break
			}
		}
	})
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// FuzzOpenShuffledLog deletes, repeats and swaps whole frames of a valid
// log (every checksum stays right): Open must either fail with ErrCorrupt,
// leaving the file as it was, or succeed on a log whose frames are a prefix
// of those written — never accept a frame missing, repeated or out of
// order in the middle.
func FuzzOpenShuffledLog(f *testing.F) {
	dir, emb := fuzzStore(f)
	hdr, frames := splitLog(f, mustRead(f, logPath(dir)))
	manifest := mustRead(f, filepath.Join(dir, manifestFile))

	f.Add([]byte{})
	f.Add([]byte{0, 6})       // delete the last frame: a shorter, sound log
	f.Add([]byte{0, 2})       // delete one in the middle
	f.Add([]byte{1, 3})       // repeat one
	f.Add([]byte{2, 0})       // swap the first two
	f.Add([]byte{2, 1, 2, 1}) // swap and swap back
	f.Fuzz(func(t *testing.T, ops []byte) {
		got := slices.Clone(frames)
		for i := 0; i+1 < len(ops) && i < 16; i += 2 {
			if len(got) == 0 {
				break
			}
			at := int(ops[i+1]) % len(got)
			switch ops[i] % 3 {
			case 0:
				got = slices.Delete(got, at, at+1)
			case 1:
				got = slices.Insert(got, at+1, got[at])
			case 2:
				if at+1 < len(got) {
					got[at], got[at+1] = got[at+1], got[at]
				}
			}
		}
		data := slices.Concat(append([][]byte{hdr}, got...)...)
		d := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(d, manifestFile), manifest, 0o644))
		require.NoError(t, os.WriteFile(logPath(d), data, 0o644))
		m, err := Open(t.Context(), d, emb, WithLogger(discardLogger))
		prefix := len(got) <= len(frames)
		for i := range got {
			prefix = prefix && bytes.Equal(got[i], frames[i])
		}
		if err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
			require.False(t, prefix, "a prefix of the log is sound: %v", err)
			require.Equal(t, data, mustRead(t, logPath(d)), "a corrupt log is not modified")
			return
		}
		defer crash(m)
		require.True(t, prefix, "a log with frames missing, repeated or out of order opened")
	})
}
