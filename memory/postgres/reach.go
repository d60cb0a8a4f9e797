package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/memory"
)

// What a caller that must tell "not there" from "cannot tell" uses: the
// error-free Get, Len and Chunks of memory.Records and the server's Store
// answer false or 0 when the server cannot be reached; these answer an
// error wrapping memory.ErrUnavailable instead. A server that comes back
// needs nothing done: the pool drops the connections that broke and dials
// new ones on the next call.

// DefaultConnectTimeout bounds how long a call waits to connect when the
// URL does not say (connect_timeout=SECONDS): a server that does not
// answer (a host that is down, a port that drops packets) then fails the
// call with memory.ErrUnavailable rather than holding it until the
// caller gives up.
const DefaultConnectTimeout = 10 * time.Second

// lookupTimeout bounds Get, Len and Chunks, which take no context.
const lookupTimeout = 30 * time.Second

// Ping reports whether the server answers: nil, or an error wrapping
// memory.ErrUnavailable (memory.ErrClosed after Close). A readiness check.
func (m *Memory) Ping(ctx context.Context) error {
	if err := m.check(ctx); err != nil {
		return err
	}
	return m.wrap(ctx, "ping", m.pool.Ping(ctx))
}

// GetContext returns the record with the given id and whether it is
// stored; a server that cannot be reached is an error (wrapping
// memory.ErrUnavailable), not a missing record.
func (m *Memory) GetContext(ctx context.Context, id string) (memory.Record, bool, error) {
	if err := m.check(ctx); err != nil {
		return memory.Record{}, false, err
	}
	var r memory.Record
	err := scanRecord(m.pool.QueryRow(ctx, `SELECT `+recordColumns+` FROM records r JOIN namespaces n ON n.id = r.ns WHERE r.id = $1`, id), &r)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return memory.Record{}, false, nil
	case err != nil:
		return memory.Record{}, false, m.wrap(ctx, fmt.Sprintf("get %q", id), err)
	}
	return r, true, nil
}

// getManyIDs is the most ids GetMany asks for in one statement.
const getManyIDs = 10_000

// GetMany returns the stored records among ids, by id (an id not stored
// is left out), in one round trip per getManyIDs ids; a server that
// cannot be reached is an error (wrapping memory.ErrUnavailable). It is
// what `agentmem import` asks of its lines' ids before it writes them:
// GetContext for each line was a round trip each, 14,022 of them for
// RealMem's turns, about half of the import's time.
func (m *Memory) GetMany(ctx context.Context, ids []string) (map[string]memory.Record, error) {
	if err := m.check(ctx); err != nil {
		return nil, err
	}
	out := map[string]memory.Record{}
	for lo := 0; lo < len(ids); lo += getManyIDs {
		rows, err := m.pool.Query(ctx, `SELECT `+recordColumns+` FROM records r JOIN namespaces n ON n.id = r.ns WHERE r.id = ANY($1)`,
			ids[lo:min(lo+getManyIDs, len(ids))])
		if err != nil {
			return nil, m.wrap(ctx, "get records", err)
		}
		for rows.Next() {
			var r memory.Record
			if err := scanRecord(rows, &r); err != nil {
				rows.Close()
				return nil, m.wrap(ctx, "get records", err)
			}
			out[r.ID] = r
		}
		if err := rows.Err(); err != nil {
			return nil, m.wrap(ctx, "get records", err)
		}
	}
	return out, nil
}

// Counts returns the number of stored records and chunks, read in one
// statement; a server that cannot be reached is an error (wrapping
// memory.ErrUnavailable), never a count of 0.
func (m *Memory) Counts(ctx context.Context) (records, chunks int, err error) {
	if err := m.check(ctx); err != nil {
		return 0, 0, err
	}
	err = m.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM records), (SELECT count(*) FROM chunks)`).Scan(&records, &chunks)
	if err != nil {
		return 0, 0, m.wrap(ctx, "count records", err)
	}
	return records, chunks, nil
}

// HoldsNamespace reports whether namespace ns holds any record
// (memory.NamespaceHolder), in one indexed lookup; a server that cannot be
// reached is an error (wrapping memory.ErrUnavailable).
func (m *Memory) HoldsNamespace(ctx context.Context, ns string) (bool, error) {
	if err := m.check(ctx); err != nil {
		return false, err
	}
	var holds bool
	err := m.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM records r JOIN namespaces n ON n.id = r.ns WHERE n.name = $1)`, ns).Scan(&holds)
	if err != nil {
		return false, m.wrap(ctx, fmt.Sprintf("look for namespace %q", ns), err)
	}
	return holds, nil
}
