package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	pgv "github.com/pgvector/pgvector-go"

	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/internal/errs"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/memory/internal/ranking"
	"github.com/agentmem/agentmem/vdb"
)

// candidate is a record found by one or both paths (memory/longterm's
// candidate).
type candidate struct {
	ranking.Paths
	seq     int64
	rec     memory.Record
	vecKids []ranking.Child // chunks matched by the vector path, best first
	kids    []string        // the record's chunks' texts
	score   float64
}

// nsInfo is a namespace's id and keyword statistics.
type nsInfo struct {
	id                int32
	name              string
	textDocs, textLen int64
	episodeDocs       int64
	mergedSeq         int64    // postings up to it are in blocks (blocks.go)
	speakers          []string // its speakers, sorted
}

// Query searches the memory as memory/longterm's Memory.Query does: the
// keyword path ranks whole records by BM25 with their namespace's
// statistics (leaving the query's question words out) plus what the
// previous and the next record's text and their episode (conversation)
// score, preferring speakers the query names; the vector path ranks records by
// their best chunk's cosine; Hybrid fuses the two as the options say
// (WithMarginFusion, WithScoreFusion). It reads one snapshot of the
// database (a repeatable-read, read-only transaction).
func (m *Memory) Query(ctx context.Context, q memory.Query) ([]memory.Hit, error) {
	if q.K < 0 {
		return nil, fmt.Errorf("postgres: %w: K = %d", errs.InvalidArgument, q.K)
	}
	if q.Mode < memory.Hybrid || q.Mode > memory.KeywordOnly {
		return nil, fmt.Errorf("postgres: %w: mode %d", errs.InvalidArgument, q.Mode)
	}
	if !q.From.IsZero() && !q.To.IsZero() && q.To.Before(q.From) {
		return nil, fmt.Errorf("postgres: %w: To %v is before From %v", errs.InvalidArgument, q.To, q.From)
	}
	if q.Neighbours < 0 || q.Neighbours > memory.MaxNeighbours {
		return nil, fmt.Errorf("postgres: %w: Neighbours = %d, not in [0, %d]", errs.InvalidArgument, q.Neighbours, memory.MaxNeighbours)
	}
	if err := m.check(ctx); err != nil {
		return nil, err
	}
	k := cmp.Or(q.K, m.opts.topK)
	minScore := cmp.Or(q.MinScore, m.opts.minScore)
	text := strings.ToValidUTF8(q.Text, "\uFFFD")
	if !hasWord(text) {
		return []memory.Hit{}, nil
	}
	depth := ranking.Depth(k)
	var qvec []float32
	if q.Mode != memory.KeywordOnly {
		v, err := m.embedQuery(ctx, text)
		if err != nil {
			return nil, err
		}
		qvec = v
	}

	c, err := m.acquire(ctx)
	if err != nil {
		return nil, m.wrap(ctx, "query", err)
	}
	defer c.Release()
	tx, err := c.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, m.wrap(ctx, "query", err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // read only

	nss, err := namespaces(ctx, tx, q.Namespace)
	if err != nil {
		return nil, m.wrap(ctx, "query: namespaces", err)
	}
	if len(nss) == 0 {
		return []memory.Hit{}, nil
	}
	cands := map[int64]*candidate{}
	get := func(seq int64) *candidate {
		c := cands[seq]
		if c == nil {
			c = &candidate{seq: seq}
			cands[seq] = c
		}
		return c
	}
	if qvec != nil {
		if err := m.vectorPath(ctx, tx, q, nss, qvec, depth, minScore, cands, get); err != nil {
			return nil, err
		}
	}
	if q.Mode != memory.VectorOnly {
		kw, err := m.keywordSearch(ctx, tx, q, nss, text, depth)
		if err != nil {
			return nil, err
		}
		for i, r := range kw {
			c := get(r.seq)
			c.HasKW, c.KWScore, c.KWRank = true, r.score, i+1
			c.rec.ID = r.id
		}
	}
	list := make([]*candidate, 0, len(cands))
	for _, c := range cands {
		list = append(list, c)
	}
	m.fuseAll(q.Mode, list)
	// Only the records that can make the top k are read: the best k by
	// score, with those tied with the k-th on everything but their id
	// (ranking.Order's last key, read with them).
	byScore := func(a, b *candidate) int { return ranking.Order(a.Paths, b.Paths, a.score, b.score, "", "") }
	slices.SortFunc(list, byScore)
	n := min(k, len(list))
	for n > 0 && n < len(list) && byScore(list[n-1], list[n]) == 0 {
		n++
	}
	list = list[:n]
	if err := m.loadRecords(ctx, tx, list); err != nil {
		return nil, err
	}
	slices.SortFunc(list, func(a, b *candidate) int {
		return ranking.Order(a.Paths, b.Paths, a.score, b.score, a.rec.ID, b.rec.ID)
	})
	if len(list) > k {
		list = list[:k]
	}
	hits := m.hits(text, list)
	if q.Neighbours == 0 {
		return hits, nil
	}
	seqs := make([]int64, len(list))
	for i, c := range list {
		seqs[i] = c.seq
	}
	return hits, m.neighbours(ctx, tx, hits, seqs, q.Neighbours)
}

func (m *Memory) embedQuery(ctx context.Context, text string) ([]float32, error) {
	v, err := embed.EmbedQuery(ctx, m.emb, text)
	if err != nil {
		return nil, fmt.Errorf("postgres: embed query: %w", err)
	}
	out := make([]float32, m.dim)
	if err := vdb.Normalize(out, v); err != nil {
		return nil, fmt.Errorf("postgres: query vector: %w", err)
	}
	return out, nil
}

// namespaces reads the namespace named ns, or all of them (ns empty).
func namespaces(ctx context.Context, tx pgx.Tx, ns string) ([]nsInfo, error) {
	sql := `SELECT id, name, text_docs, text_len, episode_docs, merged_seq,
		array(SELECT speaker FROM speakers s WHERE s.ns = namespaces.id AND s.n > 0 ORDER BY speaker)
		FROM namespaces WHERE text_docs > 0`
	args := []any{}
	if ns != "" {
		sql += ` AND name = $1`
		args = append(args, ns)
	}
	rows, err := tx.Query(ctx, sql+` ORDER BY name`, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (nsInfo, error) {
		var n nsInfo
		err := row.Scan(&n.id, &n.name, &n.textDocs, &n.textLen, &n.episodeDocs, &n.mergedSeq, &n.speakers)
		return n, err
	})
}

// exactRecords is the largest namespace (in records, of some three chunks
// each) whose queries scan its chunks exactly rather than through HNSW.
const exactRecords = 5000

// maxVectorFetch bounds how deep the vector path digs for enough distinct
// records.
const maxVectorFetch = 20000

// vectorPath finds the records whose best chunks are nearest to qvec, as
// memory/longterm's candidates does: it fetches depth chunks, and deeper
// (fourfold) until depth/4 distinct records are found or the namespace is
// exhausted.
func (m *Memory) vectorPath(ctx context.Context, tx pgx.Tx, q memory.Query, nss []nsInfo, qvec []float32, depth int, minScore float32,
	cands map[int64]*candidate, get func(int64) *candidate) error {
	args := []any{pgv.NewVector(qvec)}
	arg := func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }
	// A namespace of up to exactRecords records is scanned exactly (its
	// chunks found through the ns index): cheaper than the HNSW graph of
	// the whole table, whose iterative scan skips every other namespace's
	// chunks, and exact. A larger one, or all of them, use HNSW over the
	// chunks that are not pending (the partial index), plus an exact scan
	// of the pending ones (fold.go) found through their own partial index;
	// ns + 0 keeps the planner from taking the ns index for the HNSW
	// search.
	exact := m.opts.exact || q.Namespace != "" && nss[0].textDocs <= exactRecords
	var filters []string // time range, for every search
	if !q.From.IsZero() {
		filters = append(filters, "time >= "+arg(q.From))
	}
	if !q.To.IsZero() {
		filters = append(filters, "time < "+arg(q.To))
	}
	// where is the WHERE of a search of the chunks that match cond, with
	// the namespace's column as nsCol.
	where := func(cond, nsCol string) string {
		conds := []string{cond}
		if q.Namespace != "" {
			conds = append(conds, nsCol+" = "+strconv.Itoa(int(nss[0].id)))
		}
		return strings.Join(append(conds, filters...), " AND ")
	}
	type res struct {
		id, seq int64
		ord     int32
		score   float64
	}
	collect := func(dst *[]res) func(pgx.Rows) error {
		return func(rows pgx.Rows) error {
			var err error
			*dst, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (res, error) {
				var r res
				err := row.Scan(&r.id, &r.seq, &r.ord, &r.score)
				return r, err
			})
			return err
		}
	}
	// exactScan ranks the chunks that match cond by an exact scan.
	exactScan := func(d int, cond string) string {
		return `SELECT id, seq, ord, -(embedding <#> $1) FROM chunks WHERE ` + where(cond, "ns") +
			fmt.Sprintf(` ORDER BY inner_product(embedding, $1) DESC, id LIMIT %d`, d)
	}
	for d := depth; ; d *= 4 {
		d = min(d, maxVectorFetch)
		// One round trip: the settings, the index search, the settings
		// back, the pending chunks.
		var batch pgx.Batch
		var all, pending []res
		if exact {
			batch.Queue(exactScan(d, "true"), args...).Query(collect(&all))
		} else {
			// The planner estimates the namespace filter (an expression)
			// to keep a few rows and then prefers scanning every chunk
			// exactly (measured: all 30,000 chunks of a namespace of
			// 10,000 records, 30 ms a query, instead of a few through
			// HNSW): without sequential scans and sorts, only the HNSW
			// index gives the order. The settings live in a savepoint
			// that is rolled back after the search (it wrote nothing), so
			// the statements that follow, and the user's own values of
			// these settings, are as they were. The index is partial: the
			// search names its predicate.
			batch.Queue(`SAVEPOINT agentmem_vector_search`)
			batch.Queue(`SELECT set_config('hnsw.ef_search', $1, true), set_config('hnsw.iterative_scan', 'strict_order', true),
				set_config('enable_seqscan', 'off', true), set_config('enable_sort', 'off', true)`,
				strconv.Itoa(min(max(m.opts.efSearch, d), 1000)))
			batch.Queue(`SELECT id, seq, ord, -(embedding <#> $1) FROM chunks WHERE `+where("NOT pending", "ns + 0")+
				fmt.Sprintf(` ORDER BY embedding <#> $1 LIMIT %d`, d), args...).Query(collect(&all))
			batch.Queue(`ROLLBACK TO SAVEPOINT agentmem_vector_search`)
			batch.Queue(`RELEASE SAVEPOINT agentmem_vector_search`)
			batch.Queue(exactScan(d, "pending"), args...).Query(collect(&pending))
		}
		if err := tx.SendBatch(ctx, &batch).Close(); err != nil {
			return m.wrap(ctx, "query: vector search", err)
		}
		// Exhausted when neither search found d chunks.
		exhausted := len(all) < d && len(pending) < d
		all = append(all, pending...)
		slices.SortFunc(all, func(a, b res) int {
			if c := cmp.Compare(b.score, a.score); c != 0 {
				return c
			}
			return cmp.Compare(a.id, b.id)
		})
		all = all[:min(len(all), d)]
		n := len(all)
		// The minimum score cuts the list (vdb.SearchMinScore's rule).
		if i := slices.IndexFunc(all, func(r res) bool { return float32(r.score) < minScore }); i >= 0 {
			all = all[:i]
		}
		clear(cands)
		rank := 0
		for _, r := range all {
			c := get(r.seq)
			if !c.HasVec {
				rank++
				c.HasVec, c.VecScore, c.VecRank = true, r.score, rank
			}
			c.vecKids = append(c.vecKids, ranking.Child{Index: int(r.ord), Score: r.score})
		}
		if rank >= depth/4 || exhausted || len(all) < n || d >= maxVectorFetch {
			return nil
		}
	}
}

// loadRecords fills in the records of the candidates that can make the
// top k, with their chunks' texts for the snippets.
func (m *Memory) loadRecords(ctx context.Context, tx pgx.Tx, list []*candidate) error {
	if len(list) == 0 {
		return nil
	}
	bySeq := make(map[int64]*candidate, len(list))
	seqs := make([]int64, len(list))
	for i, c := range list {
		bySeq[c.seq] = c
		seqs[i] = c.seq
	}
	rows, err := tx.Query(ctx, `SELECT `+recordColumns+`, r.seq,
		array(SELECT c.text FROM chunks c WHERE c.seq = r.seq ORDER BY c.ord)
		FROM records r JOIN namespaces n ON n.id = r.ns WHERE r.seq = ANY($1)`, seqs)
	if err != nil {
		return m.wrap(ctx, "query: records", err)
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var r memory.Record
		var kids []string
		if err := scanRecord(rows, &r, &seq, &kids); err != nil {
			return m.wrap(ctx, "query: records", err)
		}
		bySeq[seq].kids = kids
		bySeq[seq].rec = r
	}
	return m.wrap(ctx, "query: records", rows.Err())
}

// fuseAll computes every candidate's score with ranking.Fuse, the rule
// memory/longterm uses: a single-path search reports that path's own
// score (the cosine; BM25 relative to the query's best), Hybrid fuses the
// two as the options say (margin or score fusion).
func (m *Memory) fuseAll(mode memory.Mode, list []*candidate) {
	f := ranking.Fusion{Kind: m.opts.fusion, VectorWeight: m.opts.vectorWeight, KeywordWeight: m.opts.keywordWeight}
	paths := make([]ranking.Paths, len(list))
	for i, c := range list {
		paths[i] = c.Paths
	}
	for i, s := range ranking.Fuse(mode, f, paths) {
		list[i].score = s
	}
}

// hits turns candidates into results with snippets, as memory/longterm's
// hits does.
func (m *Memory) hits(text string, list []*candidate) []memory.Hit {
	hits := make([]memory.Hit, len(list))
	qterms := map[string]bool{}
	for _, t := range m.tok.Tokens(text) {
		qterms[t] = true
	}
	for i, c := range list {
		children := c.kids
		matched := ranking.Snippets(m.tok, qterms, children, c.HasKW, c.vecKids)
		snips := make([]string, 0, len(matched))
		for _, ci := range matched {
			if ci < len(children) {
				snips = append(snips, children[ci])
			}
		}
		r := &c.rec
		hits[i] = memory.Hit{
			ID: r.ID, Text: r.Text, Score: float32(c.score), Time: r.Time, Snippets: snips,
			Namespace: r.Namespace, Speaker: r.Speaker, Tags: slices.Clone(r.Tags),
			VectorRank: c.VecRank, KeywordRank: c.KWRank,
		}
	}
	return hits
}
