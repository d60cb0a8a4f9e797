package longterm

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/keyword"
)

// FuzzLoadTurns: loadTurns reads the turn index file of a snapshot,
// damaged or not, against the snapshot's records. It never panics; it
// fails with ErrCorrupt, ErrVersion, errTurns or keyword.ErrTokenizer,
// or installs indexes that hold the namespace's records and nothing else,
// link them both ways, and answer searches with records of their own
// namespace. The input is the file without its checksum, which the target
// appends, so that a change reaches the decoder instead of stopping at the
// checksum. Fuzz it with -fuzzminimizetime 0, as make fuzz does: minimising
// each new input a file's worth of bytes took a whole 20 s run otherwise.
func FuzzLoadTurns(f *testing.F) {
	ctx := f.Context()
	dir := f.TempDir()
	emb := newCounting(f, 32)
	m, err := Open(ctx, dir, emb)
	require.NoError(f, err)
	// Three namespaces of two conversations of three records: a small
	// file, which the fuzzer mutates and minimises quickly.
	recs := slices.DeleteFunc(conversations(), func(r Record) bool { return r.ID[len(r.ID)-1] > '2' })
	_, err = m.AddBatch(ctx, recs)
	require.NoError(f, err)
	require.NoError(f, m.Forget(ctx, "n0-e0-1")) // a middle record: its neighbours are linked over it
	require.NoError(f, m.Forget(ctx, "n1-e1-2")) // the newest of ns1
	require.NoError(f, m.Snapshot(ctx))
	require.NoError(f, m.Close())
	var meta snapMeta
	require.NoError(f, json.Unmarshal(mustRead(f, filepath.Join(dir, snapMetaFile)), &meta))
	require.NotEmpty(f, meta.Turns)
	valid := mustRead(f, filepath.Join(dir, meta.Turns))
	require.Less(f, len(valid), 4<<10)

	// The records the file is checked against, loaded once; each input
	// is loaded into a memory of its own that shares them (loadTurns and
	// searches only read them).
	base, err := Open(ctx, dir, emb, WithReadOnly(), WithLogger(discardLogger))
	require.NoError(f, err)
	f.Cleanup(func() { base.Close() })
	fresh := func() *Memory {
		return &Memory{
			emb: base.emb, dim: base.dim, opts: base.opts, tok: base.tok,
			parents: base.parents, children: base.children, vecs: base.vecs, nextChild: base.nextChild,
		}
	}
	require.NoError(f, fresh().loadTurns(filepath.Join(dir, meta.Turns)), "the file as written loads")
	path := filepath.Join(f.TempDir(), "turns")

	f.Add(valid[:len(valid)-4])
	f.Add(twoLeaders(f, base))
	f.Add(valid[:len(valid)/2])
	f.Add([]byte(turnsMagic + "\x01\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, body []byte) {
		data := binary.LittleEndian.AppendUint32(slices.Clone(body), crc32.Checksum(body, castagnoli))
		require.NoError(t, os.WriteFile(path, data, 0o600))
		m := fresh()
		if err := m.loadTurns(path); err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) && !errors.Is(err, errTurns) && !errors.Is(err, keyword.ErrTokenizer) {
				t.Fatalf("unexpected error: %v", err)
			}
			return
		}
		ti := m.turnIdx()
		for ns, n := range ti.ns {
			for id, p := range n.parents {
				if base.parents[p.rec.ID] != p || p.rec.Namespace != ns || n.ids[p] != id {
					t.Fatalf("namespace %q: record %d is %q of namespace %q", ns, id, p.rec.ID, p.rec.Namespace)
				}
				if _, ok := n.episodeOf.get(id); !ok {
					t.Fatalf("namespace %q: record %d has no episode", ns, id)
				}
			}
			for _, l := range n.follower.keys() {
				fl := n.follower.at(l)
				if n.leader.at(fl) != l {
					t.Fatalf("namespace %q: %d follows %d, but its leader is %d", ns, fl, l, n.leader.at(fl))
				}
			}
			for _, fl := range n.leader.keys() {
				l := n.leader.at(fl)
				if n.follower.at(l) != fl {
					t.Fatalf("namespace %q: %d leads %d, but its follower is %d", ns, l, fl, n.follower.at(l))
				}
			}
			hits, err := m.Query(ctx, Query{Text: "wedding speech training river", Namespace: ns, Mode: KeywordOnly, Neighbours: 2})
			require.NoError(t, err)
			for _, h := range hits {
				require.Equal(t, ns, h.Namespace, "a search of %q", ns)
			}
		}
	})
}

// twoLeaders returns (without its checksum) the turn index of m's ns0 with
// one more link, from a record that has no follower to one that has a
// leader already: the file of an index whose links do not agree.
func twoLeaders(f *testing.F, m *Memory) []byte {
	n := m.turnIdx().get("ns0", m)
	for _, l := range n.follower.keys() {
		fl := n.follower.at(l)
		for id := range fl {
			if _, ok := n.follower.get(id); !ok && n.parents[id] != nil {
				n.follower.set(id, fl)
				var buf bytes.Buffer
				w := bufio.NewWriter(&buf)
				require.NoError(f, m.writeTurns(w, []string{"ns0"}))
				require.NoError(f, w.Flush())
				n.follower.del(id)
				return buf.Bytes()[:buf.Len()-4]
			}
		}
	}
	f.Fatal("no record to give a second leader")
	return nil
}
