package pgvector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentmem/agentmem/internal/errs"
	"github.com/agentmem/agentmem/vdb"
)

var (
	// ErrUnavailable: the server could not be reached (down, wrong host or
	// port, unknown database, authentication refused) or the connection was
	// lost during a call. Errors wrapping it name the DSN without its
	// password. Nothing of a failed Add was stored, except when the
	// connection broke while the COMMIT was in flight; Add is an upsert, so
	// retrying it is always safe. It is memory.ErrUnavailable, so that
	// one errors.Is covers every layer.
	ErrUnavailable = errs.Unavailable
	// ErrNoExtension: the server lacks the pgvector extension, or the
	// database lacks it and the user may not create it. The error says how
	// to install it.
	ErrNoExtension = errors.New("pgvector: the vector extension is missing")
)

// Connection-level SQLSTATE classes and codes: the server went away or
// refused the session.
func connLost(code string) bool {
	switch code {
	case "57P01", "57P02", "57P03", // admin_shutdown (pg_terminate_backend), crash_shutdown, cannot_connect_now
		"3D000",          // invalid_catalog_name: no such database
		"28000", "28P01": // authorization
		return true
	}
	return strings.HasPrefix(code, "08") // connection_exception
}

// hint says what to do about a connection failure.
func hint(code string) string {
	switch code {
	case "3D000":
		return "create the database (createdb NAME, or CREATE DATABASE) or fix dbname in the DSN"
	case "28000", "28P01":
		return "check user and password in the DSN and the server's pg_hba.conf"
	case "57P01", "57P02":
		return "the server ended the session (terminated or restarting); nothing of the failed call was committed unless it failed in COMMIT, and retrying is safe"
	}
	return "check that the server is running and that host, port and dbname in the DSN are right; retrying is safe"
}

// wrap turns a driver error into the package's: context errors stay context
// errors, connection failures wrap ErrUnavailable with the DSN, other server
// errors carry the operation.
func (db *DB) wrap(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	if db.closed.Load() {
		// Close raced with the call and closed the pool under it.
		return fmt.Errorf("pgvector: %s: %w (%v)", op, vdb.ErrClosed, err)
	}
	return wrapErr(ctx, db.dsn, op, err)
}

func wrapErr(ctx context.Context, dsn, op string, err error) error {
	err = tidyConnectError(err)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("pgvector: %s: %w", op, err)
	}
	if cerr := ctx.Err(); cerr != nil {
		// The driver closed the connection because the context ended.
		return fmt.Errorf("pgvector: %s: %w (%v)", op, cerr, err)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		if connLost(pe.Code) {
			return fmt.Errorf("pgvector: %s on %s: PostgreSQL %w: %w (%s)", op, dsn, ErrUnavailable, err, hint(pe.Code))
		}
		return fmt.Errorf("pgvector: %s: %w", op, err)
	}
	if connectionGone(err) {
		return fmt.Errorf("pgvector: %s on %s: PostgreSQL %w: %w (%s)", op, dsn, ErrUnavailable, err, hint(""))
	}
	// Not the server and not the connection: the client's own mistake
	// (a row that does not scan into its destination, a value pgx cannot
	// encode), which retrying will not fix.
	return fmt.Errorf("pgvector: %s: %w", op, err)
}

// connectionGone reports whether err says the connection could not be
// made or was lost: a failed connect, a closed connection, the network
// (refused, reset, closed, timed out, EOF), or a failure before anything
// was sent (pgconn.SafeToRetry).
func connectionGone(err error) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.Is(err, pgconn.ErrConnClosed) || pgconn.SafeToRetry(err) || pgconn.Timeout(err) ||
		errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE)
}

// WrapError turns a driver error of a call op on the server described by
// dsn (say, [RedactedDSN]'s answer) into this package's: context errors
// stay context errors, a server that cannot be reached or a connection lost
// wraps [ErrUnavailable] with the DSN and what to do, other server errors
// carry op. For programs that run their own SQL beside the vectors.
func WrapError(ctx context.Context, dsn, op string, err error) error {
	if err == nil {
		return nil
	}
	return wrapErr(ctx, dsn, op, err)
}

// tidyConnectError returns a failed connection's error with the attempts
// that only add noise left out of its message (errors.Is and errors.As
// still see every attempt): with sslmode=prefer (the default on TCP) or
// allow, pgx tries each address with TLS and without, and reports both
// attempts, so a server without TLS that refused the login, or a server
// that is down, read as "tls error: server refused TLS connection" or as
// the same dial error twice. An attempt that failed in TLS is left out
// when the same address was tried without TLS too, and a repeated line
// once; with sslmode=require the TLS error is all there is, and stays.
func tidyConnectError(err error) error {
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) {
		return err
	}
	joined, ok := ce.Unwrap().(interface{ Unwrap() []error })
	if !ok {
		return err
	}
	attempts := joined.Unwrap()
	plain := map[string]bool{} // addresses tried without a TLS failure
	for _, a := range attempts {
		if addr, _, ok := strings.Cut(a.Error(), " ("); ok && !strings.Contains(a.Error(), "tls error") {
			plain[addr] = true
		}
	}
	var kept []string
	for _, a := range attempts {
		line := a.Error()
		if addr, _, ok := strings.Cut(line, " ("); ok && plain[addr] && strings.Contains(line, "tls error") {
			continue
		}
		if !slices.Contains(kept, line) {
			kept = append(kept, line)
		}
	}
	if len(kept) == len(attempts) {
		return err
	}
	short := fmt.Sprintf("failed to connect to `user=%s database=%s`: %s", ce.Config.User, ce.Config.Database, strings.Join(kept, "; "))
	return &tidyError{msg: strings.Replace(err.Error(), ce.Error(), short, 1), err: err}
}

// tidyError is an error with a shorter message than the one it wraps.
type tidyError struct {
	msg string
	err error
}

func (e *tidyError) Error() string { return e.msg }
func (e *tidyError) Unwrap() error { return e.err }
