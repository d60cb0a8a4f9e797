package longterm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzOpenDamagedLog cuts a valid log at a random byte and flips another:
// Open must either succeed with a prefix of the records (a torn tail
// repaired) or fail with ErrCorrupt, and never panic.
func FuzzOpenDamagedLog(f *testing.F) {
	dir := f.TempDir()
	emb := newCounting(f, 16)
	m, err := Open(f.Context(), dir, emb)
	require.NoError(f, err)
	for i := range 6 {
		_, err := m.Add(f.Context(), Record{ID: fmt.Sprint("r", i), Text: fmt.Sprintf("record %d. code X-%d", i, i), Tags: []string{"t"}})
		require.NoError(f, err)
	}
	require.NoError(f, m.Forget(f.Context(), "r2"))
	valid, err := os.ReadFile(logPath(dir))
	require.NoError(f, err)
	crash(m)

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

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}
