// Package pgpool holds what vdb/pgvector and memory/postgres share about
// their PostgreSQL connections.
package pgpool

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
	pgxvec "github.com/pgvector/pgvector-go/pgx"
)

// Acquire takes a connection from pool and makes sure pgvector's types are
// registered on it (pools a caller built may not do it on connect).
func Acquire(ctx context.Context, pool *pgxpool.Pool) (*pgxpool.Conn, error) {
	c, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	if _, ok := c.Conn().TypeMap().TypeForName("vector"); !ok {
		if err := pgxvec.RegisterTypes(ctx, c.Conn()); err != nil {
			c.Release()
			return nil, err
		}
	}
	return c, nil
}
