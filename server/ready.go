package server

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// readyTimeout bounds a readiness check's ping of the store's database.
const readyTimeout = 2 * time.Second

// handleReady is GET /readyz, readiness: 200 {"status":"ready"} while the
// store can serve, 503 {"status":"unavailable","error":…} with Retry-After
// while its database cannot be reached (or the store refuses writes for
// good). /healthz is liveness and stays 200 while the database is away: a
// load balancer takes the server out of rotation, an orchestrator does
// not restart it, and it is ready again, with no restart, once the
// database answers.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	var err error
	if f, ok := s.store.(failer); ok {
		err = f.Err()
	}
	if p, ok := s.store.(pinger); ok && err == nil {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		err = p.Ping(ctx)
		cancel()
	}
	if err != nil {
		w.Header().Set("Retry-After", strconv.Itoa(RetryAfter))
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}
