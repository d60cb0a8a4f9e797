package pgvector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
)

// A lost or refused connection is ErrUnavailable; a mistake of the
// client's own (a row that does not scan) is not, so that it is not
// answered 503 and retried forever.
func TestWrapError_Classifies(t *testing.T) {
	ctx := context.Background()
	_, refused := pgconn.Connect(ctx, "postgres://u@127.0.0.1:1/d?connect_timeout=2&sslmode=disable")
	var ce *pgconn.ConnectError
	assert.ErrorAs(t, refused, &ce)
	for _, c := range []struct {
		err  error
		gone bool
	}{
		{fmt.Errorf("failed to receive message: %w", io.ErrUnexpectedEOF), true},
		{io.EOF, true},
		{fmt.Errorf("write: %w", syscall.EPIPE), true},
		{&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{fmt.Errorf("query: %w", pgconn.ErrConnClosed), true},
		{refused, true},
		{&pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}, true},
		{errors.New("got 3 values, but dst struct has only 2 fields"), false},
		{fmt.Errorf("can't scan into dest[0]: %w", errors.New("cannot scan NULL into *string")), false},
		{&pgconn.PgError{Code: "23505", Message: "duplicate key value violates unique constraint"}, false},
	} {
		err := WrapError(ctx, "postgres://u@h/d", "search", c.err)
		assert.Equal(t, c.gone, errors.Is(err, ErrUnavailable), "%v → %v", c.err, err)
		assert.ErrorIs(t, err, c.err)
	}
}
