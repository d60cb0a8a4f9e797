// Package redact takes passwords out of what agentmem prints: store URLs,
// backend specs and errors that may quote them. store.Redact,
// memory/postgres and vdb/pgvector share it, so that every way in to a
// PostgreSQL URL redacts it the same way.
package redact

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// Redacted is what URL puts in place of a password.
const Redacted = "xxxxx"

var passwordParam = regexp.MustCompile(`(?i)(\bpassword=)[^&\s#]*`)

// URL returns target (a store directory, a store URL, or a backend
// spec holding one, such as "pgvector:postgres://…") with any password
// replaced by Redacted: the one in a URL's user information
// (postgres://user:xxxxx@host/db) and a password=… parameter. A target
// without one is returned as it is. Everything that prints a target or
// wraps it into an error goes through URL.
func URL(target string) string {
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
// different, decoded), for Error; those shorter than
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

// minRedactedLen is the shortest password Error looks for in a
// message: replacing every "a" or "db" of a message would leave nothing
// readable. (No message we know of holds the password: pgx redacts the
// URLs it quotes, and we name a server by URL's answer or host, port,
// user and database.)
const minRedactedLen = 4

// Error returns err with every password of target replaced by Redacted
// in its message (errors.Is and errors.As still see err); err itself when
// its message holds none. A password with an unescaped "@" makes the
// driver take its end for the host, which then shows in every message:
// the error then says only that.
func Error(err error, target string) error {
	if err == nil {
		return nil
	}
	if start, at, colon := userInfo(target); colon >= 0 && strings.Contains(target[start+colon+1:start+at], "@") {
		// The driver's own redaction stops at the first "@" and shows
		// the rest: say only what is wrong.
		return &redactedError{msg: fmt.Sprintf("%s: the password holds an unescaped \"@\": percent-encode it (%%40)", URL(target)), err: err}
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
