package postgres

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	pgv "github.com/pgvector/pgvector-go"

	"github.com/agentmem/agentmem/embed"
)

// Sparse vectors. A lexical embedder's vectors (embed/hash: words and
// character n-grams hashed into dimensions) are mostly zeros: a chunk of
// a conversation's turn sets a median 47 of hash:512's 512 dimensions.
// As vector(512) each chunk's row carries 2 KB of floats; as pgvector's
// sparsevec(512), 8 bytes per non-zero dimension, about 400 bytes. Since
// schema version 10 a store of a lexical embedder of at most
// maxSparseDim dimensions keeps them so (migration 10 converts the
// chunks of a store written before): measured with 30,000 chunks of
// hash:512, a COPY of 16 MB instead of 84 MB, and less for the server to
// read in an exact scan and for the process to read into its copy
// (vectors.go). Every other store keeps vector(dim). The column's type
// is read when the store opens (Memory.sparse), so the code follows the
// table, not the embedder.

// maxSparseDim is the most dimensions a store holds sparse. The HNSW
// index holds the vectors cast to vector(dim) (Memory.indexExpr), but an
// index over the sparsevec column itself (sparsevec_ip_ops: a fifth of
// the size, slower to build) takes at most 1,000 non-zero elements, which
// a vector of at most 1,000 dimensions cannot pass: the bound keeps that
// index possible for every sparse store.
const maxSparseDim = 1000

// holdsSparse reports whether a store of emb's vectors of dim dimensions
// holds them sparse (migration 10).
func holdsSparse(emb embed.Embedder, dim int) bool {
	return embed.KindOf(emb) == embed.Lexical && dim <= maxSparseDim
}

// vecColumn returns the type of the chunks' embedding column (vector or
// sparsevec) and its dimension (pgvector keeps a vector(n) or
// sparsevec(n) column's n as its type modifier).
func vecColumn(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (typ string, dim int, err error) {
	err = q.QueryRow(ctx, `SELECT t.typname, a.atttypmod FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
		WHERE a.attrelid = 'chunks'::regclass AND a.attname = 'embedding'`).Scan(&typ, &dim)
	return typ, dim, err
}

// readVecType reads the type of the chunks' embedding column (vector or
// sparsevec) into m.sparse.
func (m *Memory) readVecType(ctx context.Context) error {
	typ, _, err := vecColumn(ctx, m.pool)
	if err != nil {
		return m.wrap(ctx, "read the vectors' type", err)
	}
	switch typ {
	case "vector":
		m.sparse = false
	case "sparsevec":
		m.sparse = true
	default:
		return fmt.Errorf("postgres: chunks.embedding of schema %q is of type %s: want vector or sparsevec", m.schema, typ)
	}
	return nil
}

// indexExpr is the expression the HNSW index holds and a search through it
// orders by: the column, or a sparse column cast to vector(dim). An index
// over sparsevec (sparsevec_ip_ops) took 1.65 times as long to build
// (246 against 149 s at 100,000 records of hash:512, one run each): its
// distances walk two lists of indices where vector's add lanes of
// products. The index is as before schema version 10, only the table is
// smaller.
func (m *Memory) indexExpr() string {
	if m.sparse {
		return "embedding::vector(" + strconv.Itoa(m.dim) + ")"
	}
	return "embedding"
}

// innerProduct is the SQL of the inner product of a chunk's vector and the
// dense query vector param. The scores of a sparse store's vectors are
// computed dense too (the cast costs about what reading a vector(dim)
// did): pgvector sums a sparsevec's products one by one over their common
// dimensions, where its vector sum, like the process's copy (vectors.go),
// adds lanes of products; the last bits differ, and a sum of products
// that cancel is a few units of 1e-9 instead of 0, which would change
// which chunks share nothing with a query and so the margin fusion's
// median (memory/internal/ranking) between the server and the copy. An
// HNSW search orders by the index's expression (indexExpr), its scores
// by this.
func (m *Memory) innerProduct(param string) string {
	if m.sparse {
		return "inner_product(embedding::vector, " + param + ")"
	}
	return "inner_product(embedding, " + param + ")"
}

// A vecScan is a scan target for the embedding column of either type.
type vecScan struct {
	sparse bool
	dense  pgv.Vector
	sp     pgv.SparseVector
}

// dest is the value to pass to Scan.
func (s *vecScan) dest() any {
	if s.sparse {
		return &s.sp
	}
	return &s.dense
}

// into writes the vector scanned into dst, of its dimension.
func (s *vecScan) into(dst []float32) {
	if !s.sparse {
		copy(dst, s.dense.Slice())
		return
	}
	clear(dst)
	vals := s.sp.Values()
	for i, j := range s.sp.Indices() {
		dst[j] = vals[i]
	}
}

// slice returns the vector scanned, dense.
func (s *vecScan) slice() []float32 {
	if s.sparse {
		return s.sp.Slice()
	}
	return s.dense.Slice()
}
