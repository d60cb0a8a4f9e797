package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/agentmem/agentmem/memory"
)

// Error codes: the "code" of every error the HTTP API answers with, and the
// prefix of every MCP tool error. They are stable; the message is not.
const (
	CodeInvalidArgument  = "invalid_argument"   // 400: a field is missing, malformed or out of range
	CodeBadJSON          = "bad_json"           // 400: the body is not the JSON the route takes
	CodeUnauthorized     = "unauthorized"       // 401: no or an unknown bearer token
	CodeForbidden        = "forbidden"          // 403: the token is pinned to another namespace
	CodeReadOnly         = "read_only"          // 403: the server was started with --read-only
	CodeNotFound         = "not_found"          // 404: no memory (or route) with that id (or path)
	CodeMethodNotAllowed = "method_not_allowed" // 405
	CodeTooLarge         = "too_large"          // 413: the body or a batch exceeds its limit
	CodeSuperseded       = "superseded"         // 409: the memory to update was superseded meanwhile (read its history)
	CodeDuplicate        = "duplicate"          // 409: the store refuses near-duplicates, and this is one
	CodeUnsupported      = "unsupported"        // 501: the store cannot do this
	CodeUnavailable      = "unavailable"        // 503: the store is closed (the server is stopping) or its database cannot be reached; see Retry-After
	CodeCanceled         = "canceled"           // 499/504: the request was canceled or timed out
	CodeInternal         = "internal"           // 500: anything else (logged)
)

// Error is the body of every error answer of the HTTP API:
// {"error": {"code": "not_found", "message": "…"}}.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// errorBody wraps Error as the API sends it.
type errorBody struct {
	Error Error `json:"error"`
}

// apiError is an error with a code and status decided where it arose
// (authorisation, routing), not by sentinel.
type apiError struct {
	status int
	code   string
	msg    string
}

func (e *apiError) Error() string { return e.code + ": " + e.msg }

var (
	errForbidden = &apiError{http.StatusForbidden, CodeForbidden, "this token may not use that namespace"}
	errReadOnly  = &apiError{http.StatusForbidden, CodeReadOnly, "the server is read-only"}
)

// RetryAfter is the Retry-After (in seconds) of a 503 unavailable answer,
// and the wait an MCP tool's unavailable error suggests: the store's
// database was unreachable, and a pool reconnects on the next call once
// it is back.
const RetryAfter = 2

// classify maps err to an HTTP status and a stable code, by the library's
// sentinels: not found → 404, invalid input → 400, closed or unreachable
// → 503, …
func classify(err error) (status int, code string) {
	var ae *apiError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &ae):
		return ae.status, ae.code
	case errors.As(err, &mbe), errors.Is(err, memory.ErrTooLarge):
		return http.StatusRequestEntityTooLarge, CodeTooLarge
	case errors.Is(err, memory.ErrNotFound):
		return http.StatusNotFound, CodeNotFound
	case errors.Is(err, memory.ErrSuperseded):
		return http.StatusConflict, CodeSuperseded
	case errors.Is(err, memory.ErrDuplicate):
		return http.StatusConflict, CodeDuplicate
	case errors.Is(err, memory.ErrInvalidArgument), errors.Is(err, memory.ErrEmptyText):
		return http.StatusBadRequest, CodeInvalidArgument
	case errors.Is(err, memory.ErrClosed), errors.Is(err, memory.ErrUnavailable):
		return http.StatusServiceUnavailable, CodeUnavailable
	case errors.Is(err, memory.ErrUnsupported), errors.Is(err, errors.ErrUnsupported):
		return http.StatusNotImplemented, CodeUnsupported
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout, CodeCanceled
	case errors.Is(err, context.Canceled):
		return 499, CodeCanceled // the client went away; nginx's code
	}
	return http.StatusInternalServerError, CodeInternal
}

// toolError is the error an MCP tool returns: the code first, so that a
// model (and a test) can tell a missing memory from a bad argument.
func toolError(err error) error {
	status, code := classify(err)
	var ae *apiError
	if errors.As(err, &ae) {
		return fmt.Errorf("%s: %s", code, ae.msg)
	}
	if status == http.StatusServiceUnavailable {
		// What Retry-After says over HTTP.
		return fmt.Errorf("%s (retry in %d s): %w", code, RetryAfter, err)
	}
	return fmt.Errorf("%s: %w", code, err)
}
