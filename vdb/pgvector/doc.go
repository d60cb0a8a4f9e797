// Package pgvector is a [vdb.VectorDatabase] stored in PostgreSQL with the
// pgvector extension, so that many agentmem processes (servers, CLIs) share
// one memory.
//
// Each namespace is one table, id bigint primary key and embedding
// vector(dim), named table_prefix + the namespace (lower-cased, other
// characters replaced by '_', plus a short hash when that changed anything or
// the name is too long; see [TableName]). Vectors are L2-normalised on the way
// in by [vdb.Normalize], so the inner product is the cosine: a result's Score
// is -(embedding <#> query).
//
// Two search modes:
//
//   - HNSW (the default): an HNSW index with vector_ip_ops is created when the
//     table is opened (m and ef_construction apply when it is built), and a
//     search asks it for the k nearest with SET LOCAL hnsw.ef_search =
//     max(ef_search, k) in its own read-only transaction. Approximate: recall
//     depends on ef_search. k above 1000 (pgvector's ef_search limit) falls
//     back to the exact scan, so that k > Len() still returns Len() results.
//   - exact (exact=1): no index is created, and searches order by
//     inner_product(embedding, query), a function no index can serve, so the
//     answer is the exact top k even when another process built an HNSW index
//     on the same table. A sequential scan: for thousands of vectors, or to
//     load a table before building the index (open it exact, Add, then open it
//     in HNSW mode: building an index over loaded rows is faster than growing
//     it one insert at a time).
//
// Ties are broken by ascending id in both modes (in HNSW mode among the
// candidates the index returned).
//
// # Spec
//
// Through the registry, "pgvector:DSN" where DSN is a libpq connection string
// in either form, with agentmem's options as extra parameters:
//
//	pgvector:postgres://agent:pw@db.example:5432/memory?sslmode=require&ef_search=100
//	pgvector:host=/run/postgresql dbname=memory exact=1 table_prefix=team_
//
// The options are table_prefix (default "agentmem_vec_"), exact (1/true),
// ef_search (1–1000, default 100), m (2–100, default 16) and ef_construction
// (4–1000, default 64). Every other parameter is pgx's: libpq's keywords,
// pgxpool's pool_max_conns and friends, and server settings such as
// maintenance_work_mem=1GB (sent at connection start; HNSW builds want the
// graph to fit in it). An empty DSN uses the PG* environment variables.
//
// Programs that already hold a *pgxpool.Pool (for instance a long-term store
// keeping its text in the same database) call [New] instead; the pool is
// shared, and Close leaves it open.
//
// # Errors
//
// Besides the vdb contract's errors: a server that cannot be reached or a
// connection lost mid-call wraps [ErrUnavailable] and names the DSN without
// its password; a server without the extension wraps [ErrNoExtension] and
// says how to install it; a table of another dimension wraps
// [vdb.ErrDimension]. Add is one transaction: on any error nothing of the
// batch was stored, and retrying is safe because Add is an upsert.
//
// # Tests
//
// The tests need a PostgreSQL with pgvector: scripts/pg-test.sh installs one
// (Debian 12) and starts a throwaway cluster; see that script.
package pgvector
