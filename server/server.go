package server

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultAddr is where the server listens unless told otherwise: loopback.
const DefaultAddr = "127.0.0.1:7437"

// ErrInsecure: the server was asked to listen on a non-loopback address
// without a bearer token. Configure one (WithToken) or bind to loopback.
var ErrInsecure = errors.New("server: a non-loopback address requires a bearer token")

// Server serves a Store over HTTP (a JSON API, MCP over streamable HTTP at
// /mcp, Prometheus metrics) and over MCP stdio. It is safe for concurrent
// use; make it with New.
type Server struct {
	store    Store
	log      *slog.Logger
	tokens   []token
	readOnly bool
	maxBody  int64
	version  string
	metrics  *metrics
	handler  http.Handler
	mcpHTTP  *mcp.Server // the MCP server of /mcp
}

// config is what the options set.
type config struct {
	log      *slog.Logger
	tokens   map[string]string
	readOnly bool
	maxBody  int64
	version  string
}

// An Option configures a Server made by New.
type Option func(*config) error

// WithLogger sets where the server logs (structured, one line per request
// at Debug, problems at Warn and Error). The default is slog.Default().
// Tokens are never logged: a token appears as "token#N".
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return invalid("WithLogger(nil)")
		}
		c.log = l
		return nil
	}
}

// WithToken adds a bearer token, pinned to namespace (AllNamespaces, or
// "", for every namespace). With at least one token every request except
// GET /healthz, GET /readyz and GET /openapi.json must carry one ("Authorization:
// Bearer TOKEN"), and a pinned token can neither read nor write outside its
// namespace.
func WithToken(tok, namespace string) Option {
	return func(c *config) error {
		if tok == "" {
			return invalid("WithToken: empty token")
		}
		if c.tokens == nil {
			c.tokens = make(map[string]string)
		}
		c.tokens[tok] = cmp.Or(namespace, AllNamespaces)
		return nil
	}
}

// WithTokens adds the tokens of a map as returned by ParseTokens.
func WithTokens(tokens map[string]string) Option {
	return func(c *config) error {
		for tok, ns := range tokens {
			if err := WithToken(tok, ns)(c); err != nil {
				return err
			}
		}
		return nil
	}
}

// WithReadOnly refuses every write (403 read_only over HTTP; the MCP
// server then offers only the reading tools).
func WithReadOnly() Option {
	return func(c *config) error { c.readOnly = true; return nil }
}

// WithMaxBodyBytes sets the limit on a request body (DefaultMaxBodyBytes);
// a larger body is refused with 413 too_large.
func WithMaxBodyBytes(n int64) Option {
	return func(c *config) error {
		if n <= 0 {
			return invalid(fmt.Sprintf("WithMaxBodyBytes(%d): want > 0", n))
		}
		c.maxBody = n
		return nil
	}
}

// WithVersion sets the version the MCP server reports to clients.
func WithVersion(v string) Option {
	return func(c *config) error { c.version = v; return nil }
}

// New returns a server for st.
func New(st Store, opts ...Option) (*Server, error) {
	if st == nil {
		return nil, invalid("New: nil store")
	}
	c := config{log: slog.Default(), maxBody: DefaultMaxBodyBytes, version: "dev"}
	for _, o := range opts {
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	s := &Server{store: st, log: c.log, readOnly: c.readOnly, maxBody: c.maxBody, version: c.version, metrics: newMetrics(st)}
	toks := make([]string, 0, len(c.tokens))
	for t := range c.tokens {
		toks = append(toks, t)
	}
	sort.Strings(toks) // stable names in logs across runs
	for i, t := range toks {
		s.tokens = append(s.tokens, token{sum: sha256.Sum256([]byte(t)), name: tokenName(i), namespace: c.tokens[t]})
	}
	s.handler = s.routes()
	return s, nil
}

// Handler returns the server's HTTP handler: the JSON API under /v1,
// MCP (streamable HTTP, stateless) at /mcp, /healthz, /readyz, /metrics
// and /openapi.json.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve serves HTTP on l until ctx is done, then shuts down gracefully:
// it stops accepting, lets in-flight requests finish (up to grace) and
// returns. It refuses (ErrInsecure) a non-loopback listener without a
// token. It does not close the store: the caller does, after Serve
// returns, so that every acknowledged write is in the store it closes.
func (s *Server) Serve(ctx context.Context, l net.Listener, grace time.Duration) error {
	if len(s.tokens) == 0 && !isLoopback(l.Addr()) {
		l.Close()
		return fmt.Errorf("%w (listening on %s; set AGENTMEM_TOKEN or bind 127.0.0.1)", ErrInsecure, l.Addr())
	}
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l) }()
	s.log.Info("serving", "addr", l.Addr().String(), "auth", len(s.tokens) > 0, "read_only", s.readOnly, "memories", s.store.Len())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down: finishing in-flight requests")
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := hs.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("server: requests still running after %v: %w", grace, hs.Close())
	}
	return err
}

// ListenAndServe listens on addr (DefaultAddr if "") and calls Serve. A
// non-loopback address without a token is refused before listening.
func (s *Server) ListenAndServe(ctx context.Context, addr string, grace time.Duration) error {
	if addr == "" {
		addr = DefaultAddr
	}
	if len(s.tokens) == 0 && !loopbackAddr(addr) {
		return fmt.Errorf("%w (--addr %s; set AGENTMEM_TOKEN or bind 127.0.0.1)", ErrInsecure, addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return s.Serve(ctx, l, grace)
}

// ServeStdio serves MCP on in and out (os.Stdin and os.Stdout for an MCP
// client that spawned the process) until the client disconnects or ctx is
// done. The client may use every namespace. A message longer than
// MaxStdioMessage is answered with a too_large error and skipped.
func (s *Server) ServeStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	s.log.Info("serving MCP on stdio", "read_only", s.readOnly, "memories", s.store.Len())
	w := &lockedWriter{w: out}
	r := newStdioReader(in, w, MaxStdioMessage, s.log)
	err := s.mcpServer(anyone).Run(ctx, &mcp.IOTransport{Reader: r, Writer: w, MaxLineLength: MaxStdioMessage + 1})
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}

// isLoopback reports whether a listener's address is a loopback one.
func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// loopbackAddr reports whether addr (host:port) names a loopback host;
// an empty host (":7437") is every interface.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
