package pgvector_test

import (
	"context"
	"fmt"
	"log"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/pgvector"
)

// Through the registry: the spec names the server and the options, the
// config the dimension and the namespace (one table each).
func Example() {
	ctx := context.Background()
	db, err := vdb.Open(ctx, "pgvector:postgres://agent@localhost/memory?ef_search=100",
		vdb.Config{Dim: 3, Namespace: "user-42"})
	if err != nil {
		log.Fatal(err) // wraps pgvector.ErrUnavailable when no server listens
	}
	defer db.Close()
	if err := db.Add(ctx, []int64{1, 2}, [][]float32{{1, 0, 0}, {0, 1, 0}}); err != nil {
		log.Fatal(err)
	}
	res, err := db.Search(ctx, []float32{0.9, 0.1, 0}, 1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res[0].ID)
}

// With a pool the program already has (for instance one it also uses for
// its own tables): Close leaves the pool open.
func ExampleNew() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "host=/run/postgresql dbname=memory")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	db, err := pgvector.New(ctx, pool, 384, pgvector.WithNamespace("team"), pgvector.WithExact())
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	fmt.Println(db.Table())
}
