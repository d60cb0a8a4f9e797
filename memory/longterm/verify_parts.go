package longterm

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// VerifyFiles checks the files of the store directory dir one by one,
// without an embedder, opening or locking the store: the manifest, every
// record of the log (its checksums, its sequence, its vectors' dimension
// against the manifest's), the snapshot's metadata and records (not its
// vector files, which need the embedder's dimension and the backend) and
// that the log is the one the snapshot was taken from. It is [Verify]'s
// fallback for a store that does not open, e.g. one whose manifest is
// missing or damaged: the report lists what is intact and every problem.
// Any problem makes the error wrap ErrCorrupt.
func VerifyFiles(ctx context.Context, dir string) (VerifyReport, error) {
	rep := VerifyReport{Dir: dir}
	probe := &Memory{dir: dir, parents: map[string]*parent{}, children: map[int64]childRef{}}
	checkParts(ctx, probe, false, &rep)
	return rep, rep.err()
}

// err is the error of a report: nil without problems, else one wrapping
// ErrCorrupt that lists them.
func (rep *VerifyReport) err() error {
	if len(rep.Problems) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s: %s", ErrCorrupt, rep.Dir, strings.Join(rep.Problems, "; "))
}

// checkParts checks each file of the store in m.dir on its own and adds
// what is intact and every problem to rep (see [VerifyFiles]). With
// vectors, m was made by New with the store's embedder and options and
// the snapshot is loaded whole, vector files included (m's indexes are
// closed afterwards); without, only the snapshot's records are read.
func checkParts(ctx context.Context, m *Memory, vectors bool, rep *VerifyReport) {
	dir := m.dir
	problem := func(format string, args ...any) { rep.Problems = append(rep.Problems, fmt.Sprintf(format, args...)) }
	intact := func(format string, args ...any) { rep.Intact = append(rep.Intact, fmt.Sprintf(format, args...)) }

	man, err := ReadManifest(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		problem("%s: missing", filepath.Join(dir, manifestFile))
	case err != nil:
		problem("%v", err)
	default:
		intact("manifest: %s (dim %d), %s-term, backend %s", man.Embedder, man.Dim, cmp.Or(man.Kind, KindLong), man.Backend)
	}

	lpath := filepath.Join(dir, logFileName)
	data, err := os.ReadFile(lpath)
	logOK := err == nil
	switch {
	case errors.Is(err, os.ErrNotExist):
		problem("%s: missing", lpath)
	case err != nil:
		problem("%s: %v", lpath, err)
	default:
		n := len(rep.Problems)
		checkLogParts(data, lpath, man.Dim, rep)
		if len(rep.Problems) == n {
			intact("log: %d records, %d bytes", rep.LogFrames, rep.LogBytes)
		} else {
			intact("log: %d intact records in %d bytes, and the damage listed", rep.LogFrames, rep.LogBytes)
		}
	}

	meta, _, err := m.readSnapMeta()
	switch {
	case err != nil:
		problem("%s: %v", filepath.Join(dir, snapMetaFile), err)
		return
	case meta == nil:
		intact("snapshot: none (the log is replayed)")
		return
	}
	n := len(rep.Problems)
	if vectors {
		if _, loaded, err := m.loadSnapshot(ctx); err != nil {
			problem("%v", err)
		} else if loaded {
			intact("snapshot: %d memories, %d chunks with their vectors (generation %d)", len(m.parents), len(m.children), meta.Gen)
		} else {
			intact("snapshot: of backend %s, not read (the indexes are rebuilt from the log)", meta.Backend)
		}
		m.closeIndexes()
	} else if err := m.loadParents(filepath.Join(dir, meta.Parents)); err != nil {
		problem("snapshot: %v", err)
	} else if len(m.parents) != meta.Records {
		problem("snapshot: %s holds %d records, %s says %d", meta.Parents, len(m.parents), snapMetaFile, meta.Records)
	} else {
		intact("snapshot: %d memories (generation %d; its vector files were not checked)", len(m.parents), meta.Gen)
	}
	if logOK && len(rep.Problems) == n {
		if _, err := m.resolveLog(meta); err != nil {
			problem("%v", err)
		}
	}
}

// checkLogParts checks every frame of a whole log file: its header, the
// bytes that hold no intact record, the sequence of a format-2 log and,
// with dim > 0, the dimension of every record's vectors.
func checkLogParts(data []byte, path string, dim int, rep *VerifyReport) {
	s := logFrames(data, 0)
	rep.LogFrames, rep.LogBytes, rep.LogFormat = len(s.frames), int64(len(data)), int(s.version)
	if !(len(data) >= logHeaderSize && string(data[:6]) == logMagic) {
		rep.Problems = append(rep.Problems, fmt.Sprintf("%s: bytes 0-%d: no log header", path, min(len(data), logHeaderSize)))
	} else if v := binary.LittleEndian.Uint16(data[6:]); v != logVersion && v != logVersion1 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("%s: log format %d, this build reads %d", path, v, logVersion))
	}
	for _, r := range s.dropped {
		rep.Problems = append(rep.Problems, fmt.Sprintf("%s: bytes %d-%d (%d bytes) hold no intact record", path, r.Offset, r.Offset+r.Length, r.Length))
	}
	if s.version != logVersion1 {
		// Records repeated or out of order; a gap is news only where no
		// damaged bytes explain it.
		prev := uint64(0)
		for _, f := range s.frames {
			if f.seq <= prev || (f.seq != prev+1 && len(s.dropped) == 0) {
				rep.Problems = append(rep.Problems, fmt.Sprintf("%s: offset %d: record number %d after %d (records missing, repeated or out of order)", path, f.off, f.seq, prev))
				break
			}
			prev = f.seq
		}
	}
	if dim <= 0 {
		return
	}
	other, odim := 0, 0
	for _, f := range s.frames {
		if typ, body, err := decodeRecord(f.payload); err == nil && isAdd(typ) {
			if a, err := decodeAdd(typ, body); err == nil && a.dim != dim {
				other, odim = other+1, a.dim
			}
		}
	}
	if other > 0 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("%s: %d records have vectors of dim %d, the manifest says %d", path, other, odim, dim))
	}
}
