package longterm

import (
	"fmt"

	"github.com/agentmem/agentmem/memory"
)

// Errors returned by package longterm; test them with errors.Is. They are
// the shared sentinels of package memory under the names this package has
// always used, wrapped with facts (the file, the offset, the id).
var (
	// ErrEmptyText: a record's text is empty, only white space, or has no
	// letter or digit to index.
	ErrEmptyText = memory.ErrEmptyText
	// ErrInvalidUTF8: a record's text, id, namespace, speaker or a tag is not
	// valid UTF-8. Records are refused rather than repaired, so that what is
	// stored is exactly what the caller sent (repair it with
	// strings.ToValidUTF8 before Add if that is wanted). Queries, which are
	// not stored, are repaired instead. It wraps [memory.ErrInvalidArgument].
	ErrInvalidUTF8 = fmt.Errorf("%w: invalid UTF-8", memory.ErrInvalidArgument)
	// ErrNotFound: Forget was given an id that is not stored.
	ErrNotFound = memory.ErrNotFound
	// ErrEmbedderMismatch: a store was opened with another embedder (name or
	// dimension) than the one that built it. Open it with the embedder the
	// error names, or start a new store.
	ErrEmbedderMismatch = memory.ErrEmbedderMismatch
	// ErrCorrupt: a store file is damaged somewhere other than a torn tail
	// of the log. The error names the file and the offset; nothing is
	// modified.
	ErrCorrupt = memory.ErrCorrupt
	// ErrVersion: a store file has a format version this build cannot read.
	ErrVersion = memory.ErrVersion
	// ErrClosed: the memory was used after Close.
	ErrClosed = memory.ErrClosed
	// ErrInvalidQuery: a Query has a bad field (negative K, unknown Mode,
	// To before From). It is [memory.ErrInvalidArgument].
	ErrInvalidQuery = memory.ErrInvalidArgument
	// ErrInvalidOption: an option's value is out of range. It is
	// [memory.ErrInvalidArgument].
	ErrInvalidOption = memory.ErrInvalidArgument
	// ErrLocked: the store directory is open in another process (or by
	// another Memory in this one). Close that one first.
	ErrLocked = memory.ErrLocked
	// ErrNotDurable: Compact or Snapshot was called on a memory that has no
	// directory (made by New rather than Open). It wraps
	// [memory.ErrUnsupported].
	ErrNotDurable = fmt.Errorf("%w: memory has no store directory", memory.ErrUnsupported)
)
