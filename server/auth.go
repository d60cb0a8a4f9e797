package server

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// AllNamespaces pins a token to no namespace: it may use every one.
const AllNamespaces = "*"

// token is one accepted bearer token, kept as its SHA-256 so that it is
// compared in constant time and never logged.
type token struct {
	sum       [sha256.Size]byte
	name      string // "token#N", what logs show
	namespace string // AllNamespaces or the one it is pinned to
}

// principal is who makes a request: an unpinned principal (namespace
// AllNamespaces) may use every namespace.
type principal struct {
	name      string
	namespace string
}

// anyone is the principal of requests to a server without tokens (and of
// MCP over stdio): it may use every namespace.
var anyone = &principal{name: "anonymous", namespace: AllNamespaces}

// ParseTokens parses a token list such as the AGENTMEM_TOKENS variable:
// comma-separated "token=namespace" pairs, where namespace "*" (or a token
// without "=namespace") may use every namespace. For use with WithToken.
func ParseTokens(s string) (map[string]string, error) {
	out := make(map[string]string)
	for i, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		tok, ns, found := strings.Cut(item, "=")
		tok, ns = strings.TrimSpace(tok), strings.TrimSpace(ns)
		if tok == "" || found && ns == "" {
			// Do not echo the item: it holds a secret.
			return nil, invalid(fmt.Sprintf("token list entry %d: want token=namespace or token=*", i+1))
		}
		out[tok] = cmp.Or(ns, AllNamespaces)
	}
	return out, nil
}

// lookup returns the principal holding the bearer token tok, comparing
// against every token in constant time.
func (s *Server) lookup(tok string) *principal {
	sum := sha256.Sum256([]byte(tok))
	var found *token
	for i := range s.tokens {
		if subtle.ConstantTimeCompare(sum[:], s.tokens[i].sum[:]) == 1 {
			found = &s.tokens[i]
		}
	}
	if found == nil {
		return nil
	}
	return &principal{name: found.name, namespace: found.namespace}
}

// bearer returns the bearer token of r ("" if none).
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

type principalKey struct{}

// principalFrom returns the principal of a request context.
func principalFrom(ctx context.Context) *principal {
	p, _ := ctx.Value(principalKey{}).(*principal)
	return p
}

// requireToken authenticates the API's requests: without tokens configured
// everyone is let in; otherwise a request without a known bearer token is
// 401 unauthorized.
func (s *Server) requireToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := anyone
		if len(s.tokens) > 0 {
			if p = s.lookup(bearer(r)); p == nil {
				w.Header().Set("WWW-Authenticate", `Bearer realm="agentmem"`)
				s.writeError(w, r, &apiError{http.StatusUnauthorized, CodeUnauthorized, "a valid bearer token is required (Authorization: Bearer …)"})
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}

// verifyMCP is the token verifier of /mcp: the MCP SDK passes the
// principal to the tools as TokenInfo (UserID: its name, Extra: its
// namespace).
func (s *Server) verifyMCP(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
	p := s.lookup(tok)
	if p == nil {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{UserID: p.name, Extra: map[string]any{"namespace": p.namespace}}, nil
}

// mcpPrincipal returns the principal of an MCP tool call: the token's over
// HTTP with tokens, fallback otherwise (nil: refuse).
func mcpPrincipal(ti *auth.TokenInfo, fallback *principal) *principal {
	if ti == nil {
		return fallback
	}
	ns, _ := ti.Extra["namespace"].(string)
	return &principal{name: ti.UserID, namespace: ns}
}

// scope is the namespace a request by p naming ns works in: ns for an
// unpinned principal (for reads "" means all, for writes the default
// namespace); the pinned namespace, when ns is "" or it, for a pinned one;
// anything else is forbidden.
func (p *principal) scope(ns string) (string, error) {
	switch {
	case p == nil:
		return "", &apiError{http.StatusUnauthorized, CodeUnauthorized, "a valid bearer token is required"}
	case p.namespace == AllNamespaces:
		return ns, nil
	case ns == "" || ns == p.namespace:
		return p.namespace, nil
	}
	return "", errForbidden
}

// canSee reports whether p may read or change a record in namespace ns.
func (p *principal) canSee(ns string) bool {
	return p != nil && (p.namespace == AllNamespaces || p.namespace == ns)
}

// unpinned reports whether p may use every namespace.
func (p *principal) unpinned() bool { return p != nil && p.namespace == AllNamespaces }

// tokenName names the i-th configured token in logs.
func tokenName(i int) string { return "token#" + strconv.Itoa(i+1) }

// Environment variables EnvTokens reads.
const (
	// EnvTokenVar holds one bearer token that may use every namespace.
	EnvTokenVar = "AGENTMEM_TOKEN"
	// EnvTokensVar holds a token list in ParseTokens' syntax.
	EnvTokensVar = "AGENTMEM_TOKENS"
)

// EnvTokens returns the tokens of the EnvTokenVar and EnvTokensVar variables as
// looked up by getenv (os.Getenv), for WithTokens.
func EnvTokens(getenv func(string) string) (map[string]string, error) {
	toks, err := ParseTokens(getenv(EnvTokensVar))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvTokensVar, err)
	}
	if t := strings.TrimSpace(getenv(EnvTokenVar)); t != "" {
		toks[t] = AllNamespaces
	}
	return toks, nil
}
