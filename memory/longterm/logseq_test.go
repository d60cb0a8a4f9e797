package longterm

import (
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/internal/embedtest"
)

// frame is a format-2 frame of payload with sequence number 1, for tests
// that append a torn frame to a log.
func frame(dst, payload []byte) []byte { return appendFrame(dst, logVersion, 1, payload) }

// splitLog returns the header of a format-2 log and its frames.
func splitLog(t testing.TB, b []byte) (hdr []byte, frames [][]byte) {
	t.Helper()
	require.Equal(t, uint16(logVersion), binary.LittleEndian.Uint16(b[6:]))
	for off := int64(logHeaderSize); off < int64(len(b)); {
		n := frameLen(b, off)
		frames = append(frames, b[off:off+n])
		off += n
	}
	return b[:logHeaderSize], frames
}

// toLogV1 rewrites the format-2 log b as the previous release wrote it:
// format 1, the same records, no sequence numbers.
func toLogV1(t *testing.T, b []byte) []byte {
	t.Helper()
	hdr, frames := splitLog(t, b)
	out := slices.Clone(hdr)
	binary.LittleEndian.PutUint16(out[6:], logVersion1)
	for _, f := range frames {
		out = appendFrame(out, logVersion1, 0, f[frameHeader:])
	}
	return out
}

// crashedStore returns a new store holding the n records of seed and no
// snapshot, as a writer killed after them leaves it.
func crashedStore(t *testing.T, emb *embedtest.Counting, n int) string {
	t.Helper()
	dir := t.TempDir()
	m := openStore(t, dir, emb)
	seed(t, m, n)
	crash(m)
	return dir
}

// storeV1 is crashedStore with its log as the previous release wrote it
// (format 1), which it also returns.
func storeV1(t *testing.T, emb *embedtest.Counting, n int) (string, []byte) {
	t.Helper()
	dir := crashedStore(t, emb, n)
	v1 := toLogV1(t, mustRead(t, logPath(dir)))
	require.NoError(t, os.WriteFile(logPath(dir), v1, 0o644))
	return dir, v1
}

func logFormatOf(t *testing.T, dir string) uint16 {
	t.Helper()
	return binary.LittleEndian.Uint16(mustRead(t, logPath(dir))[6:])
}

// TestOpen_SequenceDamage: a frame missing, repeated or out of order in the
// middle of the log — every checksum right — is an error naming the file,
// the frame's offset and its sequence number; nothing is modified, a
// reader and Verify refuse too, and Repair keeps every record it can, in
// sequence order, without the repeat.
func TestOpen_SequenceDamage(t *testing.T) {
	const n = 8
	tests := []struct {
		name    string
		damage  func(frames [][]byte) [][]byte
		at      int // index of the damaged log's frame where replay stops
		want    string
		records int // after Repair
	}{
		{"missing", func(f [][]byte) [][]byte { return slices.Delete(slices.Clone(f), 3, 4) },
			3, "frame sequence 5 where 4 was due (frame 4 is missing", n - 1},
		{"repeated", func(f [][]byte) [][]byte { return slices.Insert(slices.Clone(f), 4, f[3]) },
			4, "frame sequence 4 where 5 was due (the previous frame repeated)", n},
		{"reordered", func(f [][]byte) [][]byte {
			f = slices.Clone(f)
			f[3], f[4] = f[4], f[3]
			return f
		}, 3, "frame sequence 5 where 4 was due", n},
	}
	for _, tt := range tests {
		for _, closed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/snapshot=%v", tt.name, closed), func(t *testing.T) {
				emb := newCounting(t, 64)
				dir := t.TempDir()
				m := openStore(t, dir, emb)
				seed(t, m, n)
				if closed {
					require.NoError(t, m.Close())
				} else {
					crash(m)
				}
				hdr, frames := splitLog(t, mustRead(t, logPath(dir)))
				require.Len(t, frames, n)
				damaged := tt.damage(frames)
				at := int64(logHeaderSize)
				for _, f := range damaged[:tt.at] {
					at += int64(len(f))
				}
				require.NoError(t, os.WriteFile(logPath(dir), slices.Concat(append([][]byte{hdr}, damaged...)...), 0o644))
				before := hashDir(t, dir)

				_, err := Open(t.Context(), dir, emb, WithLogger(discardLogger))
				require.ErrorIs(t, err, ErrCorrupt)
				assert.Contains(t, err.Error(), logPath(dir))
				if closed && tt.name == "missing" {
					// The log is shorter than the snapshot says: caught
					// before the replay.
					assert.Contains(t, err.Error(), "the log lost records")
				} else {
					assert.Contains(t, err.Error(), fmt.Sprintf("offset %d: ", at))
					assert.Contains(t, err.Error(), tt.want)
				}
				_, err = Open(t.Context(), dir, emb, WithReadOnly())
				require.ErrorIs(t, err, ErrCorrupt, "a reader refuses too")
				_, err = Verify(t.Context(), dir, emb)
				require.ErrorIs(t, err, ErrCorrupt)
				assert.Equal(t, before, hashDir(t, dir), "the store is left as it was")

				rep, err := Repair(t.Context(), dir, emb, WithLogger(discardLogger))
				require.NoError(t, err)
				assert.Contains(t, rep.Rebuilt, "log")
				records := tt.records
				if closed && tt.name == "missing" {
					records++ // r3 is in the snapshot: put back from it
				}
				assert.Equal(t, records, rep.RecordsAfter)
				if tt.name == "repeated" {
					require.Len(t, rep.Dropped, 1, "the repeat is dropped")
					assert.Equal(t, ByteRange{at, int64(len(frames[3]))}, rep.Dropped[0])
				} else {
					assert.Empty(t, rep.Dropped, "no bytes are damaged")
				}
				assert.Empty(t, rep.Lost)
				if closed && tt.name == "missing" {
					assert.Equal(t, []string{"r3"}, rep.Restored)
				} else {
					assert.Empty(t, rep.Restored)
				}
				m = openStore(t, dir, emb)
				assert.Equal(t, records, m.Len())
				require.NoError(t, m.Close())
				_, err = Verify(t.Context(), dir, emb)
				require.NoError(t, err, "the repaired store verifies")
			})
		}
	}
}

// TestLogV1_OpensAndCompactsToV2: a log of the previous release (format 1)
// opens, takes appends in its own format, keeps it across a snapshot, and
// becomes format 2 at Compact, with every record.
func TestLogV1_OpensAndCompactsToV2(t *testing.T) {
	emb := newCounting(t, 64)
	dir, v1 := storeV1(t, emb, 5)
	m := openStore(t, dir, emb)
	checkAll(t, m, 5)
	seedMore(t, m, 5, 8)
	require.NoError(t, m.Forget(t.Context(), "r1"))
	require.NoError(t, m.Close())
	assert.Equal(t, uint16(logVersion1), logFormatOf(t, dir), "appends and the snapshot keep format 1")
	grown := mustRead(t, logPath(dir))
	assert.Equal(t, v1, grown[:len(v1)], "the old frames are untouched")

	rep, err := Verify(t.Context(), dir, emb)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.LogFormat)
	assert.Equal(t, 9, rep.LogFrames)

	m = openStore(t, dir, emb)
	assert.Equal(t, 7, m.Len())
	require.NoError(t, m.Compact(t.Context()))
	require.NoError(t, m.Close())
	assert.Equal(t, uint16(logVersion), logFormatOf(t, dir))
	_, frames := splitLog(t, mustRead(t, logPath(dir)))
	require.Len(t, frames, 7, "compaction keeps the live records")
	for i, f := range frames {
		assert.Equal(t, uint64(i+1), binary.LittleEndian.Uint64(f[4:]), "frame %d", i)
	}
	rep, err = Verify(t.Context(), dir, emb)
	require.NoError(t, err)
	assert.Equal(t, LogFormat, rep.LogFormat)
	got, err := ReadLogFormat(dir)
	require.NoError(t, err)
	assert.Equal(t, LogFormat, got)

	m = openStore(t, dir, emb)
	defer m.Close()
	assert.Equal(t, 7, m.Len())
	for _, id := range []string{"r0", "r2", "r7"} {
		_, ok := m.Get(id)
		assert.True(t, ok, id)
	}
	_, ok := m.Get("r1")
	assert.False(t, ok, "the forgotten record stays forgotten")
	seedMore(t, m, 8, 9)
	_, frames = splitLog(t, mustRead(t, logPath(dir)))
	assert.Equal(t, uint64(8), binary.LittleEndian.Uint64(frames[7][4:]), "appends continue the sequence")
}

// TestLogV1_Damage: a format-1 log keeps format 1's checks — a flipped
// byte is a named error, the file unmodified — and a future format is
// refused as a version error.
func TestLogV1_Damage(t *testing.T) {
	emb := newCounting(t, 64)
	dir, v1 := storeV1(t, emb, 4)
	second := int64(logHeaderSize) + frameHeaderV1 + int64(binary.LittleEndian.Uint32(v1[logHeaderSize:]))
	damaged := slices.Clone(v1)
	damaged[second+frameHeaderV1+5] ^= 0x10
	require.NoError(t, os.WriteFile(logPath(dir), damaged, 0o644))
	_, err := Open(t.Context(), dir, emb)
	require.ErrorIs(t, err, ErrCorrupt)
	assert.Contains(t, err.Error(), fmt.Sprintf("offset %d: record checksum mismatch", second))
	assert.Equal(t, damaged, mustRead(t, logPath(dir)))

	future := slices.Clone(v1)
	binary.LittleEndian.PutUint16(future[6:], logVersion+1)
	require.NoError(t, os.WriteFile(logPath(dir), future, 0o644))
	_, err = Open(t.Context(), dir, emb)
	require.ErrorIs(t, err, ErrVersion)

	require.NoError(t, os.WriteFile(logPath(dir), v1, 0o644))
	m := openStore(t, dir, emb)
	defer m.Close()
	checkAll(t, m, 4)
}
