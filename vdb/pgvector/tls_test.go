package pgvector_test

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/vdb/pgvector"
)

// refusingServer listens on a loopback port as a PostgreSQL server without
// TLS that knows no database: it answers an SSLRequest with "N" and a
// login with FATAL 3D000.
func refusingServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				be := pgproto3.NewBackend(c, c)
				for {
					msg, err := be.ReceiveStartupMessage()
					if err != nil {
						return
					}
					switch msg.(type) {
					case *pgproto3.SSLRequest, *pgproto3.GSSEncRequest:
						if _, err := c.Write([]byte("N")); err != nil {
							return
						}
					default:
						be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: "3D000", Message: `database "memory" does not exist`})
						_ = be.Flush()
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// TestConnectErrorTLSOnlyWhenRequired: a login refused by a server
// without TLS names the refusal, and names TLS only when the DSN required
// it (sslmode=prefer, the default on TCP, tries TLS first and then
// without, and pgx reports both attempts); a server that is down is one
// dial error, not the same one twice.
func TestConnectErrorTLSOnlyWhenRequired(t *testing.T) {
	addr := refusingServer(t)
	for _, tc := range []struct {
		sslmode string
		tls     bool
	}{{"", false}, {"prefer", false}, {"allow", false}, {"disable", false}, {"require", true}} {
		dsn := fmt.Sprintf("postgres://agent:s3cretpw@%s/memory?connect_timeout=5", addr)
		if tc.sslmode != "" {
			dsn += "&sslmode=" + tc.sslmode
		}
		_, err := pgvector.Open(t.Context(), dsn, 8)
		require.ErrorIs(t, err, pgvector.ErrUnavailable, tc.sslmode)
		msg := err.Error()
		assert.Equal(t, tc.tls, strings.Contains(strings.ToLower(msg), "tls"), "sslmode=%q: %s", tc.sslmode, msg)
		assert.NotContains(t, msg, "s3cretpw")
		if !tc.tls {
			assert.Contains(t, msg, `database "memory" does not exist`, tc.sslmode)
			assert.Contains(t, msg, "createdb", "the hint is the refusal's: %s", msg)
		}
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	down := ln.Addr().String()
	require.NoError(t, ln.Close())
	_, err = pgvector.Open(t.Context(), fmt.Sprintf("postgres://agent@%s/memory?connect_timeout=5", down), 8)
	require.ErrorIs(t, err, pgvector.ErrUnavailable)
	assert.Equal(t, 1, strings.Count(err.Error(), "dial error"), "one line per address: %s", err)
	t.Log(err)
}
