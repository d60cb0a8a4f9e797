package longterm

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/internal/atomicfile"
)

// VerifyReport is what [Verify] found in a store.
type VerifyReport struct {
	Dir string `json:"store"`
	// Opened says whether the store opened; Records is then how many live
	// records it holds. A store that does not open is described file by
	// file: Intact and Problems.
	Opened    bool  `json:"opened"`
	Records   int   `json:"records"`    // live records, as Open sees them
	LogBytes  int64 `json:"log_bytes"`  // length of the log's complete records
	LogFrames int   `json:"log_frames"` // records (adds and forgets) in the log
	LogFormat int   `json:"log_format"` // 1: the previous release's (no sequence numbers), or LogFormat
	// TornTail is the length of an incomplete last write at the end of the
	// log (a crash's; the next writer's Open trims it, keeping a copy).
	TornTail int64 `json:"torn_tail_bytes,omitempty"`
	// Leftovers are files of interrupted writes (the next writer's Open
	// removes them).
	Leftovers []string `json:"leftovers,omitempty"`
	// Intact says what was found sound, one line a file or part (the
	// manifest, the log, the snapshot).
	Intact []string `json:"intact,omitempty"`
	// Problems is every piece of damage found; empty for a sound store.
	Problems []string `json:"problems,omitempty"`
	// Warnings are what is wrong but loses nothing and makes no error: a
	// snapshot's keyword index that cannot be used (damaged, or written
	// with other keyword settings), which searches build from the records
	// instead and the next writer's Close rewrites.
	Warnings []string `json:"warnings,omitempty"`
}

// Verify checks the store in dir without writing to it or taking its lock:
// it opens it read-only (which checks the manifest, the snapshot files
// against their checksums and counts and the log records after it), reads
// the whole log again and checks that it holds exactly the records the
// snapshot and its tail give. A store that does not open for damage is
// checked file by file instead (the manifest, every record of the log,
// the snapshot whole), so that the report says what is intact and lists
// every problem, not the first. Any damage — including a torn log tail —
// is listed in the report and makes the error wrap ErrCorrupt (or is
// Open's error, e.g. ErrVersion or ErrEmbedderMismatch). A keyword index
// file that cannot be used is a warning, not damage: it is a cache.
func Verify(ctx context.Context, dir string, emb embed.Embedder, opts ...Option) (VerifyReport, error) {
	rep := VerifyReport{Dir: dir}
	opts = append(slices.Clone(opts), WithReadOnly())
	m, err := Open(ctx, dir, emb, opts...)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			rep.Problems = append(rep.Problems, err.Error())
			return rep, err
		}
		pm, perr := New(ctx, emb, opts...)
		if perr != nil {
			return rep, errors.Join(err, perr)
		}
		pm.dir = dir
		checkParts(ctx, pm, true, &rep)
		if len(rep.Problems) == 0 { // damage the file checks do not see
			rep.Problems = append(rep.Problems, err.Error())
		}
		return rep, rep.err()
	}
	defer m.Close()
	rep.Opened = true
	rep.Records = m.Len()
	if man, err := ReadManifest(dir); err == nil {
		rep.Intact = append(rep.Intact, fmt.Sprintf("manifest: %s (dim %d), %s-term, backend %s", man.Embedder, man.Dim, cmp.Or(man.Kind, KindLong), man.Backend))
	}
	if m.turnsUnused != nil {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("keyword index not used, built from the records instead (the next writer's close rewrites it): %v", m.turnsUnused))
	}
	rep.LogBytes = m.log.size
	rep.LogFormat = int(m.log.version)
	if m.log.torn > 0 {
		rep.TornTail = m.log.torn
		rep.Problems = append(rep.Problems, fmt.Sprintf("%s: torn tail: %d bytes at offset %d (%s); a writer's open trims it, keeping a copy in %s.broken",
			m.log.path, m.log.torn, m.log.size, m.log.tornWhy, m.log.path))
	}
	// Every record of the whole log, decoded (vectors checked, not indexed).
	live := map[string]bool{}
	f, err := os.Open(m.log.path)
	if err != nil {
		return rep, fmt.Errorf("longterm: verify: %w", err)
	}
	_, err = scanLog(f, m.log.path, 0, false, m.opts.logger, func(off int64, p []byte) error {
		rep.LogFrames++
		typ, body, err := decodeRecord(p)
		if err != nil {
			return err
		}
		if typ == recForget {
			id, err := decodeForget(body)
			if err != nil {
				return err
			}
			delete(live, id)
			return nil
		}
		if typ == recSeen {
			_, _, err := decodeSeen(body)
			return err
		}
		a, err := decodeAdd(typ, body)
		if err != nil {
			return err
		}
		if a.dim != m.dim {
			return fmt.Errorf("%w: record %q has vectors of dim %d, store has %d", ErrCorrupt, a.rec.ID, a.dim, m.dim)
		}
		live[a.rec.ID] = true
		return nil
	})
	f.Close()
	if err != nil {
		rep.Problems = append(rep.Problems, err.Error())
	} else {
		if m.log.torn == 0 {
			rep.Intact = append(rep.Intact, fmt.Sprintf("log: %d records, %d bytes", rep.LogFrames, rep.LogBytes))
		}
		var missing, extra []string
		m.mu.RLock()
		for id := range live {
			if m.parents[id] == nil {
				missing = append(missing, id)
			}
		}
		for id := range m.parents {
			if !live[id] {
				extra = append(extra, id)
			}
		}
		m.mu.RUnlock()
		if len(missing)+len(extra) > 0 {
			slices.Sort(missing)
			slices.Sort(extra)
			rep.Problems = append(rep.Problems, fmt.Sprintf("the snapshot and the log disagree: %d records only in the log %v, %d only in the snapshot %v",
				len(missing), firstFew(missing), len(extra), firstFew(extra)))
		}
	}
	entries, _ := os.ReadDir(dir)
	keep := ""
	if meta, _, _ := m.readSnapMeta(); meta != nil {
		keep = fmt.Sprintf("%s%06d.", snapPrefix, meta.Gen)
		rep.Intact = append(rep.Intact, fmt.Sprintf("snapshot: generation %d, %d memories, taken at log offset %d", meta.Gen, meta.Records, meta.LogOffset))
	} else {
		rep.Intact = append(rep.Intact, "snapshot: none (the log is replayed)")
	}
	for _, e := range entries {
		if isLeftover(e.Name(), keep) {
			rep.Leftovers = append(rep.Leftovers, e.Name())
		}
	}
	if len(rep.Problems) > 0 {
		return rep, fmt.Errorf("%w: %s: %s", ErrCorrupt, dir, strings.Join(rep.Problems, "; "))
	}
	return rep, nil
}

func firstFew(ids []string) []string {
	if len(ids) > 5 {
		return append(ids[:5:5], "…")
	}
	return ids
}

// isLeftover reports whether a file of a store directory was left by an
// interrupted write: a temporary file, an unfinished compaction's log, or
// a snapshot file of a generation other than the one whose file names
// start with keep ("" when there is no snapshot).
func isLeftover(name, keep string) bool {
	return (strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-")) ||
		name == logFileName+compactSuffix ||
		(strings.HasPrefix(name, snapPrefix) && (keep == "" || !strings.HasPrefix(name, keep)))
}

// readSnapMeta reads snapshot.json (nil without one).
func (m *Memory) readSnapMeta() (*snapMeta, []byte, error) {
	data, err := os.ReadFile(filepath.Join(m.dir, snapMetaFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var meta snapMeta
	if err := json.Unmarshal(data, &meta); err != nil {
		return nil, data, err
	}
	return &meta, data, nil
}

// RepairReport is what [Repair] did.
type RepairReport struct {
	Dir    string `json:"store"`
	Backup string `json:"backup"` // directory holding every file as it was
	// RecordsBefore is how many records the old snapshot said it held
	// (-1: no readable snapshot); RecordsAfter how many the store holds now.
	RecordsBefore int `json:"records_before"`
	RecordsAfter  int `json:"records_after"`
	// Dropped are the byte ranges of the log that held no intact record
	// and are not in the repaired log.
	Dropped []ByteRange `json:"dropped,omitempty"`
	// Lost are the ids of records the old snapshot held that the repaired
	// store does not (their text is in the backup's snapshot files).
	Lost []string `json:"lost,omitempty"`
	// Restored are the ids of records the old snapshot held that the log
	// had lost, put back from the snapshot (their chunks re-embedded).
	Restored []string `json:"restored,omitempty"`
	// Rebuilt names the files made anew: "manifest", "log", "snapshot".
	Rebuilt []string `json:"rebuilt"`
}

// ByteRange is a range of a file.
type ByteRange struct {
	Offset int64 `json:"offset"`
	Length int64 `json:"length"`
}

// Repair makes a damaged store in dir openable again, keeping everything it
// replaces: it takes the store's lock, checks that emb can have built the
// vectors the log holds (an embedder of another dimension is an error
// wrapping ErrEmbedderMismatch, and nothing is written), copies every file
// into a new directory dir/repair-TIMESTAMP, then keeps every intact record
// of the log (skipping damaged bytes to the next intact record, where Open
// would stop with ErrCorrupt), puts back the records the old snapshot holds
// that the log lost (deleted, cut short or replaced: their text and chunks
// are the snapshot's, their vectors re-embedded by emb), rewrites a
// missing, damaged or wrong manifest from emb and opts (a manifest that
// names another embedder than emb is taken to be wrong: the caller states
// the truth), drops the snapshot and rebuilds it from the log. The report
// says what was dropped: the log's damaged byte ranges and the ids of
// records the old snapshot held that the repaired store lacks. Repairing a
// sound store loses nothing (it rebuilds its snapshot).
func Repair(ctx context.Context, dir string, emb embed.Embedder, opts ...Option) (RepairReport, error) {
	rep := RepairReport{Dir: dir, RecordsBefore: -1}
	m, err := New(ctx, emb, opts...)
	if err != nil {
		return rep, err
	}
	if m.opts.store.readOnly {
		return rep, ErrReadOnly
	}
	m.dir = dir
	if _, err := os.Stat(dir); err != nil {
		return rep, fmt.Errorf("longterm: repair: %w", err)
	}
	lock, err := lockDir(ctx, dir, m.opts.store.lockWait, m.opts.logger)
	if err != nil {
		return rep, err
	}
	defer func() {
		if lock != nil {
			lock.Close()
		}
	}()

	// Everything that can refuse the repair is checked before the backup,
	// so that a refused repair leaves the store as it was and no backup.
	want := Manifest{Format: formatVersion, Embedder: emb.Name(), Dim: m.dim, Backend: m.opts.backend, Kind: m.opts.kind}
	got, gotErr := ReadManifest(dir)
	if errors.Is(gotErr, ErrVersion) {
		return rep, gotErr
	}
	if gotErr == nil {
		want.Format = got.Format // a rewritten manifest keeps the store's format
	}
	lpath := filepath.Join(dir, logFileName)
	data, err := os.ReadFile(lpath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return rep, fmt.Errorf("longterm: repair: %w", err)
	}
	logMissing := err != nil
	if err := m.checkRepairEmbedder(dir, data, got, gotErr); err != nil {
		return rep, err
	}
	// What the old snapshot held.
	old := map[string]*parent{}
	if meta, _, err := m.readSnapMeta(); err == nil && meta != nil {
		rep.RecordsBefore = meta.Records
		probe := &Memory{parents: map[string]*parent{}, children: map[int64]childRef{}}
		if probe.loadParents(filepath.Join(dir, meta.Parents)) == nil {
			old = probe.parents
		}
	}
	// The log: every intact record, and the snapshot's records it lost.
	dropped, payloads, rewrite := salvageLog(data, logMissing, m.dim)
	restore, restored, err := m.restoreFromSnapshot(ctx, old, payloads)
	if err != nil {
		return rep, err
	}
	rep.Dropped, rep.Restored = dropped, restored
	if len(restore) > 0 {
		payloads, rewrite = append(restore, payloads...), true
	}
	// A log that keeps records with validity or versions needs format 2,
	// also when the manifest that said so was lost.
	for _, p := range payloads {
		if len(p) > 0 && (p[0] == recAddFacts || p[0] == recAddSparseFacts || p[0] == recSeen) {
			want.Format = max(want.Format, formatFacts)
			break
		}
	}

	if rep.Backup, err = backupStore(dir); err != nil {
		return rep, err
	}
	if gotErr != nil || got.Embedder != want.Embedder || got.Dim != want.Dim || cmp.Or(got.Kind, KindLong) != want.Kind || got.Format != want.Format {
		if err := writeManifest(dir, want); err != nil {
			return rep, err
		}
		rep.Rebuilt = append(rep.Rebuilt, "manifest")
	}
	if rewrite {
		tmp := lpath + ".repair"
		_ = os.Remove(tmp)
		nl, err := createLog(tmp)
		if err != nil {
			return rep, err
		}
		if len(payloads) > 0 {
			if _, err := nl.append(payloads, true); err != nil {
				nl.close()
				return rep, err
			}
		}
		nl.close()
		if err := os.Rename(tmp, lpath); err != nil {
			return rep, fmt.Errorf("longterm: repair: %w", err)
		}
		rep.Rebuilt = append(rep.Rebuilt, "log")
	}

	// The snapshot: dropped (it is in the backup) and rebuilt from the log.
	entries, err := os.ReadDir(dir)
	if err != nil {
		return rep, fmt.Errorf("longterm: repair: %w", err)
	}
	for _, e := range entries {
		if n := e.Name(); n == snapMetaFile || isLeftover(n, "") {
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				return rep, fmt.Errorf("longterm: repair: %w", err)
			}
		}
	}
	if err := atomicfile.SyncDir(dir); err != nil {
		return rep, err
	}
	m.lock, lock = lock, nil // Close releases it
	if err := m.open(ctx, dir); err != nil {
		m.lock.Close()
		return rep, err
	}
	rep.RecordsAfter = m.Len()
	for id := range old {
		if _, ok := m.Get(id); !ok {
			rep.Lost = append(rep.Lost, id)
		}
	}
	slices.Sort(rep.Lost)
	m.snapshotOnClose = true
	if err := m.Close(); err != nil {
		return rep, err
	}
	if _, err := os.Stat(filepath.Join(dir, snapMetaFile)); err == nil {
		rep.Rebuilt = append(rep.Rebuilt, "snapshot")
	}
	return rep, nil
}

// backupStore copies every regular file of dir (but the lock) into a new
// directory dir/repair-TIMESTAMP and syncs it.
func backupStore(dir string) (string, error) {
	name := "repair-" + time.Now().UTC().Format("20060102T150405.000000000Z")
	bdir := filepath.Join(dir, name)
	if err := os.Mkdir(bdir, 0o755); err != nil {
		return "", fmt.Errorf("longterm: repair: backup: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("longterm: repair: backup: %w", err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == lockFileName {
			continue
		}
		if err := copyFile(filepath.Join(dir, e.Name()), filepath.Join(bdir, e.Name())); err != nil {
			return "", fmt.Errorf("longterm: repair: backup: %w", err)
		}
	}
	if err := atomicfile.SyncDir(bdir); err != nil {
		return "", err
	}
	return bdir, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// salvageLog reads the log data (missing: there is no log file) and
// returns the byte ranges that hold no intact record, the payloads of its
// intact records in order, and whether the log must be rewritten (damage,
// or a missing or headless log). A record is intact when both checksums
// match and it decodes, with vectors of dimension dim. In a format-2 log
// the intact records are put back in sequence order, and a record whose
// sequence number an earlier one already had (a repeated frame) is
// dropped; a gap in the sequence costs only the records that are gone.
func salvageLog(data []byte, missing bool, dim int) (dropped []ByteRange, payloads [][]byte, rewrite bool) {
	if missing {
		return nil, nil, true
	}
	s := logFrames(data, dim)
	badHeader := !(len(data) >= logHeaderSize && string(data[:6]) == logMagic &&
		(binary.LittleEndian.Uint16(data[6:]) == logVersion || binary.LittleEndian.Uint16(data[6:]) == logVersion1))
	return s.result(badHeader)
}

// salvaged is what salvageFrames kept of a log.
type salvaged struct {
	version uint16
	size    int64 // of the file
	frames  []salvagedFrame
	dropped []ByteRange
}

type salvagedFrame struct {
	seq     uint64
	off, n  int64 // the frame's offset and length
	payload []byte
}

// salvageFrames reads the frames of data (a whole log file, whose header is
// skipped) as format version, skipping damaged bytes to the next intact
// frame. dim 0 takes records of any dimension.
func salvageFrames(data []byte, version uint16, dim int) salvaged {
	size := int64(len(data))
	s := salvaged{version: version, size: size}
	hsize := int64(frameHeaderSize(version))
	intact := func(at int64) *salvagedFrame {
		if size-at < hsize {
			return nil
		}
		h, ok := parseFrameHeader(version, data[at:at+hsize])
		n := int64(h.n)
		if !ok || n > maxPayload || at+hsize+n > size {
			return nil
		}
		p := data[at+hsize : at+hsize+n]
		if crc32.Checksum(p, castagnoli) != h.sum {
			return nil
		}
		typ, body, err := decodeRecord(p)
		if err != nil {
			return nil
		}
		if isAdd(typ) {
			if a, err := decodeAdd(typ, body); err != nil || (dim != 0 && a.dim != dim) {
				return nil
			}
		} else if typ == recSeen {
			if _, _, err := decodeSeen(body); err != nil {
				return nil
			}
		} else if _, err := decodeForget(body); err != nil {
			return nil
		}
		return &salvagedFrame{seq: h.seq, off: at, n: hsize + n, payload: p}
	}
	off := int64(logHeaderSize)
	for off < size {
		if f := intact(off); f != nil {
			s.frames = append(s.frames, *f)
			off += f.n
			continue
		}
		next := off + 1
		for next < size && intact(next) == nil {
			next++
		}
		s.dropped = append(s.dropped, ByteRange{off, next - off})
		off = next
	}
	return s
}

// result returns salvageLog's answer for s: a damaged header (badHeader),
// dropped bytes or, in format 2, frames out of sequence make the log one
// to rewrite.
func (s salvaged) result(badHeader bool) ([]ByteRange, [][]byte, bool) {
	damaged := badHeader || len(s.dropped) > 0
	if badHeader {
		s.dropped = append([]ByteRange{{0, min(s.size, logHeaderSize)}}, s.dropped...)
	}
	frames := s.frames
	if s.version != logVersion1 {
		for i, f := range frames {
			if f.seq != uint64(i)+1 {
				damaged = true
				break
			}
		}
		if damaged {
			sorted := slices.Clone(frames)
			slices.SortStableFunc(sorted, func(a, b salvagedFrame) int { return cmp.Compare(a.seq, b.seq) })
			frames = nil
			for _, f := range sorted {
				if len(frames) > 0 && f.seq == frames[len(frames)-1].seq {
					s.dropped = append(s.dropped, ByteRange{f.off, f.n})
					continue
				}
				frames = append(frames, f)
			}
		}
	}
	slices.SortFunc(s.dropped, func(a, b ByteRange) int { return cmp.Compare(a.Offset, b.Offset) })
	payloads := make([][]byte, 0, len(frames))
	for _, f := range frames {
		payloads = append(payloads, f.payload)
	}
	if !damaged {
		return nil, payloads, false
	}
	return s.dropped, payloads, true
}
