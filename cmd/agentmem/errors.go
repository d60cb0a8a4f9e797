package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/memory"
)

// Error codes: the "code" of the JSON object a command run with --json
// prints on standard error when it fails. They are stable; the message is
// not. Where they mean the same they are the HTTP API's (server.Code…).
const (
	codeUsage            = "usage"             // exit 2: bad flags or arguments
	codeNotFound         = "not_found"         // no store there, or no memory with that id
	codeInvalidArgument  = "invalid_argument"  // input the store refuses (empty, invalid UTF-8, out of range)
	codeTooLarge         = "too_large"         // a memory or a line above --max-record-bytes
	codeCorrupt          = "corrupt"           // a damaged store (agentmem verify, agentmem repair)
	codeVersion          = "version"           // a store of a format this build does not read
	codeEmbedderMismatch = "embedder_mismatch" // the store was built by another embedder
	codeLocked           = "locked"            // another process writes to the store
	codeUnsupported      = "unsupported"       // the store or this build cannot do it
	codeCanceled         = "canceled"          // interrupted or timed out
	codeFailure          = "failure"           // anything else
)

// errorCode returns the stable code of a failed command's error.
func errorCode(err error, usage bool) string {
	switch {
	case errors.Is(err, memory.ErrEmbedderMismatch):
		return codeEmbedderMismatch
	case errors.Is(err, memory.ErrTooLarge):
		return codeTooLarge
	case usage:
		return codeUsage
	case errors.Is(err, memory.ErrCorrupt):
		return codeCorrupt
	case errors.Is(err, memory.ErrVersion):
		return codeVersion
	case errors.Is(err, memory.ErrLocked):
		return codeLocked
	case errors.Is(err, memory.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return codeNotFound
	case errors.Is(err, memory.ErrInvalidArgument), errors.Is(err, memory.ErrEmptyText):
		return codeInvalidArgument
	case errors.Is(err, memory.ErrUnsupported), errors.Is(err, errors.ErrUnsupported):
		return codeUnsupported
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return codeCanceled
	}
	return codeFailure
}

// writeJSONError prints err as one JSON object on one line, in the HTTP
// API's shape: {"error": {"code": "not_found", "message": "…"}}.
func writeJSONError(w io.Writer, err error, usage bool) {
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	body.Error.Code, body.Error.Message = errorCode(err, usage), err.Error()
	_ = json.NewEncoder(w).Encode(body)
}

// jsonOut reports whether the run asked for JSON: the parsed --json flag,
// or, when parsing failed before it was read, the last --json among the
// arguments before "--".
func jsonOut(root *cobra.Command, args []string) bool {
	if f := root.PersistentFlags().Lookup("json"); f != nil && f.Changed {
		return f.Value.String() == "true"
	}
	on := false
	for _, a := range args {
		switch {
		case a == "--":
			return on
		case a == "--json":
			on = true
		case strings.HasPrefix(a, "--json="):
			v, err := strconv.ParseBool(strings.TrimPrefix(a, "--json="))
			on = err == nil && v
		}
	}
	return on
}

// notFoundError marks an error whose code is not_found though it wraps no
// sentinel (a store directory that is not there, said in the CLI's words).
type notFoundError struct{ err error }

func (e notFoundError) Error() string        { return e.err.Error() }
func (e notFoundError) Unwrap() error        { return e.err }
func (e notFoundError) Is(target error) bool { return target == fs.ErrNotExist }

// reworded is an error said in other words than its chain's, which it
// still wraps (for errors.Is and the --json code).
type reworded struct {
	msg string
	err error
}

func (e reworded) Error() string { return e.msg }
func (e reworded) Unwrap() error { return e.err }
