package longterm

import "errors"

// Errors returned by package longterm; test them with errors.Is. They are
// wrapped with facts (the file, the offset, the id).
var (
	// ErrEmptyText: a record's text is empty or only white space.
	ErrEmptyText = errors.New("longterm: empty text")
	// ErrInvalidUTF8: a record's text, id, namespace, speaker or a tag is not
	// valid UTF-8. Records are refused rather than repaired, so that what is
	// stored is exactly what the caller sent (repair it with
	// strings.ToValidUTF8 before Add if that is wanted). Queries, which are
	// not stored, are repaired instead.
	ErrInvalidUTF8 = errors.New("longterm: invalid UTF-8")
	// ErrNotFound: Forget was given an id that is not stored.
	ErrNotFound = errors.New("longterm: no such memory")
	// ErrEmbedderMismatch: a store was opened with another embedder (name or
	// dimension) than the one that built it. Open it with the embedder the
	// error names, or start a new store.
	ErrEmbedderMismatch = errors.New("longterm: store was built by another embedder")
	// ErrCorrupt: a store file is damaged somewhere other than a torn tail
	// of the log. The error names the file and the offset; nothing is
	// modified.
	ErrCorrupt = errors.New("longterm: corrupt store")
	// ErrVersion: a store file has a format version this build cannot read.
	ErrVersion = errors.New("longterm: unsupported store format version")
	// ErrClosed: the memory was used after Close.
	ErrClosed = errors.New("longterm: memory is closed")
	// ErrInvalidQuery: a Query has a bad field (negative K, unknown Mode,
	// To before From).
	ErrInvalidQuery = errors.New("longterm: invalid query")
	// ErrLocked: the store directory is open in another process (or by
	// another Memory in this one). Close that one first.
	ErrLocked = errors.New("longterm: store is in use by another process")
	// ErrNotDurable: Compact or Snapshot was called on a memory that has no
	// directory (made by New rather than Open).
	ErrNotDurable = errors.New("longterm: memory has no store directory")
)
