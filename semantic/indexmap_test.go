package semantic_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/semantic"
)

type rec struct {
	Text string `json:"text"`
	N    int    `json:"n"`
}

func collect[V any](m semantic.IndexMap[V]) []semantic.Item[V] {
	var out []semantic.Item[V]
	for id, v := range m.All() {
		out = append(out, semantic.Item[V]{ID: id, Value: v})
	}
	return out
}

// TestIndexMap runs the IndexMap contract against both implementations.
func TestIndexMap(t *testing.T) {
	t.Parallel()

	kinds := map[string]func(t *testing.T) semantic.IndexMap[rec]{
		"mem": func(*testing.T) semantic.IndexMap[rec] { return semantic.NewMemIndexMap[rec]() },
		"jsonl": func(t *testing.T) semantic.IndexMap[rec] {
			m, err := semantic.OpenJSONLIndexMap[rec](filepath.Join(t.TempDir(), "log.jsonl"))
			require.NoError(t, err)
			t.Cleanup(func() { m.Close() })
			return m
		},
	}
	for name, open := range kinds {
		t.Run(name, func(t *testing.T) {
			m := open(t)
			assert.Equal(t, int64(-1), m.MaxID(), "an empty map has MaxID -1")
			require.NoError(t, m.Put(semantic.Item[rec]{ID: 3, Value: rec{"c", 3}}, semantic.Item[rec]{ID: 1, Value: rec{"a", 1}}))
			require.NoError(t, m.Put(semantic.Item[rec]{ID: 1, Value: rec{"A", 10}}), "same id replaces")
			v, ok := m.Get(1)
			require.True(t, ok)
			assert.Equal(t, rec{"A", 10}, v)
			assert.Equal(t, 2, m.Len())
			assert.Equal(t, []semantic.Item[rec]{{1, rec{"A", 10}}, {3, rec{"c", 3}}}, collect(m), "All is in ascending id order")

			n, err := m.Delete(3, 3, 99)
			require.NoError(t, err)
			assert.Equal(t, 1, n, "unknown and repeated ids are not counted")
			_, ok = m.Get(3)
			assert.False(t, ok)
			assert.Equal(t, int64(3), m.MaxID(), "MaxID remembers deleted ids")

			err = m.Put(semantic.Item[rec]{ID: -1})
			require.ErrorIs(t, err, semantic.ErrInvalidID)

			require.NoError(t, m.Close())
			require.NoError(t, m.Close(), "Close is idempotent")
			require.ErrorIs(t, m.Put(semantic.Item[rec]{ID: 5}), semantic.ErrClosed)
			_, err = m.Delete(1)
			require.ErrorIs(t, err, semantic.ErrClosed)
			_, ok = m.Get(1)
			assert.True(t, ok, "contents stay readable after Close")
		})
	}
}

func TestMemIndexMap_SaveLoad(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	path := filepath.Join(dir, "index.json")
	m := semantic.NewMemIndexMap[rec]()
	require.NoError(t, m.Put(semantic.Item[rec]{ID: 2, Value: rec{"二", 2}}, semantic.Item[rec]{ID: 7, Value: rec{"seven", 7}}))
	_, err := m.Delete(7)
	require.NoError(t, err)
	require.NoError(t, m.Save(path))

	got, err := semantic.LoadMemIndexMap[rec](path)
	require.NoError(t, err)
	assert.Equal(t, collect[rec](m), collect[rec](got))
	assert.Equal(t, int64(7), got.MaxID(), "MaxID survives save/load so ids are never reused")

	// Saving twice writes the same bytes (sorted, deterministic).
	first, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, got.Save(path))
	second, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(first), string(second))

	tests := []struct {
		name, data string
		want       error
	}{
		{"newer version", `{"version": 99, "items": []}`, semantic.ErrVersion},
		{"no version", `{"items": []}`, semantic.ErrCorrupt},
		{"not json", `{"version": 1, "items": [`, semantic.ErrCorrupt},
		{"negative id", `{"version": 1, "items": [{"id": -4, "value": {}}]}`, semantic.ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".json")
			require.NoError(t, os.WriteFile(p, []byte(tt.data), 0o644))
			_, err := semantic.LoadMemIndexMap[rec](p)
			require.ErrorIs(t, err, tt.want)
			assert.Contains(t, err.Error(), p, "the error names the file")
		})
	}
	_, err = semantic.LoadMemIndexMap[rec](filepath.Join(dir, "missing.json"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestJSONLIndexMap_Reopen(t *testing.T) {
	t.Parallel()

	path := filepath.Join(t.TempDir(), "log.jsonl")
	m, err := semantic.OpenJSONLIndexMap[rec](path)
	require.NoError(t, err)
	require.NoError(t, m.Put(semantic.Item[rec]{ID: 0, Value: rec{"zero", 0}}, semantic.Item[rec]{ID: 1, Value: rec{"one\n\"quoted\"", 1}}))
	off := m.Offset()
	require.NoError(t, m.Put(semantic.Item[rec]{ID: 2, Value: rec{"二", 2}}))
	_, err = m.Delete(0)
	require.NoError(t, err)
	require.NoError(t, m.Close())

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, `{"id":0,"value":{"text":"zero","n":0}}
{"id":1,"value":{"text":"one\n\"quoted\"","n":1}}
{"id":2,"value":{"text":"二","n":2}}
{"id":0,"deleted":true}
`, string(data), "one JSON object per line; deletes are records too")

	m2, err := semantic.OpenJSONLIndexMap[rec](path)
	require.NoError(t, err)
	defer m2.Close()
	assert.Equal(t, []semantic.Item[rec]{{1, rec{"one\n\"quoted\"", 1}}, {2, rec{"二", 2}}}, collect[rec](m2))
	assert.Equal(t, int64(2), m2.MaxID())

	ops, err := m2.ReadSince(off)
	require.NoError(t, err)
	assert.Equal(t, []semantic.Op[rec]{{ID: 2, Value: rec{"二", 2}}, {ID: 0, Deleted: true}}, ops)
	_, err = m2.ReadSince(off - 1)
	require.Error(t, err, "an offset inside a line is refused")
	_, err = m2.ReadSince(m2.Offset() + 1)
	require.Error(t, err, "an offset past the end is refused")
	ops, err = m2.ReadSince(m2.Offset())
	require.NoError(t, err)
	assert.Empty(t, ops)
}

func TestJSONLIndexMap_RepairTornTail(t *testing.T) {
	t.Parallel()

	path := filepath.Join(t.TempDir(), "log.jsonl")
	good := "{\"id\":0,\"value\":{\"text\":\"a\",\"n\":1}}\n{\"id\":1,\"deleted\":true}\n"
	torn := good + `{"id":2,"value":{"te`
	require.NoError(t, os.WriteFile(path, []byte(torn), 0o644))

	var logs bytes.Buffer
	m, err := semantic.OpenJSONLIndexMap[rec](path, semantic.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	require.NoError(t, err)
	assert.Equal(t, []semantic.Item[rec]{{0, rec{"a", 1}}}, collect[rec](m))
	assert.Contains(t, logs.String(), "level=WARN")
	assert.Contains(t, logs.String(), "repaired torn last line")
	assert.Contains(t, logs.String(), "line=3")

	kept, err := os.ReadFile(path + ".broken")
	require.NoError(t, err)
	assert.Equal(t, torn, string(kept), "the whole damaged file is kept beside it")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, good, string(data), "the torn line is cut off")

	// The repaired log takes new records after the good ones.
	require.NoError(t, m.Put(semantic.Item[rec]{ID: 2, Value: rec{"b", 2}}))
	require.NoError(t, m.Close())
	m, err = semantic.OpenJSONLIndexMap[rec](path)
	require.NoError(t, err)
	defer m.Close()
	assert.Equal(t, 2, m.Len())
}

func TestJSONLIndexMap_CorruptLine(t *testing.T) {
	t.Parallel()

	good := `{"id":0,"value":{"text":"a","n":1}}` + "\n"
	tests := []struct {
		name, data string
		line       int
		msg        string
	}{
		{"garbage in the middle", good + "not json\n" + good, 2, "invalid character"},
		{"bad complete last line", good + `{"id":1,"value":{"text":"b"` + "\n", 2, "unexpected end"},
		{"no id", `{"value":{"text":"a","n":1}}` + "\n", 1, `no "id"`},
		{"negative id", `{"id":-2,"value":{}}` + "\n", 1, "negative id"},
		{"empty line", good + "\n" + good, 2, "unexpected end"},
		{"neither value nor deleted", `{"id":1}` + "\n", 1, "neither"},
		{"both value and deleted", `{"id":1,"value":{},"deleted":true}` + "\n", 1, "both"},
		{"value of the wrong type", `{"id":1,"value":"text"}` + "\n", 1, "value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log.jsonl")
			require.NoError(t, os.WriteFile(path, []byte(tt.data), 0o644))
			_, err := semantic.OpenJSONLIndexMap[rec](path)
			require.ErrorIs(t, err, semantic.ErrCorrupt)
			var le *semantic.LineError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tt.line, le.Line)
			assert.Contains(t, err.Error(), fmt.Sprintf("semantic: %s:%d: ", path, tt.line), "the error names file and line")
			assert.Contains(t, err.Error(), tt.msg)
			_, statErr := os.Stat(path + ".broken")
			assert.ErrorIs(t, statErr, os.ErrNotExist, "only a torn tail is repaired")
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tt.data, string(after), "a corrupt log is left untouched")
		})
	}
}

func TestJSONLIndexMap_LongLine(t *testing.T) {
	t.Parallel()

	path := filepath.Join(t.TempDir(), "log.jsonl")
	m, err := semantic.OpenJSONLIndexMap[rec](path)
	require.NoError(t, err)
	long := strings.Repeat("长文本 long text ", 20000) // ≫ the reader's buffer
	require.NoError(t, m.Put(semantic.Item[rec]{ID: 1, Value: rec{long, 1}}, semantic.Item[rec]{ID: 2, Value: rec{"short", 2}}))
	require.NoError(t, m.Close())
	m, err = semantic.OpenJSONLIndexMap[rec](path)
	require.NoError(t, err)
	defer m.Close()
	v, ok := m.Get(1)
	require.True(t, ok)
	assert.Equal(t, long, v.Text)
	assert.Equal(t, 2, m.Len())
}

func TestJSONLIndexMap_OpenErrors(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	_, err := semantic.OpenJSONLIndexMap[rec](filepath.Join(dir, "no", "such", "dir", "log.jsonl"))
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = semantic.OpenJSONLIndexMap[rec](dir) // a directory
	require.Error(t, err)
}

// FuzzIndexMapOpen cuts a valid log at a random byte: Open must return a
// prefix of the records, or a named error, and never panic.
func FuzzIndexMapOpen(f *testing.F) {
	var full bytes.Buffer
	var want []semantic.Op[rec]
	for i := range 12 {
		op := semantic.Op[rec]{ID: int64(i), Value: rec{Text: fmt.Sprintf("segment %d 段落 \"%d\"\n", i, i), N: i}}
		if i%5 == 4 {
			op = semantic.Op[rec]{ID: int64(i - 2), Deleted: true}
			fmt.Fprintf(&full, `{"id":%d,"deleted":true}`+"\n", op.ID)
		} else {
			fmt.Fprintf(&full, `{"id":%d,"value":{"text":%q,"n":%d}}`+"\n", op.ID, op.Value.Text, op.Value.N)
		}
		want = append(want, op)
	}
	f.Add(full.Len(), []byte(nil))
	f.Add(17, []byte(nil))
	f.Add(0, []byte(nil))
	f.Add(full.Len()/2, []byte("\x00\x00\x00"))
	f.Add(40, []byte("}\n"))
	f.Fuzz(func(t *testing.T, cut int, tail []byte) {
		if cut < 0 || cut > full.Len() {
			return
		}
		data := append(bytes.Clone(full.Bytes()[:cut]), tail...)
		path := filepath.Join(t.TempDir(), "log.jsonl")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		m, err := semantic.OpenJSONLIndexMap[rec](path, semantic.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			var le *semantic.LineError
			require.True(t, errors.As(err, &le) && errors.Is(err, semantic.ErrCorrupt), "error must name the line: %v", err)
			require.Contains(t, err.Error(), path)
			return
		}
		defer m.Close()
		ops, err := m.ReadSince(0)
		require.NoError(t, err)
		if len(tail) == 0 {
			require.LessOrEqual(t, len(ops), len(want))
			for i, op := range ops {
				require.Equal(t, want[i], op, "a cut log opens as a prefix of its records (record %d)", i)
			}
		}
		// Replaying the surviving records gives the map's contents.
		state := map[int64]rec{}
		for _, op := range ops {
			if op.Deleted {
				delete(state, op.ID)
			} else {
				state[op.ID] = op.Value
			}
		}
		got := collect[rec](m)
		require.Len(t, got, len(state))
		for _, it := range got {
			require.Equal(t, state[it.ID], it.Value)
		}
		require.True(t, slices.IsSortedFunc(got, func(a, b semantic.Item[rec]) int { return int(a.ID - b.ID) }))
	})
}

// TestJSONLIndexMap_ConcurrentWriters checks that concurrent Puts and
// Deletes (which share fsyncs) are all durable and visible when they
// return, and that the log replays to the same state.
func TestJSONLIndexMap_ConcurrentWriters(t *testing.T) {
	t.Parallel()

	path := filepath.Join(t.TempDir(), "log.jsonl")
	m, err := semantic.OpenJSONLIndexMap[rec](path)
	require.NoError(t, err)
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				id := int64(w*each + i)
				if !assert.NoError(t, m.Put(semantic.Item[rec]{ID: id, Value: rec{fmt.Sprint(id), i}})) {
					return
				}
				v, ok := m.Get(id)
				assert.True(t, ok, "a Put is visible when it returns")
				assert.Equal(t, fmt.Sprint(id), v.Text)
				if i%5 == 0 {
					n, err := m.Delete(id)
					assert.NoError(t, err)
					assert.Equal(t, 1, n)
				}
			}
		})
	}
	wg.Wait()
	want := collect[rec](m)
	assert.Len(t, want, writers*each*4/5)
	require.NoError(t, m.Close())

	m2, err := semantic.OpenJSONLIndexMap[rec](path)
	require.NoError(t, err)
	defer m2.Close()
	assert.Equal(t, want, collect[rec](m2), "the log replays to the same state")
	assert.Equal(t, int64(writers*each-1), m2.MaxID())
}
