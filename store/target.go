package store

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

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
const Redacted = "xxxxx"

var passwordParam = regexp.MustCompile(`(?i)(\bpassword=)[^&\s#]*`)

// Redact returns target (a store directory, a store URL, or a backend
// spec holding one, such as "pgvector:postgres://…") with any password
// replaced by Redacted: the one in a URL's user information
// (postgres://user:xxxxx@host/db) and a password=… parameter. A target
// without one is returned as it is. Everything that prints a target or
// wraps it into an error goes through Redact.
func Redact(target string) string {
	if start, at, colon := userInfo(target); colon >= 0 {
		target = target[:start+colon+1] + Redacted + target[start+at:]
	}
	return passwordParam.ReplaceAllString(target, "${1}"+Redacted)
}

// userInfo finds a URL's user information: it starts at start, after
// "://", and ends at start+at, at an "@"; colon is the offset from start
// of the ":" before the password, or -1 for none (also when there is no
// "://" or no "@"). The "@" is the last one before the query, or, when
// there is none, the last one of all: a password that a careless URL
// leaves unescaped may hold "/", "?", "#" or "@", and redacting too much
// is better than showing part of it. The ":" must come before the first
// "/", "?" or "#" (in the authority).
func userInfo(target string) (start, at, colon int) {
	i := strings.Index(target, "://")
	if i < 0 {
		return 0, 0, -1
	}
	start = i + len("://")
	rest := target[start:]
	at = -1
	if end := strings.IndexAny(rest, "?#"); end >= 0 {
		at = strings.LastIndex(rest[:end], "@")
	}
	if at < 0 {
		at = strings.LastIndex(rest, "@")
	}
	colon = strings.Index(rest, ":")
	if at < 0 || colon < 0 || colon > at {
		return start, 0, -1
	}
	if auth := strings.IndexAny(rest, "/?#"); auth >= 0 && auth < colon {
		return start, 0, -1
	}
	return start, at, colon
}

// passwords returns the passwords target holds (as written and, when
// different, decoded), for redactError; those shorter than
// minRedactedLen are left out.
func passwords(target string) []string {
	var out []string
	add := func(p string) {
		if len(p) < minRedactedLen {
			return
		}
		out = append(out, p)
		if dec, err := url.PathUnescape(p); err == nil && dec != p {
			out = append(out, dec)
		}
	}
	if start, at, colon := userInfo(target); colon >= 0 {
		add(target[start+colon+1 : start+at])
	}
	for _, m := range passwordParam.FindAllStringIndex(target, -1) {
		_, pw, _ := strings.Cut(target[m[0]:m[1]], "=")
		add(pw)
	}
	return out
}

// minRedactedLen is the shortest password redactError looks for in a
// message: replacing every "a" or "db" of a message would leave nothing
// readable. (No message we know of holds the password: pgx redacts the
// URLs it quotes, and we name a server by Redact's URL or host, port,
// user and database.)
const minRedactedLen = 4

// redactError returns err with every password of target replaced by
// Redacted in its message (errors.Is and errors.As still see err); err
// itself when its message holds none.
func redactError(err error, target string) error {
	if err == nil {
		return nil
	}
	if start, at, colon := userInfo(target); colon >= 0 && strings.Contains(target[start+colon+1:start+at], "@") {
		// The driver's own redaction stops at the first "@" and shows
		// the rest: say only what is wrong.
		return &redactedError{msg: fmt.Sprintf("store: %s: the password holds an unescaped \"@\": percent-encode it (%%40)", Redact(target)), err: err}
	}
	msg := err.Error()
	red := msg
	for _, pw := range passwords(target) {
		red = strings.ReplaceAll(red, pw, Redacted)
	}
	if red == msg {
		return err
	}
	return &redactedError{msg: red, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
