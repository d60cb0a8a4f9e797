// Package embederr holds the sentinel errors of package embed, so that the
// built-in embedders (embed/hash, embed/ollama), which package embed imports,
// can return them too. Callers use the names re-exported by package embed.
package embederr

import "errors"

// The sentinels; package embed documents each under its exported name.
var (
	// EmptyText is embed.ErrEmptyText.
	EmptyText = errors.New("embed: empty text")
	// UnknownScheme is embed.ErrUnknownScheme.
	UnknownScheme = errors.New("embed: unknown scheme")
	// BadSpec is embed.ErrBadSpec.
	BadSpec = errors.New("embed: malformed spec")
	// Dimension is embed.ErrDimension.
	Dimension = errors.New("embed: dimension mismatch")
	// ModelNotFound is embed.ErrModelNotFound.
	ModelNotFound = errors.New("embed: model not found")
	// Unreachable is embed.ErrUnreachable.
	Unreachable = errors.New("embed: server unreachable")
)
