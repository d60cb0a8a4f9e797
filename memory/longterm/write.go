package longterm

import (
	"context"
	"fmt"
	"sync"

	"github.com/agentmem/agentmem/chunk"
	"github.com/agentmem/agentmem/embed"
	"github.com/agentmem/agentmem/internal/parallel"
	"github.com/agentmem/agentmem/internal/recordid"
	"github.com/agentmem/agentmem/keyword"
	"github.com/agentmem/agentmem/memory"
	"github.com/agentmem/agentmem/vdb"
)

// Update stores segment as a record in DefaultNamespace with a generated id
// and the current time. It implements memory.Memory. A segment is a round
// of conversation, an event: one that repeats an earlier one's text is
// stored again (Add of a record without an ID is not).
func (m *Memory) Update(ctx context.Context, segment string) error {
	_, err := m.Add(ctx, Record{ID: recordid.New(), Text: segment})
	return err
}

// Add stores rec and returns its id. When Add returns nil the record is in
// the log and synced (unless WithoutSync), and searchable. A record
// without an ID is a fact, stored once: if a current record of its
// namespace holds the same text (memory.NormalText), Add returns that
// record's id and stores nothing new (Remember says which happened).
func (m *Memory) Add(ctx context.Context, rec Record) (string, error) {
	ids, err := m.AddBatch(ctx, []Record{rec})
	if err != nil {
		return "", err
	}
	return ids[0], nil
}

// prepared is a validated record with its children, before id assignment.
type prepared struct {
	rec    Record
	chunks []chunk.Chunk
	vecs   [][]float32
	// terms are the record's indexed text (header and text) tokenized and
	// counted for the turn index, in the parallel prepare phase, when its
	// namespace's index is built; nil otherwise (added tokenizes then, if
	// needed).
	terms *keyword.Counts
	// code is vecs as the log writes them, encoded beside the other
	// records' before the commit, for a store on disk.
	code vectorCode
	// dedup: the record came without an ID, so it is a fact that is not
	// stored twice (Remember); dupOf is the stored record it turned out to
	// repeat, set when it commits.
	dedup bool
	dupOf string
	// nearOf is the near-duplicate the record merges into, if it is
	// still current when it commits (engine.NearMerge); similar are the
	// near-duplicates found for it.
	nearOf  string
	similar []memory.Similar
}

// embedBatch is how many child texts go to the embedder in one call.
const embedBatch = 512

// AddBatch stores the records in order and returns their ids. The batch is
// validated and embedded before anything is written: on a validation or
// embedding error nothing is stored (the error names the record's index). The
// batch is written to the log with one fsync (group commit).
func (m *Memory) AddBatch(ctx context.Context, recs []Record) ([]string, error) {
	outs, err := m.write(ctx, recs)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(outs))
	for i, o := range outs {
		ids[i] = o.ID
	}
	return ids, nil
}

// written is what addBatch did: the records' ids and their prepared
// forms, which say which ones were duplicates.
type written struct {
	ids   []string
	preps []prepared
}

// addBatch is AddBatch, which also returns the prepared records.
func (m *Memory) addBatch(ctx context.Context, recs []Record) (written, error) {
	if err := m.writable(); err != nil {
		return written{}, err
	}
	if len(recs) == 0 {
		return written{}, nil
	}
	for i := range recs {
		if err := m.checkSize(&recs[i]); err != nil {
			if len(recs) > 1 {
				return written{}, fmt.Errorf("record %d: %w", i, err)
			}
			return written{}, err
		}
	}
	preps, release, err := m.prepareAll(ctx, recs)
	defer release()
	if err != nil {
		return written{}, err
	}
	if err := m.near(ctx, preps); err != nil {
		return written{}, err
	}
	if m.dir != "" {
		parallel.Parts(len(preps), func(i int) int { return len(preps[i].vecs) * m.dim }, parallelCodes, func(lo, hi int) {
			var buf []byte // one buffer for the part's codes
			for i := lo; i < hi; i++ {
				start := len(buf)
				code := encodeVectors(buf, m.dim, preps[i].vecs)
				buf = code.b
				code.b = buf[start:len(buf):len(buf)]
				preps[i].code = code
			}
		})
	}
	ids, err := m.commit(ctx, preps)
	return written{ids: ids, preps: preps}, err
}

// parallelCodes is the least number of vector entries for which AddBatch
// gives a goroutine a share of encoding the log's codes.
const parallelCodes = 4 << 10

// embedChunks embeds the chunks of preps (each with its record's header)
// and sets each one's vecs: into a pooled buffer (vecBuf) when the
// embedder writes into one, which release hands back once nothing refers
// to the vectors.
func (m *Memory) embedChunks(ctx context.Context, preps []prepared) (release func(), err error) {
	var texts []string
	for i := range preps {
		header := m.header(&preps[i].rec)
		for _, c := range preps[i].chunks {
			texts = append(texts, header+c.Text)
		}
	}
	buf, release := m.vecBuf(len(texts) * m.dim)
	vecs, err := embed.EmbedAllInto(ctx, m.emb, buf, texts, embedBatch)
	if err != nil {
		release()
		return noRelease, fmt.Errorf("longterm: %w", err)
	}
	for i, v := range vecs {
		if err := vdb.CheckVector(v, m.dim); err != nil {
			release()
			return noRelease, fmt.Errorf("longterm: embedder %s, text %q: %w", m.emb.Name(), texts[i], err)
		}
	}
	k := 0
	for i := range preps {
		n := len(preps[i].chunks)
		preps[i].vecs = vecs[k : k+n]
		k += n
	}
	return release, nil
}

func noRelease() {}

// maxPooledFloats is the largest embedding buffer AddBatch reuses (16 MiB):
// a larger batch's vectors are allocated, and the allocation is small
// beside the batch's own work.
const maxPooledFloats = 1 << 22

// vecBufs holds *[]float32 buffers that AddBatch embeds into (when the
// embedder is an embed.IntoEmbedder) and hands back once the vectors are
// copied into the index and the log. One pool for every Memory: a program
// that opens memories for short jobs reuses them too.
var vecBufs sync.Pool

// vecBuf returns a reused buffer of n floats for a batch's vectors, and
// the function that hands it back to vecBufs, to call once nothing refers
// to the vectors (the vector index and the log copy them). It returns no
// buffer (and a release that does nothing) when the embedder cannot write
// into one or n is larger than maxPooledFloats.
func (m *Memory) vecBuf(n int) (buf []float32, release func()) {
	if _, ok := m.emb.(embed.IntoEmbedder); !ok || n > maxPooledFloats {
		return nil, noRelease
	}
	b, _ := vecBufs.Get().(*[]float32)
	if b == nil {
		b = new([]float32)
	}
	if cap(*b) < n {
		*b = make([]float32, n, min(max(n, 2*cap(*b)), maxPooledFloats))
	}
	*b = (*b)[:n]
	return *b, func() { vecBufs.Put(b) }
}

// Forget removes the record with the given id and its children from both
// indexes and, for a memory on disk, appends a forget record to the log
// (Compact then drops both from the file). An unknown id is ErrNotFound.
func (m *Memory) Forget(ctx context.Context, id string) error {
	if err := m.writable(); err != nil {
		return err
	}
	m.wmu.Lock()
	defer m.wmu.Unlock()
	if err := m.Err(); err != nil {
		return err
	}
	m.mu.RLock()
	closed := m.closed
	_, ok := m.parents[id]
	m.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	if !ok {
		return fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	// A done context stops the forget before it is logged; once logged,
	// it is applied whatever the context says, so that the indexes agree
	// with the log (and with the snapshot Close writes).
	if err := ctx.Err(); err != nil {
		return err
	}
	if m.log != nil {
		if _, err := m.log.append([][]byte{encodeForget(nil, id)}, m.opts.sync); err != nil {
			return err
		}
	}
	m.mu.Lock()
	m.applied++
	err := m.remove(context.WithoutCancel(ctx), m.parents[id])
	m.mu.Unlock()
	if err != nil {
		return err
	}
	m.maybeSnapshot(ctx)
	return nil
}
