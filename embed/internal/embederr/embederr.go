// Package embederr holds the sentinel errors of package embed, so that the
// built-in embedders (embed/hash, embed/ollama), which package embed imports,
// can return them too. Callers use the names re-exported by package embed.
package embederr

import "errors"

var (
	EmptyText     = errors.New("embed: empty text")
	UnknownScheme = errors.New("embed: unknown scheme")
	BadSpec       = errors.New("embed: malformed spec")
	Dimension     = errors.New("embed: dimension mismatch")
	ModelNotFound = errors.New("embed: model not found")
	Unreachable   = errors.New("embed: server unreachable")
)
