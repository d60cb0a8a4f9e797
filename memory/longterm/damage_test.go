package longterm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/internal/dirtest"
	"github.com/agentmem/agentmem/internal/embedtest"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/inmem"
)

func init() {
	// "test-refusing" refuses vectors in namespace "refused", as a Faiss
	// IVF index refuses an Add it cannot train for.
	vdb.Register("test-refusing", func(_ context.Context, cfg vdb.Config) (vdb.VectorDatabase, error) {
		db, err := inmem.New(cfg.Dim)
		if err != nil {
			return nil, err
		}
		if cfg.Namespace == "refused" {
			return refusingDB{db}, nil
		}
		return db, nil
	})
}

type refusingDB struct{ *inmem.DB }

func (refusingDB) Add(context.Context, []int64, [][]float32) error {
	return errors.New("index cannot take vectors yet")
}

// hashDir returns the SHA-256 of every file under dir but the lock file,
// whose content is only the last writer's process id.
func hashDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	return dirtest.Hashes(t, dir, lockFileName)
}

// seededWithTail makes a store of 15 records: 12 in a snapshot, 3 in the
// log after it (the writer was killed).
func seededWithTail(t *testing.T, emb *embedtest.Counting) string {
	t.Helper()
	dir := t.TempDir()
	m := openStore(t, dir, emb)
	seed(t, m, 12)
	require.NoError(t, m.Close())
	m = openStore(t, dir, emb)
	seedMore(t, m, 12, 15)
	crash(m)
	return dir
}

// namedError reports whether err wraps one of the errors that say what is
// wrong with a store.
func namedError(err error) bool {
	for _, e := range []error{ErrCorrupt, ErrVersion, ErrEmbedderMismatch, memory.ErrInvalidArgument} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// TestDamage_EveryFile truncates, flips a byte in and deletes every file
// of a store in turn. Each time, Open (writer and reader) either fails with
// a named error and leaves every file byte for byte as it was, or opens
// with every record (a deleted snapshot.json: the log holds everything;
// a damaged turn index, which is a cache).
// Repair then makes the store openable, and loses nothing when the damage
// was in a file derived from the log.
func TestDamage_EveryFile(t *testing.T) {
	emb := newCounting(t, 64)
	proto := seededWithTail(t, emb)
	entries, err := os.ReadDir(proto)
	require.NoError(t, err)
	var files []string
	for _, e := range entries {
		if e.Name() != lockFileName {
			files = append(files, e.Name())
		}
	}
	require.Subset(t, files, []string{manifestFile, logFileName, snapMetaFile, "snap-000001.parents", "snap-000001.vec0"})
	damages := map[string]func(b []byte) []byte{
		"truncate": func(b []byte) []byte { return b[:len(b)/2] },
		"flip":     func(b []byte) []byte { b = slices.Clone(b); b[len(b)/2] ^= 0x10; return b },
		"delete":   nil,
	}
	for _, file := range files {
		for name, damage := range damages {
			t.Run(file+"/"+name, func(t *testing.T) {
				dir := t.TempDir()
				require.NoError(t, os.CopyFS(dir, os.DirFS(proto)))
				path := filepath.Join(dir, file)
				if damage == nil {
					require.NoError(t, os.Remove(path))
				} else {
					b, err := os.ReadFile(path)
					require.NoError(t, err)
					require.NoError(t, os.WriteFile(path, damage(b), 0o644))
				}
				before := hashDir(t, dir)
				for _, ro := range []bool{true, false} {
					var opts []Option
					if ro {
						opts = append(opts, WithReadOnly())
					}
					m, err := Open(t.Context(), dir, emb, append(opts, WithLogger(discardLogger))...)
					if err == nil {
						assert.Equal(t, 15, m.Len(), "an open that succeeds has lost nothing")
						if turnsCache := strings.HasSuffix(file, ".turns"); turnsCache {
							// The turn index is a cache: built from the
							// records instead, it ranks as before.
							checkAll(t, m, 15)
						}
						require.NoError(t, m.Close())
						assert.True(t, file == snapMetaFile && name == "delete" || strings.HasSuffix(file, ".turns"),
							"only a deleted snapshot.json or a damaged turn index is no damage: %s %s opened", file, name)
						return
					}
					assert.True(t, namedError(err), "read-only %v: %v", ro, err)
					assert.Equal(t, before, hashDir(t, dir), "read-only %v: a failed open changes no file", ro)
				}
				rep, err := Repair(t.Context(), dir, emb, WithLogger(discardLogger))
				require.NoError(t, err)
				assert.DirExists(t, rep.Backup)
				m := openStore(t, dir, emb, WithLogger(discardLogger))
				defer m.Close()
				assert.Equal(t, rep.RecordsAfter, m.Len())
				if file != logFileName {
					assert.Equal(t, 15, m.Len(), "the log holds everything: %+v", rep)
				} else {
					// The snapshot's records the log lost are put back.
					assert.LessOrEqual(t, m.Len(), 15, "%+v", rep)
					assert.Empty(t, rep.Lost, "%+v", rep)
					if name != "delete" {
						assert.NotEmpty(t, rep.Dropped, "the damaged bytes are reported")
					}
				}
				// The backup holds every damaged file as it was.
				for f, sum := range before {
					got := hashDir(t, rep.Backup)[f]
					assert.Equal(t, sum, got, "backup of %s", f)
				}
			})
		}
	}
}

// TestOpen_TruncatedLogIsAnError is the case: a log cut short below
// what the snapshot covers used to be replayed as it was, and the next
// snapshot held fewer records. Now it is an error naming both files; Repair
// keeps a backup and puts back from the snapshot the records the log lost
// (it used to name them as lost).
func TestOpen_TruncatedLogIsAnError(t *testing.T) {
	emb := newCounting(t, 64)
	dir := t.TempDir()
	m := openStore(t, dir, emb)
	seed(t, m, 12)
	require.NoError(t, m.Close())
	b, err := os.ReadFile(logPath(dir))
	require.NoError(t, err)
	// Cut at the end of the 6th record: a clean frame boundary.
	off := int64(logHeaderSize)
	for range 6 {
		off += frameLen(b, off)
	}
	require.NoError(t, os.WriteFile(logPath(dir), b[:off], 0o644))
	before := hashDir(t, dir)
	_, err = Open(t.Context(), dir, emb)
	require.ErrorIs(t, err, ErrCorrupt)
	assert.Contains(t, err.Error(), logPath(dir))
	assert.Contains(t, err.Error(), snapMetaFile)
	assert.Equal(t, before, hashDir(t, dir))

	rep, err := Repair(t.Context(), dir, emb, WithLogger(discardLogger))
	require.NoError(t, err)
	assert.Equal(t, 12, rep.RecordsBefore)
	assert.Equal(t, 12, rep.RecordsAfter)
	assert.Empty(t, rep.Lost)
	assert.Equal(t, []string{"r6", "r7", "r8", "r9", "r10", "r11"}, rep.Restored, "in their old order")
	m = openStore(t, dir, emb)
	defer m.Close()
	assert.Equal(t, 12, m.Len())
	for _, id := range rep.Restored {
		_, ok := m.Get(id)
		assert.True(t, ok, id)
	}
	checkAll(t, m, 12)
}

// TestRepair_SkipsOneDamagedRecord: a flipped byte in the middle of the log
// costs the record it is in, not the ones after it.
func TestRepair_SkipsOneDamagedRecord(t *testing.T) {
	emb := newCounting(t, 64)
	dir := crashedStore(t, emb, 8)
	b, err := os.ReadFile(logPath(dir))
	require.NoError(t, err)
	third := int64(logHeaderSize) + frameLen(b, logHeaderSize)
	third += frameLen(b, third)
	b[third+frameHeader+3] ^= 1
	require.NoError(t, os.WriteFile(logPath(dir), b, 0o644))
	_, err = Open(t.Context(), dir, emb)
	require.ErrorIs(t, err, ErrCorrupt)
	assert.Contains(t, err.Error(), fmt.Sprintf("offset %d", third))

	rep, err := Repair(t.Context(), dir, emb, WithLogger(discardLogger))
	require.NoError(t, err)
	require.Len(t, rep.Dropped, 1)
	assert.Equal(t, third, rep.Dropped[0].Offset)
	assert.Equal(t, frameLen(b, third), rep.Dropped[0].Length)
	m := openStore(t, dir, emb)
	defer m.Close()
	assert.Equal(t, 7, m.Len())
	_, ok := m.Get("r2")
	assert.False(t, ok, "the damaged record is the one dropped")
	_, ok = m.Get("r7")
	assert.True(t, ok, "records after the damage are kept")
}

// TestOpen_ReadOnly: a reader needs no lock, writes nothing (not even the
// repair of a torn tail or a snapshot at Close), refuses writes, and sees
// every write acknowledged before it opened.
func TestOpen_ReadOnly(t *testing.T) {
	emb := newCounting(t, 64)
	dir := seededWithTail(t, emb)
	b, err := os.ReadFile(logPath(dir))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(logPath(dir), append(b, 1, 2, 3), 0o644)) // a torn tail
	writer := openStore(t, dir, emb, WithLogger(discardLogger))               // holds the lock; trims the tail
	before := hashDir(t, dir)

	r, err := Open(t.Context(), dir, emb, WithReadOnly())
	require.NoError(t, err, "a reader does not wait for the writer's lock")
	checkAll(t, r, 15)
	_, err = r.Add(t.Context(), Record{Text: "no"})
	require.ErrorIs(t, err, ErrReadOnly)
	require.ErrorIs(t, err, memory.ErrUnsupported)
	require.ErrorIs(t, r.Forget(t.Context(), "r1"), ErrReadOnly)
	require.ErrorIs(t, r.Compact(t.Context()), ErrReadOnly)
	require.NoError(t, r.Close())
	assert.Equal(t, before, hashDir(t, dir), "a reader writes nothing")

	// Writes acknowledged before a reader opens are in its view.
	seedMore(t, writer, 15, 17)
	r, err = Open(t.Context(), dir, emb, WithReadOnly())
	require.NoError(t, err)
	checkAll(t, r, 17)
	require.NoError(t, r.Close())
	require.NoError(t, writer.Close())

	_, err = Open(t.Context(), t.TempDir(), emb, WithReadOnly())
	require.ErrorIs(t, err, fs.ErrNotExist, "a reader creates no store")
}

// TestOpen_ReaderSkipsTornTail: a reader stops at the last complete record
// and leaves the torn bytes for the next writer.
func TestOpen_ReaderSkipsTornTail(t *testing.T) {
	emb := newCounting(t, 64)
	dir := seededWithTail(t, emb)
	b, err := os.ReadFile(logPath(dir))
	require.NoError(t, err)
	torn := append(b, frame(nil, encodeForget(nil, "r0"))[:9]...)
	require.NoError(t, os.WriteFile(logPath(dir), torn, 0o644))
	r, err := Open(t.Context(), dir, emb, WithReadOnly())
	require.NoError(t, err)
	checkAll(t, r, 15)
	require.NoError(t, r.Close())
	got, err := os.ReadFile(logPath(dir))
	require.NoError(t, err)
	assert.Equal(t, torn, got)
	rep, err := Verify(t.Context(), dir, emb)
	require.ErrorIs(t, err, ErrCorrupt, "verify counts a torn tail as damage")
	assert.Equal(t, int64(9), rep.TornTail)
	assert.Equal(t, 15, rep.Records)
}

func TestVerify_SoundStore(t *testing.T) {
	emb := newCounting(t, 64)
	dir := seededWithTail(t, emb)
	before := hashDir(t, dir)
	rep, err := Verify(t.Context(), dir, emb)
	require.NoError(t, err)
	assert.Equal(t, 15, rep.Records)
	assert.Equal(t, 15, rep.LogFrames)
	assert.Empty(t, rep.Problems)
	assert.Equal(t, before, hashDir(t, dir), "verify writes nothing")
}

// TestOpen_RemovesLeftovers: the files of interrupted snapshots and
// compactions are removed by a writer's open (427 MB of them were left
// after 30 kills), and left alone by a reader's.
func TestOpen_RemovesLeftovers(t *testing.T) {
	emb := newCounting(t, 64)
	dir := seededWithTail(t, emb)
	leftovers := []string{".snap-000002.parents.tmp-123", "snap-000002.vec0", ".snapshot.json.tmp-9", logFileName + compactSuffix}
	for _, f := range leftovers {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), make([]byte, 1000), 0o644))
	}
	rep, err := Verify(t.Context(), dir, emb)
	require.NoError(t, err, "leftovers are no damage")
	assert.ElementsMatch(t, leftovers, rep.Leftovers)
	r, err := Open(t.Context(), dir, emb, WithReadOnly())
	require.NoError(t, err)
	require.NoError(t, r.Close())
	for _, f := range leftovers {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	m := openStore(t, dir, emb, WithLogger(discardLogger))
	defer m.Close()
	checkAll(t, m, 15)
	for _, f := range leftovers {
		assert.NoFileExists(t, filepath.Join(dir, f))
	}
	assert.FileExists(t, filepath.Join(dir, "snap-000001.parents"), "the live snapshot stays")
}

// TestOpen_TwoWritersWait: two writers that each open, add and close 200
// times store all 400 records: the one that finds the store locked waits.
func TestOpen_TwoWritersWait(t *testing.T) {
	if testing.Short() {
		t.Skip("800 opens")
	}
	emb := newCounting(t, 32)
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for w := range 2 {
		wg.Go(func() {
			for i := range 200 {
				m, err := Open(t.Context(), dir, emb, WithLockWait(30e9), WithLogger(discardLogger))
				if err != nil {
					errs <- err
					continue
				}
				if _, err := m.Add(t.Context(), Record{ID: fmt.Sprintf("w%d-%d", w, i), Text: fmt.Sprintf("writer %d note %d", w, i)}); err != nil {
					errs <- err
				}
				if err := m.Close(); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	m := openStore(t, dir, emb)
	defer m.Close()
	assert.Equal(t, 400, m.Len())
}

func TestOpen_LockWaitTimesOut(t *testing.T) {
	emb := newCounting(t, 32)
	dir := t.TempDir()
	m := openStore(t, dir, emb)
	defer m.Close()
	_, err := Open(t.Context(), dir, emb, WithLockWait(50e6), WithLogger(discardLogger))
	require.ErrorIs(t, err, ErrLocked)
	assert.Contains(t, err.Error(), fmt.Sprintf("process %d", os.Getpid()))
	assert.Contains(t, err.Error(), "waited")
}

// TestAdd_TooLarge: a record above the limit is refused before anything is
// embedded or written.
func TestAdd_TooLarge(t *testing.T) {
	emb := newCounting(t, 32)
	dir := t.TempDir()
	m := openStore(t, dir, emb, WithMaxRecordBytes(1000))
	defer m.Close()
	size := func() int64 { st, err := os.Stat(logPath(dir)); require.NoError(t, err); return st.Size() }
	before, texts := size(), emb.Texts()
	_, err := m.AddBatch(t.Context(), []Record{{Text: "fine"}, {Text: string(make([]byte, 1001))}})
	require.ErrorIs(t, err, memory.ErrTooLarge)
	assert.Contains(t, err.Error(), "record 1")
	assert.Equal(t, texts, emb.Texts(), "nothing embedded")
	assert.Equal(t, before, size(), "nothing written")
	assert.Zero(t, m.Len())

	_, err = Open(t.Context(), t.TempDir(), emb, WithMaxRecordBytes(0))
	require.ErrorIs(t, err, ErrInvalidOption)
}

// TestAdd_IndexRefusalStoresNothing: when the vector index refuses a record
// after it was logged (a Faiss IVF index that cannot train), the record is
// taken out of the log again: the error is the truth, and so is a reopen.
func TestAdd_IndexRefusalStoresNothing(t *testing.T) {
	emb := newCounting(t, 32)
	dir := t.TempDir()
	m := openStore(t, dir, emb, WithBackend("test-refusing"))
	_, err := m.Add(t.Context(), Record{ID: "keep", Text: "the first note", Namespace: "ok"})
	require.NoError(t, err)
	st, err := os.Stat(logPath(dir))
	require.NoError(t, err)

	_, err = m.AddBatch(t.Context(), []Record{
		{ID: "keep", Text: "a replacement that must not stick", Namespace: "ok"},
		{ID: "x", Text: "a note the index refuses", Namespace: "refused"},
	})
	require.ErrorContains(t, err, "index cannot take vectors")
	st2, err := os.Stat(logPath(dir))
	require.NoError(t, err)
	assert.Equal(t, st.Size(), st2.Size(), "the batch is cut from the log")
	r, ok := m.Get("keep")
	require.True(t, ok, "the replaced record is back")
	assert.Equal(t, "the first note", r.Text)
	hits, err := m.Query(t.Context(), Query{Text: "first note"})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "keep", hits[0].ID)

	// Concurrent writers: only the refused call fails.
	var wg sync.WaitGroup
	var failed, ok2 int
	var mu sync.Mutex
	for i := range 20 {
		wg.Go(func() {
			ns := "ok"
			if i%5 == 0 {
				ns = "refused"
			}
			_, err := m.Add(t.Context(), Record{ID: fmt.Sprint("c", i), Text: fmt.Sprint("concurrent note ", i), Namespace: ns})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed++
			} else {
				ok2++
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 4, failed)
	assert.Equal(t, 16, ok2)
	require.NoError(t, m.Close())
	m = openStore(t, dir, emb, WithBackend("test-refusing"))
	defer m.Close()
	assert.Equal(t, 17, m.Len(), "what was acknowledged, and nothing else")
}
