package store

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/agentmem/agentmem/internal/redact"
	"github.com/agentmem/agentmem/memory"
)

// Targets: what a program may point the store opener at.
//
// A target is a store directory, or a PostgreSQL URL (postgres:// or
// postgresql://). Anything else with "://" is refused, so that a URL of a
// kind this build does not open (mysql://, s3://) or a mistyped one never
// becomes a directory named after it, password included.

// TargetForms names the targets [OpenURL] accepts, for error messages.
const TargetForms = "a store directory or a PostgreSQL URL (postgres://user@host/db?schema=NAME, or postgresql://…)"

// CheckTarget returns nil for a target [OpenURL] opens: a PostgreSQL URL,
// or a directory name without "://". Any other URL is an error wrapping
// memory.ErrInvalidArgument that names the accepted forms (and the target
// without its password).
func CheckTarget(target string) error {
	if IsURL(target) {
		return nil
	}
	i := strings.Index(target, "://")
	if i < 0 {
		return nil
	}
	if scheme := target[:i]; schemeRE.MatchString(scheme) {
		return fmt.Errorf("store: %w: %s: no store of scheme %q: want %s", memory.ErrInvalidArgument, Redact(target), scheme, TargetForms)
	}
	return fmt.Errorf("store: %w: %s: a store directory's name cannot hold \"://\": want %s", memory.ErrInvalidArgument, Redact(target), TargetForms)
}

// schemeRE matches a URL scheme (RFC 3986).
var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)

// checkDir refuses a URL where a store directory is wanted (Open, Verify,
// Repair, Migrate of a directory), so that none is created under a URL's
// name; op says what applies to directories only.
func checkDir(target, op string) error {
	if err := CheckTarget(target); err != nil {
		return err
	}
	if IsURL(target) {
		return fmt.Errorf("store: %w: %s applies to store directories, not to a PostgreSQL store (%s)", memory.ErrInvalidArgument, op, Redact(target))
	}
	return nil
}

// Redacted is what Redact puts in place of a password.
const Redacted = redact.Redacted

// Redact returns target (a store directory, a store URL, or a backend
// spec holding one, such as "pgvector:postgres://…") with any password
// replaced by Redacted: the one in a URL's user information
// (postgres://user:xxxxx@host/db) and a password=… parameter. A target
// without one is returned as it is. Everything that prints a target or
// wraps it into an error goes through Redact.
func Redact(target string) string { return redact.URL(target) }

// redactError returns err with every password of target replaced by
// Redacted in its message (errors.Is and errors.As still see err); err
// itself when its message holds none.
func redactError(err error, target string) error { return redact.Error(err, target) }
