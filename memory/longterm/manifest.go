package longterm

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentmem/agentmem/internal/atomicfile"
)

// formatVersion is the version of the store layout written into the
// manifest and the snapshot metadata.
const formatVersion = 1

// formatFacts is the manifest's format of a store whose log holds records
// with validity or versions (recAddFacts, recSeen), which format 1 readers
// cannot read; the snapshot files keep formatVersion.
const formatFacts = 2

// Manifest is the content of a store directory's manifest.json. Both
// kinds of store (memory/short and memory/longterm) have this format.
type Manifest struct {
	Format   int    `json:"format"`   // the store layout version
	Embedder string `json:"embedder"` // the embedder's Name, e.g. "hash:512"
	Dim      int    `json:"dim"`
	// Backend is the vector backend spec the store's indexes are opened
	// with (vdb.Open), e.g. "inmem" or "faiss:HNSW32,Flat". A store
	// reopened with another spec rebuilds its vector indexes from the log
	// and records the new spec. (The previous release recorded only the
	// backend name the store was created with.)
	Backend string `json:"backend"`
	// Kind is the memory kind, "long" or "short"; empty in a store written
	// by the previous release, which made only long-term stores in this
	// format.
	Kind string `json:"kind,omitempty"`
}

// legacyShortFormat is the "format" of the previous release's short-term
// store manifest (segments.jsonl beside it); store.Migrate converts it.
const legacyShortFormat = `"agentmem.short"`

// ReadManifest reads the manifest of the store directory dir without
// opening (or locking) the store, e.g. to learn which embedder to open it
// with. A missing manifest is an error wrapping os.ErrNotExist; one of a
// newer format version, or a short-term store of the previous release that
// must be migrated first (`agentmem migrate`, store.Migrate), [ErrVersion];
// an undecodable one [ErrCorrupt].
func ReadManifest(dir string) (Manifest, error) {
	path := filepath.Join(dir, manifestFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return Manifest{}, fmt.Errorf("longterm: read manifest: %w", err)
	}
	// Check the format before anything else, so that a newer version gets
	// a version error rather than a confusing decode error.
	var head struct {
		Format json.RawMessage `json:"format"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Manifest{}, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	var format int
	if len(head.Format) == 0 {
		return Manifest{}, fmt.Errorf("%w: %s: no format version", ErrCorrupt, path)
	}
	if string(head.Format) == legacyShortFormat {
		return Manifest{}, fmt.Errorf("%w: %s is a short-term store of the previous release: convert it with `agentmem migrate --store %s` (or store.Migrate)",
			ErrVersion, dir, dir)
	}
	if err := json.Unmarshal(head.Format, &format); err != nil {
		return Manifest{}, fmt.Errorf("%w: %s: format %s is not a memory store's", ErrCorrupt, path, head.Format)
	}
	if format != formatVersion && format != formatFacts {
		return Manifest{}, fmt.Errorf("%w: %s: format %d, this build reads %d and %d", ErrVersion, path, format, formatVersion, formatFacts)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return Manifest{}, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	if m.Embedder == "" || m.Dim <= 0 {
		return Manifest{}, fmt.Errorf("%w: %s: embedder and dim are required", ErrCorrupt, path)
	}
	return m, nil
}

func writeManifest(dir string, m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("longterm: encode manifest: %w", err)
	}
	if err := atomicfile.WriteBytes(filepath.Join(dir, manifestFile), append(b, '\n')); err != nil {
		return fmt.Errorf("longterm: write manifest: %w", err)
	}
	return nil
}
