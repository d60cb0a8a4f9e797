package window

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/agentmem/agentmem/internal/atomicfile"
)

// StateVersion is the format version [SaveFile] writes.
const StateVersion = 1

// stateFile is the JSON document SaveFile writes.
type stateFile struct {
	Version int         `json:"version"`
	Window  *State      `json:"window,omitempty"`
	Track   *TrackState `json:"track,omitempty"`
}

// SaveFile writes the contents of w and t (either may be nil) to path as one
// JSON document, atomically: after a crash the file holds the old or the new
// state, never a mix. Take no other locks while calling it: it reads w and t
// one after the other, each under its own lock.
func SaveFile(path string, w *Window, t *Track) error {
	f := stateFile{Version: StateVersion}
	if w != nil {
		s := w.State()
		f.Window = &s
	}
	if t != nil {
		s := t.State()
		f.Track = &s
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("window: encode state: %w", err)
	}
	if err := atomicfile.WriteBytes(path, append(data, '\n')); err != nil {
		return fmt.Errorf("window: save state: %w", err)
	}
	return nil
}

// LoadFile restores w and t (either may be nil) from a file written by
// [SaveFile]. A missing file is an error that errors.Is matches with
// fs.ErrNotExist (a new agent starts empty); a file of a newer version wraps
// [ErrVersion]; one that does not decode (or has no version) wraps
// [ErrCorrupt] and names the file. Nothing is restored unless the whole file is valid.
func LoadFile(path string, w *Window, t *Track) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("window: load state: %w", err)
	}
	// The version first, before trusting anything else in the file.
	var v struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("window: load state %s: %w: %w", path, ErrCorrupt, err)
	}
	switch {
	case v.Version > StateVersion:
		return fmt.Errorf("window: load state %s: version %d, this build reads %d (upgrade agentmem): %w", path, v.Version, StateVersion, ErrVersion)
	case v.Version < 1:
		return fmt.Errorf("window: load state %s: %w: version %d", path, ErrCorrupt, v.Version)
	}
	var f stateFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("window: load state %s: %w: %w", path, ErrCorrupt, err)
	}
	// Validate both parts before changing either.
	if f.Window != nil && w != nil {
		probe, _ := New(WithMaxRounds(max(len(f.Window.Rounds), 1)), WithMaxTokens(1<<30))
		if err := probe.Restore(*f.Window); err != nil {
			return fmt.Errorf("window: load state %s: %w: %w", path, ErrCorrupt, err)
		}
	}
	if f.Track != nil && t != nil {
		probe, _ := NewTrack()
		if err := probe.Restore(*f.Track); err != nil {
			return fmt.Errorf("window: load state %s: %w: %w", path, ErrCorrupt, err)
		}
	}
	if f.Window != nil && w != nil {
		if err := w.Restore(*f.Window); err != nil {
			return fmt.Errorf("window: load state %s: %w: %w", path, ErrCorrupt, err)
		}
	}
	if f.Track != nil && t != nil {
		if err := t.Restore(*f.Track); err != nil {
			return fmt.Errorf("window: load state %s: %w: %w", path, ErrCorrupt, err)
		}
	}
	return nil
}
