package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	pgv "github.com/pgvector/pgvector-go"
)

// addRecordSQL creates add_record as migration 8 defined it (migration 9
// replaces it: addRecordSQL9), the write of one new
// record in one statement: it creates and locks the record's namespace,
// links the record to the namespace's newest one (neighbourGap, given as
// p_gap seconds), inserts the record, its chunks (their vectors one after
// the other in one vector, p_dim each) and postings, and updates its episode,
// speaker count and the namespace's statistics, as commitOnce does. It
// returns the record's seq, or 0 having written nothing when the id is
// stored already (a replacement) or the write would leave p_merge records
// in the namespace's tail (which commitOnce packs into blocks); the
// caller then writes the record as commitOnce does. A PL/pgSQL function
// runs its statements with a fresh snapshot each (it is VOLATILE), so the
// newest record read after the namespace's lock is the one the lock's
// previous holder committed.
const addRecordSQL = `
-- Indexes a load dropped (load.go): the statement that builds each again
-- and, for a constraint's index, the one that makes it the constraint's.
-- The next open builds those a failed load left.
CREATE TABLE IF NOT EXISTS deferred_indexes (
	name       text PRIMARY KEY,
	def        text NOT NULL,
	constraint_def text
);
CREATE OR REPLACE FUNCTION add_record(p_id text, p_ns text, p_text text, p_time timestamptz, p_speaker text, p_tags text[], p_text_len int,
	p_from timestamptz, p_until timestamptz, p_supersedes text, p_superseded_by text, p_seen int, p_last_seen timestamptz, p_key bigint,
	p_terms text[], p_tfs int[], p_starts int[], p_ends int[], p_texts text[], p_vecs vector, p_dim int, p_pending boolean,
	p_gap float8, p_merge bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	nsr record;
	s bigint;
	prev bigint;
	ep bigint;
	last_ep bigint;
	fresh boolean;
BEGIN
	INSERT INTO namespaces (name) VALUES (p_ns) ON CONFLICT (name) DO NOTHING;
	SELECT id, last_seq, coalesce(last_time, 'epoch') AS last_time, tail_docs INTO nsr FROM namespaces WHERE name = p_ns FOR UPDATE;
	IF nsr.tail_docs + 1 >= p_merge OR EXISTS (SELECT FROM records WHERE id = p_id) THEN
		RETURN 0;
	END IF;
	s := nextval(pg_get_serial_sequence('records', 'seq'));
	ep := s;
	IF nsr.last_seq IS NOT NULL THEN
		SELECT episode INTO last_ep FROM records WHERE seq = nsr.last_seq;
		IF NOT FOUND THEN
			RAISE EXCEPTION 'namespace %: newest record % not found', nsr.id, nsr.last_seq;
		END IF;
		IF abs(extract(epoch FROM p_time - nsr.last_time)) <= p_gap THEN
			prev := nsr.last_seq;
			ep := last_ep;
		END IF;
	END IF;
	INSERT INTO records (seq, id, ns, text, time, speaker, tags, text_len, prev_seq, episode,
		valid_from, valid_until, supersedes, superseded_by, seen, last_seen, text_key)
	VALUES (s, p_id, nsr.id, p_text, p_time, p_speaker, p_tags, p_text_len, prev, ep,
		p_from, p_until, p_supersedes, p_superseded_by, p_seen, p_last_seen, p_key);
	INSERT INTO chunks (seq, ns, time, ord, start_byte, end_byte, text, embedding, valid_from, valid_until, pending)
	SELECT s, nsr.id, p_time, u.o - 1, u.st, u.en, u.tx, subvector(p_vecs, (u.o::int - 1) * p_dim + 1, p_dim), p_from, p_until, p_pending
	FROM unnest(p_starts, p_ends, p_texts) WITH ORDINALITY AS u(st, en, tx, o);
	INSERT INTO postings (ns, term, seq, tf, dl, episode)
	SELECT nsr.id, u.t, s, u.f, p_text_len, ep FROM unnest(p_terms, p_tfs) AS u(t, f);
	INSERT INTO episodes (ns, episode, len, records) VALUES (nsr.id, ep, p_text_len, 1)
	ON CONFLICT (ns, episode) DO UPDATE SET len = episodes.len + EXCLUDED.len, records = episodes.records + 1
	RETURNING xmax = 0 INTO fresh;
	IF p_speaker <> '' THEN
		INSERT INTO speakers (ns, speaker, n) VALUES (nsr.id, p_speaker, 1)
		ON CONFLICT (ns, speaker) DO UPDATE SET n = speakers.n + 1;
	END IF;
	UPDATE namespaces SET text_docs = text_docs + 1, text_len = text_len + p_text_len, last_seq = s, last_time = p_time,
		episode_docs = episode_docs + CASE WHEN fresh THEN 1 ELSE 0 END, tail_docs = tail_docs + 1,
		ended = ended + CASE WHEN p_until IS NULL THEN 0 ELSE 1 END, latest = greatest(latest, coalesce(p_from, p_time))
	WHERE id = nsr.id;
	RETURN s;
END
$$;`

// addRecordSQL9 is add_record as migration 9 defines it: the same call
// as addRecordSQL's, which keeps the record's terms and their counts in
// its row (records.terms, records.tfs) instead of a postings row per term.
const addRecordSQL9 = `
CREATE OR REPLACE FUNCTION add_record(p_id text, p_ns text, p_text text, p_time timestamptz, p_speaker text, p_tags text[], p_text_len int,
	p_from timestamptz, p_until timestamptz, p_supersedes text, p_superseded_by text, p_seen int, p_last_seen timestamptz, p_key bigint,
	p_terms text[], p_tfs int[], p_starts int[], p_ends int[], p_texts text[], p_vecs vector, p_dim int, p_pending boolean,
	p_gap float8, p_merge bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	nsr record;
	s bigint;
	prev bigint;
	ep bigint;
	last_ep bigint;
	fresh boolean;
BEGIN
	INSERT INTO namespaces (name) VALUES (p_ns) ON CONFLICT (name) DO NOTHING;
	SELECT id, last_seq, coalesce(last_time, 'epoch') AS last_time, tail_docs INTO nsr FROM namespaces WHERE name = p_ns FOR UPDATE;
	IF nsr.tail_docs + 1 >= p_merge OR EXISTS (SELECT FROM records WHERE id = p_id) THEN
		RETURN 0;
	END IF;
	s := nextval(pg_get_serial_sequence('records', 'seq'));
	ep := s;
	IF nsr.last_seq IS NOT NULL THEN
		SELECT episode INTO last_ep FROM records WHERE seq = nsr.last_seq;
		IF NOT FOUND THEN
			RAISE EXCEPTION 'namespace %: newest record % not found', nsr.id, nsr.last_seq;
		END IF;
		IF abs(extract(epoch FROM p_time - nsr.last_time)) <= p_gap THEN
			prev := nsr.last_seq;
			ep := last_ep;
		END IF;
	END IF;
	INSERT INTO records (seq, id, ns, text, time, speaker, tags, text_len, prev_seq, episode,
		valid_from, valid_until, supersedes, superseded_by, seen, last_seen, text_key, terms, tfs)
	VALUES (s, p_id, nsr.id, p_text, p_time, p_speaker, p_tags, p_text_len, prev, ep,
		p_from, p_until, p_supersedes, p_superseded_by, p_seen, p_last_seen, p_key, p_terms, p_tfs);
	INSERT INTO chunks (seq, ns, time, ord, start_byte, end_byte, text, embedding, valid_from, valid_until, pending)
	SELECT s, nsr.id, p_time, u.o - 1, u.st, u.en, u.tx, subvector(p_vecs, (u.o::int - 1) * p_dim + 1, p_dim), p_from, p_until, p_pending
	FROM unnest(p_starts, p_ends, p_texts) WITH ORDINALITY AS u(st, en, tx, o);
	INSERT INTO episodes (ns, episode, len, records) VALUES (nsr.id, ep, p_text_len, 1)
	ON CONFLICT (ns, episode) DO UPDATE SET len = episodes.len + EXCLUDED.len, records = episodes.records + 1
	RETURNING xmax = 0 INTO fresh;
	IF p_speaker <> '' THEN
		INSERT INTO speakers (ns, speaker, n) VALUES (nsr.id, p_speaker, 1)
		ON CONFLICT (ns, speaker) DO UPDATE SET n = speakers.n + 1;
	END IF;
	UPDATE namespaces SET text_docs = text_docs + 1, text_len = text_len + p_text_len, last_seq = s, last_time = p_time,
		episode_docs = episode_docs + CASE WHEN fresh THEN 1 ELSE 0 END, tail_docs = tail_docs + 1,
		ended = ended + CASE WHEN p_until IS NULL THEN 0 ELSE 1 END, latest = greatest(latest, coalesce(p_from, p_time))
	WHERE id = nsr.id;
	RETURN s;
END
$$;`

// addRecordSQL12 is add_record as migration 12 defines it: the same call
// and the same writes as addRecordSQL9's in fewer statements, each of
// which costs the server an executor's start (pgbench of the call alone,
// 3 interleaved runs each: 0.40 → 0.35 ms with fsync off, 0.56 → 0.54 ms
// with it on). The namespace's row is read (and locked) first and only
// inserted when it is missing, where an insert that does nothing took
// as long as the read; a record whose id is stored already is found by
// its insert (ON CONFLICT: nothing is written, and the call returns 0 as
// before) instead of a query before it; the sequence is named, not looked
// up in the catalog on every call (bigserial's name for records.seq:
// the migration checks that it exists).
const addRecordSQL12 = `
SELECT 'records_seq_seq'::regclass;
CREATE OR REPLACE FUNCTION add_record(p_id text, p_ns text, p_text text, p_time timestamptz, p_speaker text, p_tags text[], p_text_len int,
	p_from timestamptz, p_until timestamptz, p_supersedes text, p_superseded_by text, p_seen int, p_last_seen timestamptz, p_key bigint,
	p_terms text[], p_tfs int[], p_starts int[], p_ends int[], p_texts text[], p_vecs vector, p_dim int, p_pending boolean,
	p_gap float8, p_merge bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	nsr record;
	s bigint;
	prev bigint;
	ep bigint;
	last_ep bigint;
	fresh boolean;
BEGIN
	SELECT id, last_seq, coalesce(last_time, 'epoch') AS last_time, tail_docs INTO nsr FROM namespaces WHERE name = p_ns FOR UPDATE;
	IF NOT FOUND THEN
		INSERT INTO namespaces (name) VALUES (p_ns) ON CONFLICT (name) DO NOTHING;
		SELECT id, last_seq, coalesce(last_time, 'epoch') AS last_time, tail_docs INTO nsr FROM namespaces WHERE name = p_ns FOR UPDATE;
	END IF;
	IF nsr.tail_docs + 1 >= p_merge THEN
		RETURN 0;
	END IF;
	s := nextval('records_seq_seq'::regclass);
	ep := s;
	IF nsr.last_seq IS NOT NULL THEN
		SELECT episode INTO last_ep FROM records WHERE seq = nsr.last_seq;
		IF NOT FOUND THEN
			RAISE EXCEPTION 'namespace %: newest record % not found', nsr.id, nsr.last_seq;
		END IF;
		IF abs(extract(epoch FROM p_time - nsr.last_time)) <= p_gap THEN
			prev := nsr.last_seq;
			ep := last_ep;
		END IF;
	END IF;
	INSERT INTO records (seq, id, ns, text, time, speaker, tags, text_len, prev_seq, episode,
		valid_from, valid_until, supersedes, superseded_by, seen, last_seen, text_key, terms, tfs)
	VALUES (s, p_id, nsr.id, p_text, p_time, p_speaker, p_tags, p_text_len, prev, ep,
		p_from, p_until, p_supersedes, p_superseded_by, p_seen, p_last_seen, p_key, p_terms, p_tfs)
	ON CONFLICT (id) DO NOTHING;
	IF NOT FOUND THEN
		RETURN 0;
	END IF;
	INSERT INTO chunks (seq, ns, time, ord, start_byte, end_byte, text, embedding, valid_from, valid_until, pending)
	SELECT s, nsr.id, p_time, u.o - 1, u.st, u.en, u.tx, subvector(p_vecs, (u.o::int - 1) * p_dim + 1, p_dim), p_from, p_until, p_pending
	FROM unnest(p_starts, p_ends, p_texts) WITH ORDINALITY AS u(st, en, tx, o);
	INSERT INTO episodes (ns, episode, len, records) VALUES (nsr.id, ep, p_text_len, 1)
	ON CONFLICT (ns, episode) DO UPDATE SET len = episodes.len + EXCLUDED.len, records = episodes.records + 1
	RETURNING xmax = 0 INTO fresh;
	IF p_speaker <> '' THEN
		INSERT INTO speakers (ns, speaker, n) VALUES (nsr.id, p_speaker, 1)
		ON CONFLICT (ns, speaker) DO UPDATE SET n = speakers.n + 1;
	END IF;
	UPDATE namespaces SET text_docs = text_docs + 1, text_len = text_len + p_text_len, last_seq = s, last_time = p_time,
		episode_docs = episode_docs + CASE WHEN fresh THEN 1 ELSE 0 END, tail_docs = tail_docs + 1,
		ended = ended + CASE WHEN p_until IS NULL THEN 0 ELSE 1 END, latest = greatest(latest, coalesce(p_from, p_time))
	WHERE id = nsr.id;
	RETURN s;
END
$$;`

// maxVectorDim is the most dimensions pgvector's vector type holds: a
// record whose chunks' vectors add up to more is written by commitOnce.
const maxVectorDim = 16000

// fastBatchRecords is the most records a write sends through add_record
// (one call each, in one transaction). A call costs the server more than
// a record costs commitOnce's COPY, and commitOnce's dozen statements
// cost a fixed amount: BenchmarkSmallBatches measured add_record faster at
// 2 records (p50 2.5 vs 4.9 ms), about even at 8 (11.0 vs 12.5 ms) and
// commitOnce faster at 32 (26 vs 54 ms). A variable so that tests can
// change it.
var fastBatchRecords = 8

// fastWrite reports whether the write of batch (deduplicated) may go
// through add_record: at most fastBatchRecords records, all of one
// namespace (whose row each call locks: one namespace, one lock order),
// each with an id (not a fact to deduplicate) and superseding nothing;
// neither a load's batch nor one that may rebuild the HNSW index
// (WithBulkLoad).
func (m *Memory) fastWrite(batch []*prepared, load bool) bool {
	if len(batch) == 0 || len(batch) > fastBatchRecords || load ||
		!m.opts.exact && m.opts.bulkRecords > 0 && len(batch) >= m.opts.bulkRecords {
		return false
	}
	for _, p := range batch {
		if p.dedup || p.rec.Supersedes != "" || p.rec.Namespace != batch[0].rec.Namespace || len(p.chunks)*m.dim > maxVectorDim {
			return false
		}
	}
	return true
}

// addRecordCall calls add_record with addRecordArgs' arguments.
const addRecordCall = `SELECT add_record($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24)`

// addRecordArgs returns add_record's arguments for p.
func (m *Memory) addRecordArgs(p *prepared, pending bool) []any {
	r := &p.rec
	terms, tfs := p.termList, p.tfs
	starts := make([]int32, len(p.chunks))
	ends := make([]int32, len(p.chunks))
	texts := make([]string, len(p.chunks))
	vecs := make([]float32, 0, len(p.chunks)*m.dim)
	for j, ch := range p.chunks {
		starts[j], ends[j], texts[j] = int32(ch.Start), int32(ch.End), ch.Text
		vecs = append(vecs, p.vecs[j]...)
	}
	tags := r.Tags
	if tags == nil {
		tags = []string{}
	}
	key := p.textKey
	return []any{r.ID, r.Namespace, r.Text, r.Time, r.Speaker, tags, int32(p.textLen),
		nullTime(r.ValidFrom), nullTime(r.ValidUntil), r.Supersedes, r.SupersededBy, int32(r.Seen), nullTime(r.LastSeen), key,
		terms, tfs, starts, ends, texts, pgv.NewVector(vecs), int32(m.dim), pending,
		neighbourGap.Seconds(), mergeRecords.Load()}
}

// addFast writes batch (fastWrite) through add_record: one record in one
// statement (its own transaction), more in one transaction whose calls go
// to the server in one round trip. It reports whether it did (false: some
// record needs commitOnce, and nothing was written) and how many chunks it
// wrote pending.
func (m *Memory) addFast(ctx context.Context, batch []*prepared) (bool, int, error) {
	chunks := 0
	for _, p := range batch {
		chunks += len(p.chunks)
	}
	pending := !m.opts.exact && m.indexed.Load() && chunks <= int(pendingWriteChunks.Load()) && m.pendingEst.Load() < m.pendingCap()
	c, err := m.acquire(ctx)
	if err != nil {
		return false, 0, m.wrap(ctx, "add", err)
	}
	defer c.Release()
	if len(batch) == 1 {
		var seq int64
		if err := c.QueryRow(ctx, addRecordCall, m.addRecordArgs(batch[0], pending)...).Scan(&seq); err != nil {
			return false, 0, m.wrap(ctx, "add", err)
		}
		if seq == 0 {
			return false, 0, nil
		}
	} else {
		done, err := addInTx(ctx, c, batch, func(p *prepared) []any { return m.addRecordArgs(p, pending) })
		if err != nil || !done {
			return false, 0, m.wrap(ctx, "add", err)
		}
	}
	if !pending {
		return true, 0, nil
	}
	return true, chunks, nil
}

// addInTx calls add_record for each of batch in one transaction on c,
// sending the calls in one round trip, and commits unless a call wrote
// nothing (then it rolls back and reports false).
func addInTx(ctx context.Context, c *pgxpool.Conn, batch []*prepared, args func(*prepared) []any) (bool, error) {
	tx, err := c.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // after Commit it is a no-op
	var b pgx.Batch
	for _, p := range batch {
		b.Queue(addRecordCall, args(p)...)
	}
	br := tx.SendBatch(ctx, &b)
	done := true
	for range batch {
		var seq int64
		if err := br.QueryRow().Scan(&seq); err != nil {
			br.Close()
			return false, err
		}
		done = done && seq != 0
	}
	if err := br.Close(); err != nil || !done {
		return false, err
	}
	return true, tx.Commit(ctx)
}
