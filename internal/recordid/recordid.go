// Package recordid generates the ids of memories written without one, the
// same way in every store and in the server.
package recordid

import (
	"crypto/rand"
	"encoding/hex"
)

// New returns a generated memory id: 24 random hex digits.
func New() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
